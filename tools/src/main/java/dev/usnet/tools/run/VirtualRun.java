package dev.usnet.tools.run;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import dev.usnet.tools.topology.TopologyBuilder;
import dev.usnet.tools.topology.VirtualClockStalls;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Pcap;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A topology run in virtual time ({@code usnet run --clock virtual}): every namespace on one
 * {@link VirtualScheduler}, driven from the calling thread as fast as the CPU allows. Nothing waits on the wall
 * clock, and every random draw comes from the topology's seed, so the same file and seed give the same run.
 * TAP and pcap devices reach outside usnet, where time is real: a topology with one is refused.
 */
public final class VirtualRun {
    private VirtualRun() {}

    /**
     * How long the run lasts on the virtual clock, its seed (null: the file's), where captures go, whether it ends
     * with its apps, the control plane it offers, how often it snapshots its counters, and how much work at one
     * instant makes the watchdog look closer ({@link VirtualScheduler#stallLimit()}) and how much by one task then
     * counts as a stalled clock ({@link VirtualScheduler#taskLimit()}).
     */
    public record Options(long durationNanos, Long seed, Path outDir, boolean endWhenAppsDone,
                          dev.usnet.tools.ctl.DaemonControl.Options control, long snapshotNanos, long stallLimit,
                          long taskLimit) {
        /** Runs the whole duration. */
        public Options(long durationNanos, Long seed, Path outDir) {
            this(durationNanos, seed, outDir, false, null, 0, VirtualScheduler.DEFAULT_STALL_LIMIT,
                    VirtualScheduler.DEFAULT_TASK_LIMIT);
        }

        public Options(long durationNanos, Long seed, Path outDir, boolean endWhenAppsDone) {
            this(durationNanos, seed, outDir, endWhenAppsDone, null, 0, VirtualScheduler.DEFAULT_STALL_LIMIT,
                    VirtualScheduler.DEFAULT_TASK_LIMIT);
        }

        /**
         * The same with a control socket, /metrics and an event log as {@code control} asks (null: none) and, every
         * {@code snapshotNanos} of virtual time (0: never), a snapshot of every counter into the results.
         */
        public Options observed(dev.usnet.tools.ctl.DaemonControl.Options control, long snapshotNanos) {
            return new Options(durationNanos, seed, outDir, endWhenAppsDone, control, snapshotNanos, stallLimit, taskLimit);
        }

        /**
         * The same, but the run ends as soon as every TCP app is done (each client reached its count, bytes or
         * duration and both ends closed), at most {@code durationNanos} after the start: for a run whose length
         * is its apps' work. Only for topologies whose apps are all TCP apps (a ping or sender never ends).
         */
        public Options endingWhenAppsDone() {
            return new Options(durationNanos, seed, outDir, true, control, snapshotNanos, stallLimit, taskLimit);
        }

        /** The same with other limits (tests: a stalled clock found after less work). */
        public Options withStallLimits(long stall, long task) {
            return new Options(durationNanos, seed, outDir, endWhenAppsDone, control, snapshotNanos, stall, task);
        }
    }

    /**
     * The exit summary, the results, how much virtual time took how much wall time, the apps (stopped), and
     * the histograms behind the results' latency percentiles.
     */
    public record RunResult(Daemon.Summary summary, Results results, long virtualNanos, long wallNanos,
                            long cpuNanos, long events, List<App> apps, RunHistograms histograms) {
        /** Virtual seconds per wall second. */
        public double speed() {
            return wallNanos == 0 ? Double.POSITIVE_INFINITY : (double) virtualNanos / wallNanos;
        }
    }

    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    /** What is still in flight when the apps have stopped gets this long to arrive, as in {@link Daemon#stop()}. */
    static final long IN_FLIGHT_NANOS = 100_000_000L;

