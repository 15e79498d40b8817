package dev.usnet.tools.compare;

import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tap.BusyPollSelectStrategy;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import dev.usnet.tools.run.Daemon;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code usnet compare --clock real}: each variant as {@code usnet run --duration S} runs it, the daemon on
 * event loops in real time, one after another. A signal that ends the JVM stops the run under way, so what it
 * created (kernel namespaces too) is removed as {@code usnet run} removes it.
 */
final class RealClockRun implements CompareRunner.RunOne, AutoCloseable {
    private final long durationNanos;
    private final Set<Daemon> live = ConcurrentHashMap.newKeySet();
    private final Thread hook;

    RealClockRun(long durationNanos) {
        this.durationNanos = durationNanos;
        hook = new Thread(() -> live.forEach(Daemon::stop), "usnet-compare-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    @Override
    public CompareRunner.Outcome run(CompareRunner.Planned p, Path dir) throws InterruptedException {
        long wall0 = System.nanoTime();
        var spec = p.spec().withSeed(p.seed());
        // As usnet run sets them: event loops for up to 4 namespaces, its busy polling and warm-up (TAP/pcap only).
        Daemon d = Daemon.start(spec, new Daemon.Options(dir, Math.max(1, Math.min(spec.namespaces().size(), 4)),
                BusyPollSelectStrategy.DEFAULT_MICROS, Daemon.Options.DEFAULT_WARM_UP_FRAMES), Daemon.Providers.forThisBuild());
        live.add(d);
        try {
            List<NetStack> stacks = d.topology().namespaces().stream().map(NetNamespace::stack).toList();
            long t0 = System.nanoTime();
            Thread.sleep(durationNanos / 1_000_000, (int) (durationNanos % 1_000_000));
            Daemon.Summary s = d.stop();
            long ran = System.nanoTime() - t0;
            Results r = d.results();
            if (r == null) {
                throw new IllegalStateException("the run gave no results" + (s.errors().isEmpty() ? ""
                        : ": " + String.join("; ", s.errors())));
            }
            // The namespaces are gone, but their stacks' path histograms are still there to copy.
            return new CompareRunner.Outcome(r, RunHistograms.collect(r, d.apps().list(), stacks),
                    CompareRunner.Outcome.cwnd(d.apps().list(), r), ran, System.nanoTime() - wall0);
        } finally {
            d.stop();
            live.remove(d);
        }
    }

    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException ignored) {
            // Already shutting down: the hook is running.
        }
    }
}
