package dev.usnet.tools.run;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.TopologyBuilder;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A topology in virtual time that its caller drives step by step: built and its apps started by {@link #start},
 * then {@link #runFor} as often as the caller wants to look at it in between (a warm-up, then a measured
 * window: {@code usnet demo --clock virtual}), then {@link #stop}. {@link VirtualRun} is the same in one go.
 * Deterministic for one spec and seed, like it.
 */
public final class VirtualSession implements AutoCloseable {
    private final VirtualScheduler clock;
    private final Topology topology;
    private final List<NetStack> stacks;
    private final Captures captures;
    private final Apps apps;
    private Daemon.Summary summary;

    private VirtualSession(VirtualScheduler clock, Topology topology, Captures captures, Apps apps) {
        this.clock = clock;
        this.topology = topology;
        this.stacks = topology.namespaces().stream().map(NetNamespace::stack).toList();
        this.captures = captures;
        this.apps = apps;
    }

    /**
     * Builds {@code spec} on one virtual clock, opens its captures under {@code outDir} (stamped from the epoch)
     * and starts its apps. Refuses TAP and pcap devices as {@link VirtualRun} does; on a failure half-way,
     * deletes what it built.
     */
    public static VirtualSession start(TopologySpec spec, Path outDir) {
        VirtualRun.refuseExternalDevices(spec);
        VirtualScheduler vs = new VirtualScheduler();
        Topology topo = TopologyBuilder.build(spec, n -> vs, TopologyBuilder.ExternalDevices.placeholders());
        Captures captures = new Captures();
        try {
            captures.open(spec, topo, outDir, 0);
            Apps apps = Apps.of(topo);
            apps.start();
            return new VirtualSession(vs, topo, captures, apps);
        } catch (RuntimeException | Error e) {
            captures.untap();
            topo.close();
            captures.close(new ArrayList<>());
            throw e;
        }
    }

    public Topology topology() {
        return topology;
    }

    public Apps apps() {
        return apps;
    }

    /** The virtual clock's time, nanoseconds. */
    public long nanoTime() {
        return clock.nanoTime();
    }

    /** Runs every namespace {@code nanos} of virtual time forward. */
    public void runFor(long nanos) {
        clock.runFor(nanos);
    }

    /**
     * Stops the apps (TCP gracefully, in virtual time), lets what is in flight arrive, takes the exit report's
     * counts, closes the captures and deletes every namespace. Idempotent.
     */
    public synchronized Daemon.Summary stop() {
        if (summary != null) {
            return summary;
        }
        List<String> errors = new ArrayList<>();
        Daemon.Counts counts;
        try {
            try {
                apps.stop();
            } catch (RuntimeException e) {
                errors.add("stopping apps: " + e.getMessage());
            }
            clock.runFor(VirtualRun.IN_FLIGHT_NANOS);
            counts = Daemon.Counts.of(apps, stacks);
        } finally {
            captures.untap();
            topology.close();
        }
        Map<Path, Long> caps = captures.close(errors);
        summary = new Daemon.Summary(counts.appLines(), List.of(), List.of(), caps, stacks.size(), List.of(), errors, counts.links(),
                counts.outcomes(), counts.drops(), counts.devices());
        return summary;
    }

    @Override
    public void close() {
        stop();
    }
}