    /**
     * Builds {@code spec}, runs its apps for the duration in virtual time, stops them, and deletes every
     * namespace. Throws a {@link UsageException} naming the first TAP or pcap device, before building anything.
     */
    public static RunResult run(TopologySpec spec, Options o) {
        refuseExternalDevices(spec);
        TopologySpec t = o.seed() == null ? spec : spec.withSeed(o.seed());
        VirtualScheduler vs = new VirtualScheduler();
        vs.setStallLimit(o.stallLimit());
        vs.setTaskLimit(o.taskLimit());
        long wall0 = System.nanoTime();
        // The simulation thread's CPU time over the same span: unlike the wall time, it does not grow when other
        // processes share the cores (read twice per run: the thread CPU clock is a system call).
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        Topology topo = TopologyBuilder.build(t, n -> vs, TopologyBuilder.ExternalDevices.placeholders());
        InstantActivity activity = new InstantActivity();
        vs.onLongInstant(() -> activity.snapshot(stacks(topo)));
        List<NetStack> stacks = stacks(topo);
        Captures captures = new Captures();
        HistogramFiles histograms = new HistogramFiles(t, o.outDir());
        List<String> errors = new ArrayList<>();
        Daemon.Counts counts;
        Results results;
        RunHistograms latencies;
        Apps apps;
        List<Path> logs;
        long virtual0 = vs.nanoTime();
        List<Map<String, Object>> snapshots = new ArrayList<>();
        // When each snapshot was taken by the wall clock and by the simulation thread's CPU clock (seconds on each
        // clock's own origin: only differences mean anything): the cost of each slice of virtual time.
        List<Object> snapshotWall = new ArrayList<>();
        List<Object> snapshotCpu = new ArrayList<>();
        dev.usnet.tools.ctl.DaemonControl control = null;
        dev.usnet.tools.ctl.NsLoops.Virtual inbox = null;
        UsageException stalled = null;
        apps = null;
        PcapReplays replays = null;
        try {
            captures.open(t, topo, o.outDir(), 0);
            replays = PcapReplays.of(topo);
            apps = Apps.of(topo);
            if (o.control() != null) {
                control = dev.usnet.tools.ctl.DaemonControl.begin(topo, true, virtual0, o.control());
            }
            apps.start();
            replays.start();
            if (control != null) {
                inbox = new dev.usnet.tools.ctl.NsLoops.Virtual();
                Apps running = apps;
                control.started(new dev.usnet.tools.ctl.ControlPlane.Host(t.name(), "virtual", topo, () -> running,
                        o.outDir(), inbox, () -> histograms.write(stacks(topo), running)));
                RunCommand.announce(control, new java.io.PrintWriter(System.out, true));
            }
            if (o.endWhenAppsDone()) {
                runUntilAppsDone(vs, apps, virtual0 + o.durationNanos());
            } else {
                runSliced(vs, virtual0, virtual0 + o.durationNanos(), control, inbox, o.snapshotNanos(), snapshots, topo, apps,
                        snapshotWall, snapshotCpu);
            }
            if (inbox != null) {
                inbox.close();
            }
            replays.stop();
            try {
                apps.stop();
            } catch (RuntimeException e) {
                errors.add("stopping apps: " + e.getMessage());
            }
            vs.runFor(IN_FLIGHT_NANOS);
            if (control != null) {
                control.appsStopped(apps);
                control.close();
            }
            // Namespaces added or deleted through the control socket count as they are now.
            stacks = stacks(topo);
            logs = o.outDir() == null ? List.of() : apps.writeLogs(o.outDir(), errors);
            // Once, at the end: histogram_interval and SIGUSR1 are for watching a daemon, which a virtual run is not.
            try {
                histograms.write(stacks, apps);
            } catch (RuntimeException e) {
                errors.add(e.getMessage());
            }
            counts = Daemon.Counts.of(apps, stacks);
            results = Results.collect(t.name(), "virtual", t.seed(), o.durationNanos() / 1e9, t.params(), apps.list(), stacks,
                    new LinkedHashMap<>()).withSnapshots(snapshots);
            latencies = RunHistograms.collect(results, apps.list(), stacks);
        } catch (VirtualScheduler.ClockStalled ex) {
            stalled = stalled(ex, t, topo, activity);
            // The run cannot go on: the apps end where they are, and deleting the namespaces takes back what is
            // still in flight.
            if (apps != null) {
                apps.abort();
            }
            throw stalled;
        } finally {
            if (inbox != null) {
                inbox.close();
            }
            if (control != null) {
                control.close();
            }
            captures.untap();
            if (stalled != null) {
                captures.close(new ArrayList<>());
            }
            topo.close();
        }
        long virtualNanos = vs.nanoTime() - virtual0;
        Map<Path, Long> caps = captures.close(errors);
        // Captures are complete now: expectations on them can be judged, and every verdict goes into the results.
        results = ExpectationVerdicts.judge(t, results, o.outDir());
        Daemon.Summary s = new Daemon.Summary(PcapReplays.withLines(counts.appLines(), replays), histograms.files(),
                List.copyOf(logs), caps, stacks.size(), List.of(), errors,
                counts.links(), counts.outcomes(), counts.drops(), counts.devices());
        long wall = System.nanoTime() - wall0;
        long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
        // What the wall clock measured: the only part of the results that differs between runs with one seed.
        Map<String, Object> measured = results.measured();
        measured.put("wall_s", Results.seconds(wall));
        measured.put("virtual_s", Results.seconds(virtualNanos));
        measured.put("loop_cpu_s", Results.seconds(cpu));
        measured.put("events", vs.eventsRun());
        if (!snapshotWall.isEmpty()) {
            measured.put("snapshot_wall_s", snapshotWall);
            measured.put("snapshot_cpu_s", snapshotCpu);
        }
        measured.put("app_cpu_ns", RunResults.appCpuNanos(apps, results));
        Map<String, Object> spawn = RunResults.spawnNanos(apps, results);
        if (!spawn.isEmpty()) {
            measured.put("spawn_ns", spawn);
        }
        return new RunResult(s, results, virtualNanos, wall, cpu, vs.eventsRun(), apps.list(), latencies);
    }

