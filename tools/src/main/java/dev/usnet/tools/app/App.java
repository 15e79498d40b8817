package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.ns.NetNamespace;
import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.Task;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.cli.UsageException;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.HdrHistogram.Histogram;

/** One running app. Counters may be read from any thread. */
public abstract class App {
    final String ns;
    final NetStack stack;
    volatile boolean running;
    /** The namespace, for the process the app runs as; null for an app built outside a topology. */
    NetNamespace netns;
    /** The process the app runs as, in its namespace's pid namespaces (usnet.pidns.*); null before it starts. */
    private volatile Task process;
    /** Its {@code start:}: nanoseconds after the run's start at which it (a TCP app's client) starts. */
    long startOffsetNanos;
    /** The pending delayed start, on the namespace thread; null when there is none. */
    private Timeout startTimer;
    /** The app was stopped before its delayed start came: it never starts. Namespace thread. */
    private boolean startCancelled;

    public App(String ns, NetStack stack) {
        this.ns = ns;
        this.stack = stack;
    }

    public String namespace() {
        return ns;
    }

    /**
     * The process the app ran (or runs) as: its pids at every level stay readable after it exited. Null before
     * the app started.
     */
    public Task process() {
        return process;
    }

    /** The app's kind as the topology file names it ({@code ping}, {@code spawn}, ...). */
    public abstract String kind();

    /** Starts the app's process in its namespace's pid namespaces; refused with the app's label when no pid is left. */
    public void startProcess() {
        if (netns == null || process != null) {
            return;
        }
        process = startProcessIn(netns, kind(), label());
    }

    public static Task startProcessIn(NetNamespace netns, String comm, String label) {
        try {
            return netns.processes().spawn(comm);
        } catch (PidAllocException e) {
            throw new UsageException(label + ": cannot start its process: " + e.getMessage(), e);
        }
    }

    /** The app's process exits (its namespace's init reaps it). */
    public void endProcess() {
        Task p = process;
        if (p != null) {
            p.exit(0);
        }
    }

    /** Starts on the namespace thread. */
    public abstract void start();

    /**
     * On the namespace thread: runs {@code start} now, or, with a {@code start:} offset, schedules it that long
     * from now on the namespace's scheduler (the run's start: apps start before the clock runs), in either clock.
     */
    public final void startAfterOffset(Runnable start) {
        if (startOffsetNanos <= 0) {
            start.run();
            return;
        }
        startTimer = stack.scheduler().schedule(() -> {
            startTimer = null;
            if (!startCancelled) {
                start.run();
            }
        }, startOffsetNanos);
    }

    /**
     * On the namespace thread: a start still pending is called off (the run ends before it came). Returns
     * whether one was: the app never started and has nothing to stop.
     */
    public final boolean cancelPendingStart() {
        if (startTimer == null) {
            return false;
        }
        startTimer.cancel();
        startTimer = null;
        startCancelled = true;
        return true;
    }

    /** Stops on the namespace thread; releases what it holds. */
    public abstract void stop();

    /** Whether it still runs: started and not stopped yet. */
    public boolean isRunning() {
        return running;
    }

    /** What it counted, in one line: namespace, kind, peer, counters. */
    public abstract String summary();

    /** Whether it did its job; final once the app has stopped. */
    public abstract Outcome outcome();

    /** Which app this is, for a list of those that failed: its namespace, kind and peer. */
    public abstract String label();

    /** The exit summary's lines for this app, each ending in its outcome (one line, unless the app has two ends). */
    public List<String> summaryLines() {
        return List.of(summary() + "; " + outcome().format());
    }

    /** Its place in the start and stop order, as its kind says. */
    public AppKind.Order order() {
        return AppKinds.order(this);
    }

    /** Its peer as results and {@code usnet ctl apps} show it ({@code to:} address and port, {@code :port}); "" when none. */
    public String peer() {
        return "";
    }

    /** What it counted so far (final once it stopped); null while it has no result yet (a TCP app or an MPI job running). */
    public AppCounters counters() {
        return AppCounters.of(0, 0);
    }

    /** Payload bytes moved so far, also while it has no result (a TCP app: what its two ends received). */
    public long bytesSoFar() {
        AppCounters c = counters();
        return c == null ? 0 : c.bytes();
    }

    /**
     * A stage that completes when the app ends by itself (a TCP app: once its client has moved what it was to move,
     * or failed), or null for an app that runs until the run stops it (pings, UDP apps, spawns, MPI jobs). Completes
     * on the namespace thread.
     */
    public CompletionStage<?> completion() {
        return null;
    }

    /** Whether it ends by itself: {@link #completion()} says when. */
    public final boolean endsByItself() {
        return completion() != null;
    }

    /**
     * Whether its {@link #completion()} has come: it ended by itself, or a stop ended it first and its completion said
     * so (with an outcome that is not ok). Never for an app without a completion.
     */
    public boolean completed() {
        CompletionStage<?> c = completion();
        return c != null && c.toCompletableFuture().isDone();
    }

    /**
     * What it measured of the machine running usnet, in nanoseconds, under the {@code measured} key of results that
     * holds it per app ({@code app_cpu_ns}: a TCP app's client's CPU time once it has a result; {@code spawn_ns}: a
     * spawn app's wall-clock time per child); empty when it measures nothing.
     */
    public java.util.Map<String, Long> measuredNanos() {
        return java.util.Map.of();
    }

    /** Whether its outcome is still to come: a TCP app until both ends are done; other kinds judge as they go. */
    public boolean outcomePending() {
        return false;
    }

    /** The namespaces it runs in: its own, and a TCP app's server's. */
    public List<String> namespaces() {
        return List.of(ns);
    }

    /** Adds what only its kind shows to its results.json entry, after the fields every app has. */
    public void putResultFields(java.util.Map<String, Object> m) {
    }

    /** Adds what only its kind shows to its {@code usnet ctl apps} entry, before its peer and counters. */
    public void putLiveFields(java.util.Map<String, Object> m) {
    }

    /**
     * While it has no result ({@link #counters()} null): what it did so far for {@code usnet ctl apps} (a summary,
     * elapsed time, rate so far), {@code bytes} being its {@link #bytesSoFar()}; {@code clock} gives a namespace's time
     * now, or is null.
     */
    public void putProgress(java.util.Map<String, Object> m, long bytes, java.util.function.ToLongFunction<String> clock) {
    }

    /**
     * A histogram to write as .hgrm (a ping's round trips, an rr's transactions, a burst's completions), or null; the
     * same as results' histogram of the app.
     */
    public Histogram histogram() {
        return null;
    }

    /**
     * Whether its histogram is the app's own result, written as .hgrm whatever the namespace's {@code histograms:}
     * says (a TCP app's); else it is written with the namespace's histograms.
     */
    public boolean histogramAlways() {
        return false;
    }

    /** Base name of the .hgrm file. */
    public String histogramName() {
        return null;
    }
}
