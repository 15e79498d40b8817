package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.ns.NetNamespace;
import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.Task;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.UsageException;
import java.util.List;
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

    App(String ns, NetStack stack) {
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
    void startProcess() {
        if (netns == null || process != null) {
            return;
        }
        process = startProcessIn(netns, kind(), label());
    }

    static Task startProcessIn(NetNamespace netns, String comm, String label) {
        try {
            return netns.processes().spawn(comm);
        } catch (PidAllocException e) {
            throw new UsageException(label + ": cannot start its process: " + e.getMessage(), e);
        }
    }

    /** The app's process exits (its namespace's init reaps it). */
    void endProcess() {
        Task p = process;
        if (p != null) {
            p.exit(0);
        }
    }

    /** Starts on the namespace thread. */
    abstract void start();

    /**
     * On the namespace thread: runs {@code start} now, or, with a {@code start:} offset, schedules it that long
     * from now on the namespace's scheduler (the run's start: apps start before the clock runs), in either clock.
     */
    final void startAfterOffset(Runnable start) {
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
    final boolean cancelPendingStart() {
        if (startTimer == null) {
            return false;
        }
        startTimer.cancel();
        startTimer = null;
        startCancelled = true;
        return true;
    }

    /** Stops on the namespace thread; releases what it holds. */
    abstract void stop();

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

    /** A histogram to write as .hgrm, or null. */
    Histogram histogram() {
        return null;
    }

    /** Base name of the .hgrm file. */
    String histogramName() {
        return null;
    }
}