    private static List<NetStack> stacks(Topology topo) {
        return topo.namespaces().stream().map(NetNamespace::stack).toList();
    }

    /** Slices of virtual time between which the control socket's requests run: short, so a request waits little. */
    static final long CONTROL_SLICE_NANOS = 1_000_000L;

    /**
     * Runs to {@code end} in slices: up to each snapshot instant (taking the snapshot there), and with a control
     * socket in slices of {@link #CONTROL_SLICE_NANOS}, serving its requests at each slice's end and raising drop
     * events each virtual second. Slicing changes nothing else: events run at the same instants in the same order.
     */
    private static void runSliced(VirtualScheduler vs, long start, long end, dev.usnet.tools.ctl.DaemonControl control,
                                  dev.usnet.tools.ctl.NsLoops.Virtual inbox, long snapshotNanos,
                                  List<Map<String, Object>> snapshots, Topology topo, Apps apps,
                                  List<Object> snapshotWall, List<Object> snapshotCpu) {
        long nextSnap = snapshotNanos > 0 ? start + snapshotNanos : Long.MAX_VALUE;
        long nextTick = control != null ? start + 1_000_000_000L : Long.MAX_VALUE;
        while (vs.nanoTime() < end) {
            long target = Math.min(end, Math.min(nextSnap, nextTick));
            if (inbox != null) {
                target = Math.min(target, vs.nanoTime() + CONTROL_SLICE_NANOS);
            }
            vs.runUntil(target);
            long now = vs.nanoTime();
            if (inbox != null) {
                inbox.drain();
            }
            if (now >= nextSnap) {
                snapshotWall.add(Results.seconds(System.nanoTime()));
                snapshotCpu.add(Results.seconds(THREADS.getCurrentThreadCpuTime()));
                snapshots.add(Results.snapshot((now - start) / 1e9, stacks(topo), apps.list()));
                nextSnap += snapshotNanos;
            }
            if (now >= nextTick) {
                control.tick(now);
                nextTick += 1_000_000_000L;
            }
        }
    }

