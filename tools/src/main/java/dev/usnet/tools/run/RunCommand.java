package dev.usnet.tools.run;

import dev.usnet.tap.BusyPollSelectStrategy;
import dev.usnet.tap.TapWarmUp;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code usnet run [--check] [--duration S] FILE}: the userspace router daemon, built from a topology file. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Build the topology in FILE (YAML; see docs/topology.md) in real time and run it until"
                + " SIGINT or SIGTERM: usnet namespaces, veth, bridges, routers, TAPs into kernel namespaces,"
                + " captures, apps.",
                "At exit it writes latency histograms, closes captures and deletes every namespace and device"
                + " it made. SIGUSR1 writes the histograms and flushes the captures at once. With --check it only"
                + " validates FILE (no privileges needed)."})
public final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "topology file")
    Path file;

    @Option(names = "--check", description = "validate FILE and exit: 0 when it would build, 2 with every problem")
    boolean check;

    @Option(names = "--duration", paramLabel = "S", description = "stop by itself after S seconds (default: run until a signal)")
    Double duration;

    @Option(names = "--out", paramLabel = "DIR", description = "output directory for captures and histograms"
            + " (default: the file's output.dir, else usnet-out/<name>)")
    Path out;

    @Option(names = "--capture", paramLabel = "NS/DEV[:in|out|inout]=FILE",
            description = "also capture device DEV of usnet namespace NS (direction in, out or inout, default inout) to FILE,"
                    + " relative to the output directory, or - for standard output (a live pcap for | tcpdump -r -,"
                    + " usnet's own output then goes to standard error); repeatable")
    java.util.List<String> captures = new java.util.ArrayList<>();

    @Option(names = "--threads", paramLabel = "N", description = "event loops carrying the namespaces (default: min(namespaces, 4))")
    Integer threads;

    @Option(names = "--busy-poll-us", paramLabel = "US",
            description = "microseconds an event loop keeps polling its TAPs after its last work before it sleeps"
                    + " (like the kernel's net.core.busy_poll): fewer wake-ups, more CPU under load; 0 sleeps at once (default: "
                    + BusyPollSelectStrategy.DEFAULT_MICROS + ")")
    Integer busyPollMicros;

    @Option(names = "--warm-up-frames", paramLabel = "N",
            description = "before building, send N frames each through a throw-away bridge and router over socket-pair"
                    + " TAPs, so the JIT has compiled the data path before real traffic arrives; 0 skips it (default: "
                    + Daemon.Options.DEFAULT_WARM_UP_FRAMES + ")")
    Integer warmUpFrames;

    @Option(names = "--set", paramLabel = "[NS:]KEY=VALUE",
            description = "a knob for namespace NS (every namespace when NS is left out), applied after the file's own knobs,"
                    + " e.g. host:usnet.netem.hb1.delay=10ms; repeatable")
    java.util.List<String> knobs = new java.util.ArrayList<>();

    @Option(names = "--param", paramLabel = "NAME=VALUE",
            description = "set parameter NAME (declared under the file's params:) to VALUE instead of its default;"
                    + " repeatable")
    java.util.List<String> params = new java.util.ArrayList<>();

    @Option(names = "--allow-app-failures",
            description = "exit 0 even when an app failed (never connected, no ping answered, nothing received, ...);"
                    + " without it such a run exits " + RunCommand.EXIT_APPS_FAILED)
    boolean allowAppFailures;

    @Option(names = "--clock", paramLabel = "real|virtual",
            description = "real (default): the daemon on event loops until a signal or --duration; virtual: every namespace"
                    + " on one simulated clock for --duration seconds, as fast as the CPU allows, deterministic for"
                    + " --seed (no TAP or pcap devices)")
    String clock = "real";

    @Option(names = "--seed", paramLabel = "S", description = "seed of every random draw (ISNs, ports, netem, jitter);"
            + " default: the file's seed:, else 1")
    Long seed;

    @Option(names = "--results", paramLabel = "FILE.json", description = "write the run's results as JSON (docs/results.md)"
            + " when it stops, after the apps")
    Path results;

    @Option(names = "--ctl", paramLabel = "PATH|none",
            description = "the control socket for usnet ctl (docs/ctl.md), mode 0600 (default: ctl.sock in the output"
                    + " directory in real time; none in virtual time); none: no control socket")
    String ctl;

    @Option(names = "--metrics", paramLabel = "[ADDR:]PORT",
            description = "serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR default 127.0.0.1; default: off)")
    String metrics;

    @Option(names = "--events-log", description = "write the event stream (usnet ctl events) to events.jsonl in the output"
            + " directory")
    boolean eventsLog;

    @Option(names = "--drop-event-rate", paramLabel = "N", description = "drops per second of one reason in one namespace"
            + " that raise a drops event (default: " + dev.usnet.tools.ctl.EventHub.DEFAULT_DROP_RATE + ")")
    Long dropEventRate;

    @Option(names = "--snapshot-interval", paramLabel = "S", description = "virtual time with --results: every S virtual"
            + " seconds, a snapshot of every counter into the results' snapshots (docs/results.md)")
    Double snapshotInterval;

    /** Exit code of a run that built, ran and cleaned up, but in which at least one app failed. */
    public static final int EXIT_APPS_FAILED = 1;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter e = spec.commandLine().getErr();
        boolean pcapToStdout = captures.stream().anyMatch(c -> c.endsWith("=" + Captures.STDOUT));
        if (pcapToStdout) {
            System.setOut(System.err);
        }
        // With a capture to standard output (file descriptor 1, written by the capture itself) everything usnet says
        // goes to standard error, so that a pipe into tcpdump reads nothing but the capture.
        PrintWriter o = pcapToStdout ? e : spec.commandLine().getOut();
        if (duration != null && !(duration > 0 && duration <= 31_536_000)) {
            throw new UsageException("--duration must be a positive number of seconds, got " + duration);
        }
        if (!clock.equals("real") && !clock.equals("virtual")) {
            throw new UsageException("--clock must be real or virtual, got " + clock);
        }
        if (threads != null && (threads < 1 || threads > 256)) {
            throw new UsageException("--threads must be 1..256, got " + threads);
        }
        if (busyPollMicros != null && (busyPollMicros < 0 || busyPollMicros > 1_000_000)) {
            throw new UsageException("--busy-poll-us must be 0..1000000, got " + busyPollMicros);
        }
        if (warmUpFrames != null && (warmUpFrames < 0 || warmUpFrames > 10_000_000)) {
            throw new UsageException("--warm-up-frames must be 0..10000000, got " + warmUpFrames);
        }
        java.util.Map<String, String> paramValues = paramValues(params);
        TopologySpec t;
        try {
            TopologyFile.Checked c = TopologyFile.check(file, paramValues, captures, knobs);
            c.warnings().forEach(w -> e.println("usnet: " + w));
            if (check || clock.equals("virtual")) {
                c.virtualClockWarnings().forEach(w -> e.println("usnet: " + w));
            }
            t = c.spec();
        } catch (TopologyException ex) {
            ex.warnings().forEach(w -> e.println("usnet: " + w));
            for (String s : ex.errors()) {
                e.println("usnet: " + s);
            }
            e.println("usnet: " + file + ": " + ex.errors().size() + " problem" + (ex.errors().size() == 1 ? "" : "s"));
            return CliProcess.EXIT_USAGE;
        }
        if (check) {
            o.printf("%s: ok (%s, %s, %s%s)%n", file, count(t.namespaces().size(), "namespace"), count(t.deviceCount(), "device"),
                    count(t.kernelNamespaces().size(), "kernel namespace"), t.needsPrivileges() ? "; running it needs root" : "");
            for (TopologySpec.Param p : t.parameters()) {
                o.printf("  param %s=%s%s%s%n", p.name(), p.value(), p.value().equals(p.defaultValue()) ? " (default)"
                        : " (default " + p.defaultValue() + ")", p.doc().isEmpty() ? "" : ": " + p.doc());
            }
            return 0;
        }
        Path dir = out != null ? out : t.output().dir() != null ? Path.of(t.output().dir()) : Path.of("usnet-out", t.name());
        OutputPaths.checkDirectory(out != null ? "--out" : "the output directory", dir);
        if (results != null) {
            OutputPaths.checkFile("--results", results);
        }
        if (dropEventRate != null && dropEventRate < 1) {
            throw new UsageException("--drop-event-rate must be at least 1, got " + dropEventRate);
        }
        if (snapshotInterval != null && !(snapshotInterval > 0)) {
            throw new UsageException("--snapshot-interval must be a positive number of seconds, got " + snapshotInterval);
        }
        if (snapshotInterval != null && (!clock.equals("virtual") || results == null)) {
            throw new UsageException("--snapshot-interval takes --clock virtual and --results FILE.json (a real-time run"
                    + " is watched through --metrics or usnet ctl stats instead)");
        }
        boolean virtual = clock.equals("virtual");
        Path ctlPath = ctl == null ? (virtual ? null : dir.resolve("ctl.sock")) : ctl.equals("none") ? null : Path.of(ctl);
        dev.usnet.tools.ctl.DaemonControl.Options control = new dev.usnet.tools.ctl.DaemonControl.Options(ctlPath, metrics,
                eventsLog ? dir.resolve("events.jsonl") : null,
                dropEventRate != null ? dropEventRate : dev.usnet.tools.ctl.EventHub.DEFAULT_DROP_RATE);
        if (virtual) {
            long snap = snapshotInterval == null ? 0 : Math.round(snapshotInterval * 1e9);
            return VirtualCommand.run(t, dir, duration, seed, results, allowAppFailures, control, snap, o, e);
        }
        if (seed != null) {
            t = t.withSeed(seed);
        }
        int n = threads != null ? threads : Math.min(t.namespaces().size(), 4);
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(1);
        AtomicBoolean signalled = new AtomicBoolean();
        AtomicInteger exit = new AtomicInteger(1);
        // SIGINT and SIGTERM start the JVM's shutdown: the hook stops the run, waits for the cleanup below and
        // ends the process with its status (0: a stop on request is a normal end for a daemon). It is in place
        // before anything is created, so a signal during start-up still cleans up.
        Thread hook = new Thread(() -> {
            signalled.set(true);
            stop.countDown();
            boolean done = false;
            try {
                done = finished.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
            o.flush();
            e.flush();
            Runtime.getRuntime().halt(done ? exit.get() : 1);
        }, "usnet-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        Daemon d = null;
        Object usr1 = null;
        dev.usnet.tools.ctl.DaemonControl[] controlRef = new dev.usnet.tools.ctl.DaemonControl[1];
        try {
            // A signal during the warm-up or the build ends the start at its next step (the warm-up at once), and
            // the undo runs here on this thread while the hook waits for it.
            Daemon.Startup startup = new Daemon.Startup() {
                @Override
                public boolean stopRequested() {
                    return signalled.get();
                }

                @Override
                public void warmingUp(int frames) {
                    o.println(warmingUpLine(frames));
                    o.flush();
                }

                @Override
                public void appsStarting(Topology topology) {
                    controlRef[0] = dev.usnet.tools.ctl.DaemonControl.begin(topology, false, System.nanoTime(), control);
                }

                @Override
                public void appsStopped(Apps apps) {
                    var c = controlRef[0];
                    if (c != null) {
                        c.appsStopped(apps);
                        c.close();
                    }
                }
            };
            try {
                d = Daemon.start(t, new Daemon.Options(dir, n,
                        busyPollMicros != null ? busyPollMicros : BusyPollSelectStrategy.DEFAULT_MICROS,
                        warmUpFrames != null ? warmUpFrames : Daemon.Options.DEFAULT_WARM_UP_FRAMES),
                        Daemon.Providers.forThisBuild(), startup);
            } catch (Daemon.StopRequested ex) {
                o.println("usnet: stopping on signal during start-up; what was created is removed");
                for (Throwable x : ex.getSuppressed()) {
                    e.println("usnet: while undoing: " + x.getMessage());
                }
                exit.set(ex.getSuppressed().length == 0 ? 0 : 1);
                return exit.get();
            } catch (TopologyException ex) {
                for (String s : ex.errors()) {
                    e.println("usnet: " + s);
                }
                exit.set(CliProcess.EXIT_USAGE);
                return exit.get();
            } catch (UsageException ex) {
                // A refused start lists every problem, one a line.
                for (String line : ex.getMessage().split("\n")) {
                    e.println("usnet: " + line);
                }
                for (Throwable x : ex.getSuppressed()) {
                    e.println("usnet: while undoing: " + x.getMessage());
                }
                exit.set(CliProcess.EXIT_USAGE);
                return exit.get();
            }
            Daemon daemon = d;
            try {
                List<Path> writable = new ArrayList<>();
                if (results != null) {
                    // Written at the stop: made now, while this process may still create it, and kept writable. One
                    // that cannot be made is reported when it is written, after the report, as without the drop.
                    try {
                        if (!java.nio.file.Files.exists(results)) {
                            if (results.toAbsolutePath().getParent() != null) {
                                java.nio.file.Files.createDirectories(results.toAbsolutePath().getParent());
                            }
                            java.nio.file.Files.createFile(results);
                        }
                        if (java.nio.file.Files.isRegularFile(results)) {
                            writable.add(results);
                        }
                    } catch (java.io.IOException ignored) {
                        // RunResults.write says why at the stop.
                    }
                }
                String dropped = d.dropPrivileges(writable, CliProcess.standalone());
                if (dropped != null) {
                    o.println("usnet: " + dropped);
                }
            } catch (UsageException ex) {
                e.println("usnet: " + ex.getMessage());
                exit.set(CliProcess.EXIT_USAGE);
                return exit.get();
            }
            try {
                controlRef[0].started(new dev.usnet.tools.ctl.ControlPlane.Host(t.name(), "real", d.topology(), daemon::apps,
                        dir, dev.usnet.tools.ctl.NsLoops.realTime(), daemon::writeHistograms, d.kernelTaps()));
                controlRef[0].tickEverySecond();
            } catch (UsageException ex) {
                e.println("usnet: " + ex.getMessage());
                exit.set(CliProcess.EXIT_USAGE);
                return exit.get();
            }
            usr1 = Signals.onUsr1(() -> {
                var files = daemon.writeHistograms();
                int caps = daemon.flushCaptures();
                o.println("usnet: SIGUSR1: wrote " + files.size() + " histograms to " + dir + ", flushed " + caps + " captures");
            });
            TapWarmUp.Result w = d.warmUp();
            if (w != null) {
                o.println(warmedUpLine(w.sent(), w.lost(), w.nanos()));
            }
            announce(controlRef[0], o);
            o.printf("usnet: ready (%s, %s)%n", count(d.topology().namespaces().size(), "namespace"),
                    count(d.topology().deviceCount(), "device"));
            o.flush();
            if (duration != null) {
                stop.await(Math.round(duration * 1000), TimeUnit.MILLISECONDS);
            } else {
                stop.await();
            }
            if (signalled.get()) {
                o.println("usnet: stopping on signal");
            }
            int code = finish(d, dir, t, o, e);
            exit.set(code);
            return code;
        } finally {
            if (d != null) {
                d.stop();
            }
            if (controlRef[0] != null) {
                controlRef[0].close();
            }
            Signals.restoreUsr1(usr1);
            finished.countDown();
            if (!signalled.get()) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException ignored) {
                    // Already shutting down: the hook is running and ends the process.
                }
            }
        }
    }

    /**
     * Stops the daemon, then as in virtual time: the results file, the report, the expectations. Returns the exit
     * code: 2 when the results file could not be written, else 1 when an app failed (without --allow-app-failures)
     * or an expectation did not hold, else 0.
     */
    private int finish(Daemon d, Path dir, TopologySpec t, PrintWriter o, PrintWriter e) {
        Daemon.Summary s = d.stop();
        var r = d.results();
        boolean written = results == null || RunResults.write(r, results, o, e);
        int code = report(s, dir, allowAppFailures, o, e);
        if (!RunResults.expectations(t.expectations(), r, o, e)) {
            code = EXIT_APPS_FAILED;
        }
        o.flush();
        e.flush();
        return written ? code : CliProcess.EXIT_USAGE;
    }

    /**
     * The line before the warm-up: {@code frames} (--warm-up-frames) go through the throw-away bridge and as many
     * through the router, so the total is said, as the line after it says it.
     */
    public static String warmingUpLine(int frames) {
        return String.format(java.util.Locale.ROOT, "usnet: warming up the data path (%d frames: %d through a bridge, %d"
                + " through a router; SIGINT or SIGTERM stops it)", 2L * frames, frames, frames);
    }

    /** The line after the warm-up, with the frames sent through both. */
    public static String warmedUpLine(long sent, long lost, long nanos) {
        return String.format(java.util.Locale.ROOT, "usnet: data path warmed up (%d frames through a bridge and a router,"
                + " %d lost, %d ms)", sent, lost, nanos / 1_000_000);
    }

    /** Says where the control socket, /metrics and the event log are (those that are on). */
    public static void announce(dev.usnet.tools.ctl.DaemonControl c, PrintWriter o) {
        if (c == null) {
            return;
        }
        if (c.socket() != null) {
            o.println("usnet: control socket " + c.socket() + " (usnet ctl --socket " + c.socket() + " VERB ...)");
        }
        if (c.metricsUrl() != null) {
            o.println("usnet: metrics at " + c.metricsUrl());
        }
        if (c.eventsLog() != null) {
            o.println("usnet: events to " + c.eventsLog());
        }
    }

    /** {@code --param NAME=VALUE} arguments as a map in their order; a malformed or repeated one is a usage error. */
    public static java.util.Map<String, String> paramValues(java.util.List<String> args) {
        java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new UsageException("--param must be NAME=VALUE, got " + a);
            }
            if (m.put(a.substring(0, eq), a.substring(eq + 1)) != null) {
                throw new UsageException("--param " + a.substring(0, eq) + " is given twice");
            }
        }
        return m;
    }

    private static String count(int n, String what) {
        return n + " " + what + (n == 1 ? "" : "s");
    }

    /** Names listed per reason in the failed-apps line; each app's own line above says the rest. */
    static final int FAILED_NAMES_PER_REASON = 5;

    /**
     * The failed apps as "app: reason" when each has its own reason, else grouped: a reason once with how many apps
     * it failed and the first {@link #FAILED_NAMES_PER_REASON} of them (a thousand flows starved the same way make
     * one line of a hundred characters, not of a hundred thousand).
     */
    public static String failedByReason(java.util.List<java.util.Map.Entry<String, String>> failed) {
        java.util.Map<String, java.util.List<String>> byReason = new java.util.LinkedHashMap<>();
        for (var f : failed) {
            byReason.computeIfAbsent(f.getValue(), r -> new java.util.ArrayList<>()).add(f.getKey());
        }
        java.util.List<String> parts = new java.util.ArrayList<>();
        byReason.forEach((reason, apps) -> {
            if (apps.size() == 1) {
                parts.add(apps.getFirst() + ": " + reason);
            } else {
                int shown = Math.min(apps.size(), FAILED_NAMES_PER_REASON);
                parts.add(apps.size() + " apps: " + reason + " (" + String.join(", ", apps.subList(0, shown))
                        + (apps.size() > shown ? " and " + (apps.size() - shown) + " more" : "") + ")");
            }
        });
        return String.join("; ", parts);
    }

    /**
     * Prints the exit summary: each app's line and outcome, the drops by namespace and reason with what each
     * reason means, every device's counters, link emulation, files, cleanup; then which apps failed. Returns the
     * exit code: 0, or {@link #EXIT_APPS_FAILED} when an app failed and {@code allowAppFailures} is off.
     */
    public static int report(Daemon.Summary s, Path dir, boolean allowAppFailures, PrintWriter o, PrintWriter e) {
        for (String a : s.apps()) {
            o.println("usnet: " + a);
        }
        for (String l : s.drops()) {
            o.println("usnet: " + l);
        }
        for (String l : s.devices()) {
            o.println("usnet: " + l);
        }
        java.util.List<Path> hgrm = s.histograms();
        java.util.List<String> logs = s.appLogs().stream()
                .map(f -> f.startsWith(dir) ? dir.relativize(f).toString() : f.toString()).toList();
        if (!hgrm.isEmpty()) {
            o.println("usnet: wrote " + hgrm.size() + " histograms to " + dir);
        }
        if (!logs.isEmpty()) {
            o.println("usnet: wrote app logs " + String.join(", ", logs) + " to " + dir);
        }
        s.captures().forEach((f, frames) -> o.println("usnet: capture " + f + ": " + frames + " frames"));
        for (String l : s.links()) {
            o.println("usnet: " + l);
        }
        o.println("usnet: deleted " + count(s.usnetNamespaces(), "usnet namespace")
                + (s.kernelNamespacesDeleted().isEmpty() ? "" : " and kernel namespaces " + String.join(", ", s.kernelNamespacesDeleted())));
        for (String err : s.errors()) {
            e.println("usnet: " + err);
        }
        var failed = s.failed();
        // What could not be written (histograms, logs, captures) or undone is a failed run, whatever its apps did.
        int code = s.errors().isEmpty() ? 0 : EXIT_APPS_FAILED;
        if (!failed.isEmpty()) {
            String which = failedByReason(failed.stream().map(f -> java.util.Map.entry(f.app(), f.outcome().reason())).toList());
            code = allowAppFailures ? code : EXIT_APPS_FAILED;
            (allowAppFailures ? o : e).println("usnet: " + failed.size() + " of " + count(s.outcomes().size(), "app")
                    + " failed" + (allowAppFailures ? " (--allow-app-failures: exit 0)" : "") + ": " + which);
        }
        o.flush();
        e.flush();
        return code;
    }
}
