package dev.usnet.tools.compare;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.TcpApp;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.run.VirtualRun;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a comparison's variants in virtual time on {@code jobs} threads. Each run has its own scheduler,
 * namespaces and random sources, and nothing in the stack keeps mutable static state, so a run's simulated
 * results do not depend on which thread ran it or what ran beside it: only {@code measured} does.
 */
final class CompareRunner {
    private CompareRunner() {}

    /** A variant ready to run: its checked topology and the seed it runs with. */
    record Planned(Variant variant, TopologySpec spec, long seed) {}

    /**
     * What one run gave: its results, the histograms behind their percentiles, and how long it ran on its own
     * clock and on the wall clock.
     */
    record Outcome(Results results, RunHistograms histograms, Map<String, ComparePlots.CwndSeries> cwnd,
                   long clockNanos, long wallNanos) {
        static Outcome of(VirtualRun.RunResult r) {
            return new Outcome(r.results(), r.histograms(), cwnd(r.apps(), r.results()), r.virtualNanos(), r.wallNanos());
        }

        /**
         * Per TCP app (by its results name) whose entry has {@code trace:}, its client's congestion window
         * against milliseconds since the client started; the trace itself is not kept.
         */
        static Map<String, ComparePlots.CwndSeries> cwnd(List<App> apps, Results results) {
            Map<String, ComparePlots.CwndSeries> out = new LinkedHashMap<>();
            for (int i = 0; i < apps.size(); i++) {
                if (apps.get(i) instanceof TcpApp t && t.trace() != null && t.trace().rows() > 0) {
                    String name = (String) results.apps().get(i).get("name");
                    TcpTrace tr = t.trace();
                    double[] ms = new double[tr.rows()];
                    long[] cwnd = new long[tr.rows()];
                    for (int k = 0; k < tr.rows(); k++) {
                        ms[k] = (tr.timeNanos(k) - t.startNanos()) / 1e6;
                        cwnd[k] = tr.cwnd(k);
                    }
                    out.put(name, new ComparePlots.CwndSeries(name, ms, cwnd));
                }
            }
            return out;
        }

        /** Seconds on the run's clock per wall second. */
        double speed() {
            return wallNanos == 0 ? Double.POSITIVE_INFINITY : (double) clockNanos / wallNanos;
        }
    }

    /** How one planned variant is run, writing its files into {@code dir}. */
    @FunctionalInterface
    interface RunOne {
        Outcome run(Planned p, Path dir) throws Exception;
    }

    /** In virtual time, for {@code durationNanos} on the virtual clock. */
    static RunOne virtual(long durationNanos) {
        return (p, dir) -> Outcome.of(VirtualRun.run(p.spec(), new VirtualRun.Options(durationNanos, p.seed(), dir)));
    }

    /** A finished run. */
    record Run(Planned planned, Outcome result) {}

    /** A run that threw; the others are not started. */
    static final class RunFailed extends RuntimeException {
        final Planned planned;

        RunFailed(Planned planned, Throwable cause) {
            super(cause.getMessage() != null ? cause.getMessage() : cause.toString(), cause);
            this.planned = planned;
        }
    }

    /** Where run {@code p}'s captures go (only a topology with {@code captures:} writes anything there). */
    static Path runDir(Path out, Planned p) {
        return out.resolve("runs").resolve((p.variant().index() + 1) + "-seed" + p.seed());
    }

    /**
     * Runs {@code p} once and drops the result: the JIT compiles the data path on
     * it, so the measured CPU and wall time of the runs that count are not charged with compilation (which
     * would otherwise fall on whichever variants run first). Its captures go to {@code runs/warm-up}.
     */
    static Outcome warmUp(Planned p, RunOne one, Path out) {
        try {
            return one.run(p, out.resolve("runs").resolve("warm-up"));
        } catch (Exception | Error e) {
            throw new RunFailed(p, e);
        }
    }

    /**
     * Runs every planned variant with {@code one} and returns them in plan order,
     * printing one progress line per finished run (with the estimated time left) to {@code progress}.
     * Throws {@link RunFailed} for the first run that threw, after the runs under way have ended.
     */
    static List<Run> run(List<Planned> plan, int jobs, RunOne one, Path out, PrintWriter progress)
            throws InterruptedException {
        Run[] done = new Run[plan.size()];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        AtomicReference<RunFailed> failed = new AtomicReference<>();
        long t0 = System.nanoTime();
        Runnable worker = () -> {
            for (int i; failed.get() == null && (i = next.getAndIncrement()) < plan.size(); ) {
                Planned p = plan.get(i);
                Outcome r;
                try {
                    r = one.run(p, runDir(out, p));
                } catch (Exception | Error e) {
                    // Recorded, not lost with the thread: the others stop taking runs and the caller says which failed.
                    failed.compareAndSet(null, new RunFailed(p, e));
                    return;
                }
                done[i] = new Run(p, r);
                int n = finished.incrementAndGet();
                long elapsed = System.nanoTime() - t0;
                double eta = elapsed / 1e9 / n * (plan.size() - n);
                synchronized (progress) {
                    progress.printf(Locale.ROOT, "usnet: compare: %d/%d done: #%d %s, seed %d: %.1f s wall (%.1fx)%s%n",
                            n, plan.size(), p.variant().group() + 1, p.variant().label(), p.seed(), r.wallNanos() / 1e9,
                            r.speed(), n == plan.size() ? "" : String.format(Locale.ROOT, "; ETA %.0f s", Math.ceil(eta)));
                    progress.flush();
                }
            }
        };
        int n = Math.min(jobs, plan.size());
        List<Thread> threads = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            // Netty recycles packet holders only on its FastThreadLocalThreads (as usnet-main is one).
            Thread t = new FastThreadLocalThread(worker, "usnet-compare-" + j);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failed.get() != null) {
            throw failed.get();
        }
        return new ArrayList<>(Arrays.asList(done));
    }
}