    /**
     * The error for a run whose clock stopped: where and how it stalled, what the namespaces received while the
     * watchdog looked closer (which devices, which protocol), and from that the cause: TCP apps that cross only links
     * that take no time (named, with what to change), broadcasts that never stop (a loop), or other traffic.
     */
    private static UsageException stalled(VirtualScheduler.ClockStalled ex, TopologySpec t, Topology topo,
                                          InstantActivity activity) {
        StringBuilder b = new StringBuilder(ex.getMessage()).append('\n');
        InstantActivity.Delta d = activity.taken() ? activity.since(stacks(topo)) : null;
        String protocol = d == null ? null : d.mainProtocol();
        if (d != null) {
            b.append(InstantActivity.describe(d)).append('\n');
        }
        if (protocol == null) {
            b.append("no frames were received at that instant: the busiest tasks above keep scheduling work for the"
                    + " same instant without any traffic, so nothing a topology file says can move the clock");
        } else if (protocol.equals("TCP")) {
            tcpCause(b, d, t, topo);
        } else if (d.broadcasts() * 2 > d.frames()) {
            b.append("the same ").append(protocol).append(" broadcasts keep arriving without end: a loop of bridges or"
                    + " links floods them round it for ever (usnet's bridges run no spanning tree); break the loop");
            dev.usnet.core.bridge.BridgeLoops.Loop loop = dev.usnet.core.bridge.BridgeLoops.find(stacks(topo));
            if (loop != null) {
                b.append(": ").append(loop.describe());
            }
        } else {
            b.append(protocol).append(" traffic between the devices above never stops at that instant; ")
                    .append(VirtualClockStalls.FIX);
        }
        return new UsageException(b.toString(), ex);
    }

    /** The cause when TCP is what kept the instant going: the apps whose paths take no time, else the namespaces. */
    private static void tcpCause(StringBuilder b, InstantActivity.Delta d, TopologySpec t, Topology topo) {
        List<VirtualClockStalls.Stuck> stuck = VirtualClockStalls.find(t, n -> {
            try {
                return topo.stack(n);
            } catch (IllegalArgumentException e) {
                return null;
            }
        });
        if (stuck.isEmpty()) {
            b.append("TCP segments between ")
                    .append(String.join(", ", d.tcpNamespaces().stream().map(Map.Entry::getKey).toList()))
                    .append(" fall on one instant, each answered at once: the links between them take no time (no netem"
                            + " rate or delay) and the CPU model is off; ").append(VirtualClockStalls.FIX);
            return;
        }
        b.append("TCP: ")
                .append(String.join(", ", stuck.stream().map(VirtualClockStalls.Stuck::describe).toList()))
                .append(stuck.size() == 1 ? " crosses" : " cross")
                .append(" only links with neither a netem rate nor a delay, with the CPU model off, so each"
                        + " segment and its ACK take no time; ")
                .append(VirtualClockStalls.FIX);
        for (VirtualClockStalls.Stuck st : stuck) {
            b.append('\n').append(st.where().error(st.describe() + " is declared here"));
        }
    }

    /** Runs event by event until every app (each one that ends by itself) is done or the clock reaches {@code end}. */
    private static void runUntilAppsDone(VirtualScheduler vs, Apps apps, long end) {
        List<App> all = apps.list();
        for (App a : all) {
            if (!a.endsByItself()) {
                throw new UsageException(a.label() + ": a run that ends when its apps are done takes apps that end by"
                        + " themselves (TCP apps) only");
            }
        }
        // Done: its outcome is final (a TCP app: both ends done).
        while (vs.nanoTime() < end && !all.stream().allMatch(a -> !a.outcomePending())) {
            long next = vs.nextEventTime();
            if (next < 0 || next > end) {
                vs.runUntil(end);
                return;
            }
            vs.runUntil(next);
        }
    }

    /**
     * Throws a {@link UsageException} naming the first TAP or pcap device of {@code spec}: what {@link #run}
     * refuses, for a caller that checks several topologies before running any.
     */
    public static void refuseExternalDevices(TopologySpec spec) {
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Tap || d instanceof Pcap) {
                    throw new UsageException(d.link().where().error(d.kind() + " device " + ns.name() + "/" + d.link().name()
                            + " cannot run in virtual time (--clock virtual): it reaches outside usnet, where time is"
                            + " real; run this topology with --clock real"));
                }
            }
        }
    }
}
