package dev.usnet.tools.run;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.time.Scheduler;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tap.BusyPollSelectStrategy;
import dev.usnet.tap.TapWarmUp;
import dev.usnet.tap.TunException;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.kernel.KernelNet;
import dev.usnet.tools.kernel.PcapProvider;
import dev.usnet.tools.kernel.Privileges;
import dev.usnet.tools.kernel.TapProvider;
import dev.usnet.tools.kernel.UsnetMark;
import dev.usnet.tools.report.DeviceTable;
import dev.usnet.tools.report.DropTable;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.topology.TopologyBuilder;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelNs;
import dev.usnet.tools.topology.file.TopologySpec.Pcap;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import dev.usnet.tools.topology.file.TopologySpec;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A topology running in real time: namespaces on a small group of Netty event loops (one loop per namespace,
 * round-robin), kernel namespaces and TAP kernel ends set up with {@code ip}, captures, apps, and latency
 * histograms written on demand, periodically and at the end. {@link #stop()} undoes everything it did, in
 * reverse, and is safe to call from a shutdown hook.
 */
public final class Daemon implements AutoCloseable {
    /**
     * Where output goes, how many event loops carry the namespaces, how long (µs) an epoll loop keeps polling
     * after its last work before it sleeps ({@link BusyPollSelectStrategy}; 0: sleep at once), and how many
     * frames warm the data path up before the topology is built ({@link TapWarmUp}; 0: none).
     */
    public record Options(Path outDir, int threads, int busyPollMicros, int warmUpFrames) {
        /**
         * Frames per warm-up path ({@link TapWarmUp}) for {@code usnet run}: ~2 s on the 2-vCPU VM, after which the
         * first pings through the bridge example had p50 0.20 ms instead of 1.03 ms.
         */
        public static final int DEFAULT_WARM_UP_FRAMES = 10_000;

        /** Busy polling as {@code usnet run} does, but no warm-up (embedding, tests: start-up time matters more). */
        public Options(Path outDir, int threads) {
            this(outDir, threads, BusyPollSelectStrategy.DEFAULT_MICROS, 0);
        }
    }

    /**
     * What reaches outside usnet: TAP devices, pcap ports, the kernel's own networking, and the capabilities this
     * process has for changing it.
     */
    public record Providers(TapProvider tap, PcapProvider pcap, KernelNet kernel, Privileges privileges) {
        /** Stand-ins that change nothing in the kernel: every capability is taken as granted. */
        public Providers(TapProvider tap, PcapProvider pcap, KernelNet kernel) {
            this(tap, pcap, kernel, Privileges.all());
        }

        /** The providers of this build: tap-bridge's TAPs and pcap ports, {@code ip}, this process's capabilities. */
        public static Providers forThisBuild() {
            return new Providers(TapProvider.forThisBuild(), PcapProvider.forThisBuild(), KernelNet.iproute2(),
                    Privileges.ofThisProcess());
        }
    }

    /**
     * How the caller follows and stops a start: asked between steps (and throughout the warm-up) whether to stop,
     * told when the warm-up begins.
     */
    public interface Startup {
        Startup UNSTOPPABLE = () -> false;

        /** True once the start should end (SIGINT, SIGTERM): what was done is undone and {@link StopRequested} thrown. */
        boolean stopRequested();

        /** The warm-up of {@code frames} frames per path begins (it may take seconds). */
        default void warmingUp(int frames) {}

        /** The topology is built and its captures open; its apps start right after this returns. */
        default void appsStarting(Topology topology) {}

        /**
         * The apps have stopped and what was in flight has arrived ({@link #stop()}); the namespaces are deleted
         * right after this returns.
         */
        default void appsStopped(Apps apps) {}
    }

    /** {@link #start} ended early because {@link Startup#stopRequested()}; everything it did was undone. */
    public static final class StopRequested extends RuntimeException {
        StopRequested(String step) {
            super("stopped on request " + step);
        }
    }

    /** One app's outcome, under the app's {@link App#label()}. */
    public record AppOutcome(String app, Outcome outcome) {}

    /**
     * What a run did, for the exit report: the apps' lines and outcomes, the drop table ({@link DropTable}) and
     * device counters ({@link DeviceTable}) as they were when the apps had stopped, the link emulation lines, and
     * what was written and deleted.
     */
    public record Summary(List<String> apps, List<Path> histograms, List<Path> appLogs, Map<Path, Long> captures,
                          int usnetNamespaces,
                          List<String> kernelNamespacesDeleted, List<String> errors, List<String> links,
                          List<AppOutcome> outcomes, List<String> drops, List<String> devices) {
        /** The apps that failed, in file order. */
        public List<AppOutcome> failed() {
            return outcomes.stream().filter(a -> !a.outcome().ok()).toList();
        }
    }

    record OpenedTap(TapProvider.TapRequest req, TopologySpec.KernelSide side) {}

    private final TopologySpec spec;
    private final Options options;
    private final Providers providers;
    private final List<String> kernelCreated = new ArrayList<>();
    private final List<OpenedTap> taps = new ArrayList<>();
    private final Captures captures = new Captures();
    private final HistogramFiles histograms;
    private volatile TapWarmUp.Result warmUp;
    private IoEventLoopGroup group;
    private Topology topology;
    private List<NetStack> stacks = List.of();
    private Apps apps;
    private ScheduledExecutorService ticker;
    private Summary summary;
    private Results results;
    /** The {@code kind: replay} devices, sending from the apps' start to their stop. */
    private PcapReplays replays;
    /** When {@link #start} began, and when the apps were started (System.nanoTime), for the results. */
    private final long startedNanos = System.nanoTime();
    private long appsStartedNanos;

    private final Startup startup;
    /** After {@link #dropPrivileges}: a shell kept as root that deletes the kernel namespaces at the stop, or null. */
    private NamespaceTeardownHelper teardown;

    private Daemon(TopologySpec spec, Options options, Providers providers, Startup startup) {
        this.spec = spec;
        this.options = options;
        this.providers = providers;
        this.startup = startup;
        this.histograms = new HistogramFiles(spec, options.outDir());
        this.liveTaps = new LiveKernelTaps(providers, taps, () -> becameUser);
    }

    /**
     * Builds and starts {@code spec}. Refuses before any side effect when the build cannot provide a device
     * kind the file uses or a kernel namespace to create already exists. On a failure half-way, undoes what
     * it did and rethrows.
     */
    public static Daemon start(TopologySpec spec, Options options, Providers providers) {
        return start(spec, options, providers, Startup.UNSTOPPABLE);
    }

    /**
     * As {@link #start(TopologySpec, Options, Providers)}, in this order: privileges, then every precondition
     * (TAP and pcap support, kernel namespaces and links that exist already: all of them at once), then the
     * warm-up (only with TAP or pcap devices), then the build. When {@code startup} asks to stop, the warm-up
     * ends at once, the build at its next step, what was done is undone and {@link StopRequested} is thrown.
     */
    public static Daemon start(TopologySpec spec, Options options, Providers providers, Startup startup) {
        Daemon d = new Daemon(spec, options, providers, startup);
        d.preflight();
        try {
            d.bringUp();
        } catch (RuntimeException | Error e) {
            for (String err : d.stop().errors()) {
                e.addSuppressed(new IllegalStateException(err));
            }
            throw e;
        }
        return d;
    }

    public Topology topology() {
        return topology;
    }

    public Apps apps() {
        return apps;
    }

    /** What the warm-up before the build moved, or null when there was none. */
    public TapWarmUp.Result warmUp() {
        return warmUp;
    }

    public Path outDir() {
        return options.outDir;
    }

    /**
     * The run's results (docs/results.md, clock {@code real}), taken by {@link #stop()} once the apps had stopped
     * and completed with its wall time; null before the stop, or when the start ended before the apps ran.
     * {@code duration_s} is how long the apps ran: from their start to the stop, as measured.
     */
    public synchronized Results results() {
        return results;
    }

    private void preflight() {
        DaemonPreflight.check(spec, providers);
    }

    private boolean hasDevice(Class<? extends DeviceSpec> kind) {
        return DaemonPreflight.hasDevice(spec, kind);
    }

    private void stopIfRequested(String step) {
        if (startup.stopRequested()) {
            throw new StopRequested(step);
        }
    }

    /**
     * A freshly started JVM runs the data path interpreted, then through C1: pings right after "ready" took 1 ms
     * instead of 0.17, and the first seconds of every latency histogram with them. Warming up is best effort.
     */
    private void warmUpDataPath() {
        try {
            startup.warmingUp(options.warmUpFrames());
            TapWarmUp.Result r = TapWarmUp.run((io.netty.channel.IoEventLoop) group.next(), options.warmUpFrames(),
                    startup::stopRequested);
            warmUp = r;
        } catch (TunException | RuntimeException e) {
            System.err.println("usnet: warm-up skipped: " + e);
        }
    }

    private void bringUp() {
        int threads = Math.max(1, options.threads);
        // Epoll loops when available: TAP devices must run on them; everything else runs on any loop.
        group = new MultiThreadIoEventLoopGroup(threads, io.netty.channel.epoll.Epoll.isAvailable()
                ? io.netty.channel.epoll.EpollIoHandler.newFactory(0, BusyPollSelectStrategy.factory(options.busyPollMicros()))
                : LocalIoHandler.newFactory());
        // Only a TAP or pcap data path is worth warming up (in-JVM links start at usnet's own speed), and before
        // the kernel is touched, so a stop during the warm-up has nothing to undo there.
        if (options.warmUpFrames() > 0 && io.netty.channel.epoll.Epoll.isAvailable()
                && (hasDevice(Tap.class) || hasDevice(Pcap.class))) {
            warmUpDataPath();
        }
        stopIfRequested("after the warm-up");
        for (KernelNs k : spec.kernelNamespaces()) {
            providers.kernel().addNamespace(k.name());
            kernelCreated.add(k.name());
            stopIfRequested("after creating kernel namespace " + k.name());
        }
        Map<String, Scheduler> byNs = new HashMap<>();
        // One scheduler per loop, shared by the namespaces it carries: their receive work joins one poll list.
        Map<io.netty.util.concurrent.EventExecutor, RealTimeScheduler> byLoop = new HashMap<>();
        topology = TopologyBuilder.build(spec, n -> byNs.computeIfAbsent(n,
                        x -> byLoop.computeIfAbsent(group.next(), RealTimeScheduler::new)),
                new TopologyBuilder.ExternalDevices() {
                    @Override
                    public Device tap(String ns, Tap t, long mac, NetStack stack) {
                        stopIfRequested("before opening TAP " + t.kernel().ifname());
                        var req = new TapProvider.TapRequest(t.link().name(), t.kernel().ifname(), t.kernel().namespace(),
                                t.vnetHdr(), mac);
                        Device dev = providers.tap().openTap(req, stack);
                        taps.add(new OpenedTap(req, t.kernel()));
                        return dev;
                    }

                    @Override
                    public Device pcap(String ns, Pcap p, long mac, NetStack stack) {
                        return providers.pcap().openPcap(new PcapProvider.PcapRequest(p.link().name(), p.iface(), p.promisc(), mac),
                                stack);
                    }
                });
        stacks = topology.namespaces().stream().map(NetNamespace::stack).toList();
        String mark = UsnetMark.ofThisProcess().format();
        for (OpenedTap t : taps) {
            stopIfRequested("before configuring " + t.req().ifname());
            // The mark first: a second usnet that finds this name taken can then say whose it is.
            providers.kernel().ip(t.req().kernelNamespace(), "link", "set", "dev", t.req().ifname(), "alias", mark);
            providers.tap().configureKernelSide(t.req(), t.side(), providers.kernel());
        }
        captures.open(spec, topology, options.outDir, System.currentTimeMillis() * 1_000_000L - System.nanoTime());
        stopIfRequested("before starting the apps");
        replays = PcapReplays.of(topology);
        apps = Apps.of(topology);
        startup.appsStarting(topology);
        appsStartedNanos = System.nanoTime();
        apps.start();
        replays.start();
        double iv = spec.output().histogramIntervalSeconds();
        if (iv > 0 && histograms.anyNamespace()) {
            ticker = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "usnet-histograms");
                t.setDaemon(true);
                return t;
            });
            long ms = Math.max(100, Math.round(iv * 1000));
            ticker.scheduleAtFixedRate(this::writeHistogramsQuietly, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Gives up root once set-up is done (TAPs open and configured, kernel namespaces made). Run through sudo, the
     * whole process becomes the invoking user (SUDO_UID/SUDO_GID) with setgroups/setresgid/setresuid, which glibc
     * applies to every thread, so the kernel clears every capability of every thread, permitted and effective (what
     * /proc/PID/status shows as CapPrm and CapEff 0). The output directory and {@code writable} (a results file) are
     * given to that user first; the kernel namespaces this run made are deleted at the stop by a shell started as
     * root before the drop, which waits for one line and deletes only them. Only usnet ctl's {@code link add ... type
     * tap} changes the kernel side (a TAP's carrier is TUNSETCARRIER on its own fd, which needs no capability), and
     * none is kept for it: a daemon that became the user refuses it ({@link #kernelTaps()}). Without a
     * user to become (root not through sudo), the event loops, which run the packet path, TAP I/O and every timer,
     * drop every capability on their own threads (capset, bounding set, SECBIT_NOROOT), and the rest of the process
     * stays root for the exit. {@code mayBecomeUser} false (the daemon runs inside another program, a test) keeps
     * the process's user and only drops the loops' capabilities. Returns what was done, for the log; null when this
     * process has no capability, or when only the loops dropped theirs in a run that needed none (no TAP, pcap or
     * kernel namespace), where the line would only puzzle.
     */
    public synchronized String dropPrivileges(List<Path> writable, boolean mayBecomeUser) {
        if (providers.privileges().effective() == 0) {
            return null;
        }
        int uid = envId("SUDO_UID");
        int gid = envId("SUDO_GID");
        try {
            if (mayBecomeUser && uid > 0 && gid > 0) {
                if (!kernelCreated.isEmpty()) {
                    teardown = NamespaceTeardownHelper.start(kernelCreated);
                }
                List<Path> give = new ArrayList<>(writable);
                // Made now, as root: the control socket, histograms and logs go there afterwards.
                java.nio.file.Files.createDirectories(options.outDir);
                give.add(options.outDir);
                for (Path p : give) {
                    chown(p, uid, gid);
                }
                dev.usnet.tap.Capabilities.becomeUser(uid, gid);
                becameUser = uid;
                return "dropped root: now uid " + uid + " gid " + gid + " (SUDO_UID, SUDO_GID) with no capabilities"
                        + (teardown == null ? "" : "; kernel namespaces " + String.join(", ", kernelCreated)
                        + " are deleted at exit by a root helper (pid " + teardown.pid() + ")");
            }
            for (io.netty.util.concurrent.EventExecutor loop : group) {
                loop.submit(() -> {
                    dev.usnet.tap.Capabilities.dropThisThread(0);
                    return null;
                }).get(10, TimeUnit.SECONDS);
            }
            // Without TAP, pcap or kernel namespaces the run never needed root: dropping is hardening, not news.
            return !spec.needsPrivileges() ? null : "the event loops (packet path, TAP I/O, timers) dropped every capability;"
                    + " the rest of the process stays root for the exit (run through sudo to drop root entirely)";
        } catch (Exception e) {
            throw new UsageException("dropping privileges: " + e.getMessage(), e);
        }
    }

    private static int envId(String name) {
        try {
            String v = System.getenv(name);
            return v == null ? -1 : Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void chown(Path p, int uid, int gid) throws java.io.IOException {
        if (!java.nio.file.Files.exists(p)) {
            return;
        }
        try (var all = java.nio.file.Files.walk(p)) {
            for (Path f : all.toList()) {
                java.nio.file.Files.setAttribute(f, "unix:uid", uid, java.nio.file.LinkOption.NOFOLLOW_LINKS);
                java.nio.file.Files.setAttribute(f, "unix:gid", gid, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            }
        }
    }

    /** Writes out every capture's buffered frames now (SIGUSR1); returns how many captures were flushed. */
    public int flushCaptures() {
        return captures.flush();
    }

    private void writeHistogramsQuietly() {
        try {
            writeHistograms();
        } catch (RuntimeException e) {
            System.err.println("usnet: writing histograms: " + e.getMessage());
        }
    }

    /**
     * Writes the latency histograms ({@link HistogramFiles#write}): those of every namespace with
     * {@code histograms: true} and of the TCP apps whose client has finished. Returns the files written.
     */
    public synchronized List<Path> writeHistograms() {
        if (topology == null) {
            return new ArrayList<>();
        }
        return histograms.write(stacks, apps);
    }

    /**
     * Stops apps, writes the final histograms, closes captures, deletes every usnet namespace and then every
     * kernel namespace this run created. Idempotent; problems are collected into the summary, not thrown, so
     * that cleanup always runs to the end.
     */
    public synchronized Summary stop() {
        if (summary != null) {
            return summary;
        }
        List<String> errors = new ArrayList<>();
        long stopping = System.nanoTime();
        if (ticker != null) {
            ticker.shutdownNow();
        }
        if (replays != null) {
            replays.stop();
        }
        if (apps != null) {
            try {
                apps.stop();
            } catch (RuntimeException e) {
                errors.add("stopping apps: " + e.getMessage());
            }
            // Let what is in flight arrive before counting and tearing down.
            sleep(100);
            try {
                startup.appsStopped(apps);
            } catch (RuntimeException e) {
                errors.add("after the apps stopped: " + e.getMessage());
            }
        }
        if (topology != null) {
            // Namespaces added or deleted while running (usnet ctl ns add|del) count as they are now.
            stacks = topology.namespaces().stream().map(NetNamespace::stack).toList();
        }
        try {
            writeHistograms();
        } catch (RuntimeException e) {
            errors.add(e.getMessage());
        }
        List<Path> logs = apps == null ? List.of() : apps.writeLogs(options.outDir, errors);
        captures.untap();
        int usnetNs = stacks.size();
        // Before the namespaces go: deleting them takes their devices away.
        Counts counts = Counts.of(apps, stacks);
        if (apps != null) {
            results = Results.collect(spec.name(), "real", spec.seed(), (stopping - appsStartedNanos) / 1e9, spec.params(),
                    apps.list(), stacks, new LinkedHashMap<>());
        }
        if (topology != null) {
            try {
                topology.close();
            } catch (RuntimeException e) {
                errors.add("deleting usnet namespaces: " + e);
            }
        }
        if (group != null) {
            try {
                group.shutdownGracefully(50, 2000, TimeUnit.MILLISECONDS).await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (NetStack s : stacks) {
            // Frames handed over while the loops wound down: nothing runs them any more.
            if (s.backlogLength() > 0) {
                s.close();
            }
        }
        Map<Path, Long> caps = captures.close(errors);
        List<String> deleted = new ArrayList<>();
        if (teardown != null) {
            // Root was dropped: the helper started before the drop deletes them.
            teardown.deleteNamespaces(kernelCreated, deleted, errors);
            kernelCreated.clear();
        }
        for (int i = kernelCreated.size() - 1; i >= 0; i--) {
            String k = kernelCreated.get(i);
            try {
                providers.kernel().deleteNamespace(k);
                deleted.add(k);
            } catch (RuntimeException e) {
                errors.add("deleting kernel namespace " + k + ": " + e.getMessage() + " (delete it with: ip netns del " + k + ")");
            }
        }
        // Kernel namespaces made for TAPs added through usnet ctl: their TAPs went with the usnet namespaces above.
        deleted.addAll(liveTaps.deleteAll(errors));
        if (results != null) {
            // Captures are complete now: expectations on them can be judged, and every verdict goes into the results.
            results = ExpectationVerdicts.judge(spec, results, options.outDir);
        }
        summary = new Summary(PcapReplays.withLines(counts.appLines(), replays), histograms.files(), List.copyOf(logs), caps,
                usnetNs, deleted, errors, counts.links(), counts.outcomes(), counts.drops(), counts.devices());
        if (results != null) {
            // As in virtual time: the run from the start of the build to the end of the teardown.
            results.measured().put("wall_s", Results.seconds(System.nanoTime() - startedNanos));
            results.measured().put("app_cpu_ns", RunResults.appCpuNanos(apps, results));
            Map<String, Object> spawn = RunResults.spawnNanos(apps, results);
            if (!spawn.isEmpty()) {
                results.measured().put("spawn_ns", spawn);
            }
        }
        return summary;
    }

    /**
     * What the exit report shows of a run once its apps have stopped, in either clock: each app's lines and
     * outcome, the drop table, the device counters and the link emulation lines. Taken before the namespaces
     * are deleted.
     */
    public record Counts(List<String> appLines, List<AppOutcome> outcomes, List<String> drops, List<String> devices,
                  List<String> links) {
        static Counts of(Apps apps, List<NetStack> stacks) {
            List<String> appLines = new ArrayList<>();
            List<AppOutcome> outcomes = new ArrayList<>();
            if (apps != null) {
                for (App a : apps.list()) {
                    appLines.addAll(a.summaryLines());
                    outcomes.add(new AppOutcome(a.label(), a.outcome()));
                }
            }
            return new Counts(appLines, List.copyOf(outcomes), stacks.isEmpty() ? List.of() : DropTable.lines(stacks),
                    stacks.isEmpty() ? List.of() : DeviceTable.lines(stacks), linkEmulationLines(stacks));
        }
    }

    /** One line per device with link emulation: its settings and what it sent, dropped, duplicated, reordered. */
    private static List<String> linkEmulationLines(List<NetStack> stacks) {
        List<String> l = new ArrayList<>();
        for (NetStack s : stacks) {
            for (Device d : s.devices()) {
                var ne = d.netem();
                if (ne == null) {
                    continue;
                }
                var st = ne.stats();
                l.add(String.format("netem %s/%s (%s): sent %d frames, %d bytes; lost %d, queue drops %d, duplicated %d,"
                        + " reordered %d, queue max %d", s.name(), d.name(), d.netemParams().format(), st.sentPackets(),
                        st.sentBytes(), st.lost(), st.queueDrops(), st.duplicated(), st.reordered(), st.maxQlen()));
            }
        }
        return l;
    }

    private final LiveKernelTaps liveTaps;
    /** The uid {@link #dropPrivileges} became, or -1 while the daemon runs as it started. */
    private volatile int becameUser = -1;

    /**
     * What {@code usnet ctl link add NAME type tap kernel-netns KNS} needs of this daemon: TAPs opened as the file's
     * are, their kernel namespaces made when absent and deleted with their last TAP or at the stop.
     */
    public dev.usnet.tools.ctl.KernelTaps kernelTaps() {
        return liveTaps;
    }

    /** {@link #stop()}, for try-with-resources. */
    @Override
    public void close() {
        stop();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
