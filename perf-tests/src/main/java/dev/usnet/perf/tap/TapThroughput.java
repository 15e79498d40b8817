package dev.usnet.perf.tap;

import static dev.usnet.perf.BenchSupport.lastLines;
import static dev.usnet.perf.BenchSupport.loadavg;
import static dev.usnet.perf.BenchSupport.max;
import static dev.usnet.perf.BenchSupport.median;
import static dev.usnet.perf.BenchSupport.min;
import static dev.usnet.perf.BenchSupport.positive;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.perf.BenchNetns;
import dev.usnet.perf.BenchSupport;
import dev.usnet.perf.Iperf3;
import dev.usnet.perf.LoopThreads;
import dev.usnet.perf.MiniJson;
import dev.usnet.tap.BusyPollSelectStrategy;
import dev.usnet.tap.HostCommand;
import dev.usnet.tap.TapDevice;
import dev.usnet.tap.TapStats;
import dev.usnet.tap.Tun;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * Scenario benchmark {@code tap-throughput}: the same iperf3 TCP transfer and ping between two kernel network
 * namespaces over six paths, side by side — kernel veth, kernel bridge, usnet bridge with and without
 * virtio-net-header GSO, usnet router with and without GSO. For each path: iperf3 throughput (receiver sum,
 * {@code --seconds} per run, {@code --reps} rounds in which the paths take turns, median), the usnet JVM's CPU during those runs, and ping RTT
 * p50/p99 from per-packet times (HdrHistogram). Every namespace is created here ({@code usnet-bench-<pid>-*}),
 * only 198.18.0.0/15 is used, and everything is removed in a finally block and on Ctrl-C.
 *
 * <p>Run it with {@code perf-tests/tap-throughput.sh [--seconds N] [--reps N] [--paths a,b] [--json FILE]
 * [--loops 1|2] [--pings N]}; needs root, /dev/net/tun, iproute2, iperf3 and ping.
 */
public final class TapThroughput {
    static final List<String> ALL_PATHS = List.of("kernel-veth", "kernel-bridge", "usnet-bridge-gso", "usnet-bridge",
            "usnet-router-gso", "usnet-router");

    private static final long MAC_A = 0x02_00_5e_00_01_0aL;
    private static final long MAC_B = 0x02_00_5e_00_01_0bL;
    private static final long MAC_BR = 0x02_00_5e_00_01_0cL;
    private static final Pattern PING_TIME = Pattern.compile("icmp_seq=(\\d+) .*time=([0-9.]+) ms");

    record Options(int seconds, int reps, List<String> paths, Path json, int loops, int pings, int warmup, int busyPollMicros) {}

    /** What one path measured. */
    static final class PathResult {
        final String name;
        String error;
        String setup = "";
        String loadBefore;
        String loadAfter;
        final List<Double> gbps = new ArrayList<>();
        final List<Double> cpuPct = new ArrayList<>();
        final List<Double> loopCpuPct = new ArrayList<>();
        final List<Long> retransmits = new ArrayList<>();
        final Histogram ping = new Histogram(3);
        int pingSent;
        int pingReceived;
        /** usnet-only details, already JSON. */
        String usnetJson;
        /** usnet-only details for the console. */
        final List<String> notes = new ArrayList<>();
        boolean usnet;

        PathResult(String name) {
            this.name = name;
        }

        double median() {
            return BenchSupport.median(gbps);
        }

        double pingMs(double pct) {
            return ping.getTotalCount() == 0 ? Double.NaN : ping.getValueAtPercentile(pct) / 1e6;
        }
    }

    /** usnet's side of a path: one NetStack and two TAPs on one or two epoll event loops. */
    static final class Usnet {
        final MultiThreadIoEventLoopGroup group;
        final NetStack stack;
        final IoEventLoop stackLoop;
        final List<IoEventLoop> loops = new ArrayList<>();
        TapDevice a;
        TapDevice b;
        final long[] loopThreads;

        Usnet(String name, int loops, int busyPollMicros) throws Exception {
            group = new MultiThreadIoEventLoopGroup(loops, EpollIoHandler.newFactory(0, BusyPollSelectStrategy.factory(busyPollMicros)));
            stackLoop = (IoEventLoop) group.next();
            stack = new NetStack(name, new RealTimeScheduler(stackLoop), 7);
            this.loops.add(stackLoop);
            for (int i = 1; i < loops; i++) {
                this.loops.add((IoEventLoop) group.next());
            }
            loopThreads = new long[this.loops.size()];
            for (int i = 0; i < loopThreads.length; i++) {
                loopThreads[i] = LoopThreads.threadId(this.loops.get(i));
            }
        }

        IoEventLoop loopForB() {
            return loops.getLast();
        }

        <T> T onLoop(Callable<T> task) throws Exception {
            return stackLoop.submit(task).get(10, TimeUnit.SECONDS);
        }

        long loopCpuNanos() {
            return LoopThreads.cpuNanos(loopThreads);
        }

        void close() {
            try {
                onLoop(() -> {
                    stack.close();
                    return null;
                });
            } catch (Exception e) {
                System.err.println("tap-throughput: closing usnet stack: " + e);
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    /** A built path: where the client and server run, the server's address, and what to tear down. */
    static final class Topo {
        final int idx;
        final PathResult result;
        String src;
        String dst;
        String dstAddr;
        final List<String> namespaces = new ArrayList<>();
        Usnet usnet;
        String port;
        Path serverOut;
        Process server;

        Topo(int idx, PathResult result) {
            this.idx = idx;
            this.result = result;
        }
    }

    private final Options opt;
    private final BenchNetns kns = new BenchNetns("usnet-bench", "tap-throughput");
    private final com.sun.management.OperatingSystemMXBean os =
            ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class);

    TapThroughput(Options opt) {
        this.opt = opt;
    }

    public static void main(String[] args) throws Exception {
        Options o = BenchSupport.parseOrExit("tap-throughput", "tap-throughput [--seconds N] [--reps N] [--paths "
                + String.join(",", ALL_PATHS) + "] [--json FILE] [--loops 1|2] [--pings N] [--warmup S] [--busy-poll US]",
                () -> parse(args));
        List<String> missing = new ArrayList<>();
        if (!Files.exists(Path.of("/dev/net/tun"))) {
            missing.add("/dev/net/tun");
        }
        missing.addAll(BenchNetns.missing("ip", "iperf3", "ping", "timeout"));
        BenchSupport.exitIfMissing("tap-throughput", missing, "");
        System.exit(new TapThroughput(o).run());
    }

    static Options parse(String[] args) {
        int seconds = 10;
        int reps = 3;
        int loops = 1;
        int pings = 200;
        int warmup = 2;
        int busyPoll = BusyPollSelectStrategy.DEFAULT_MICROS;
        List<String> paths = ALL_PATHS;
        Path json = Path.of("perf-tests/target/tap-throughput.json");
        for (String[] av : BenchSupport.options(args)) {
            String a = av[0];
            String v = av[1];
            switch (a) {
                case "--seconds" -> seconds = positive(a, v);
                case "--reps" -> reps = positive(a, v);
                case "--loops" -> {
                    loops = positive(a, v);
                    if (loops > 2) {
                        throw new IllegalArgumentException("--loops is 1 or 2");
                    }
                }
                case "--pings" -> pings = positive(a, v);
                case "--warmup" -> warmup = v.equals("0") ? 0 : positive(a, v);
                case "--busy-poll" -> busyPoll = v.equals("0") ? 0 : positive(a, v);
                case "--json" -> json = Path.of(v);
                case "--paths" -> paths = BenchSupport.paths(v, ALL_PATHS);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        return new Options(seconds, reps, paths, json, loops, pings, warmup, busyPoll);
    }

    int run() throws Exception {
        // Ctrl-C: stop iperf3/ping, delete the namespaces (a TAP born by setns keeps its namespace alive only
        // until this process's fds close, which the exit does).
        kns.addCleanupHook();
        String loadBefore = loadavg();
        String started = Instant.now().toString();
        System.out.printf(Locale.ROOT, "tap-throughput: %d path(s), %d s warm-up each, then %d interleaved round(s) of %d s iperf3 per path,"
                        + " %d pings at 10 ms; usnet on %s; namespaces %s*; load average before: %s%n", opt.paths().size(), opt.warmup(),
                opt.reps(), opt.seconds(), opt.pings(), loopsDesc(), kns.prefix(), loadBefore);
        List<PathResult> results = new ArrayList<>();
        List<Topo> topos = new ArrayList<>();
        try {
            for (String name : opt.paths()) {
                PathResult r = new PathResult(name);
                results.add(r);
                topos.add(setUp(ALL_PATHS.indexOf(name) + 1, r));
            }
            // All paths stay up and take turns, one iperf3 run each per round, the starting path rotating: a
            // machine whose speed drifts over minutes (noisy neighbours, CPU steal) then shifts every path alike
            // instead of whichever ran last.
            for (int rep = 1; rep <= opt.reps(); rep++) {
                System.out.printf(Locale.ROOT, "%n== round %d/%d == (load average %s)%n", rep, opt.reps(), loadavg());
                for (int k = 0; k < topos.size(); k++) {
                    Topo t = topos.get((k + rep - 1) % topos.size());
                    if (t.result.error == null) {
                        iperfOnce(t, rep);
                    }
                }
            }
            for (Topo t : topos) {
                if (t.result.error == null) {
                    System.out.printf(Locale.ROOT, "%n== %s: pings ==%n", t.result.name);
                    pings(t, t.result);
                }
            }
        } finally {
            for (Topo t : topos) {
                tearDown(t);
            }
            kns.close();
        }
        String loadAfter = loadavg();
        BenchSupport.report(table(results, loadBefore, loadAfter), opt.json(), json(results, started, loadBefore, loadAfter));
        kns.removeCleanupHook();
        return results.stream().anyMatch(r -> r.error != null) ? 1 : 0;
    }

    private String loopsDesc() {
        return (opt.loops() == 1 ? "one epoll event loop (NetStack + both TAPs, same-loop fast path)"
                : "two epoll event loops (NetStack + TAP A on loop 0, TAP B on loop 1)")
                + (opt.busyPollMicros() == 0 ? ", no busy polling" : ", busy polling " + opt.busyPollMicros() + " us after activity");
    }

    // ---- one path ----

    /** Builds the path, checks it with ping, starts its iperf3 server and warms it up; a failure is left in the result. */
    private Topo setUp(int idx, PathResult r) {
        r.usnet = r.name.startsWith("usnet");
        r.loadBefore = loadavg();
        System.out.printf(Locale.ROOT, "%n== %s: set-up == (load average %s)%n", r.name, r.loadBefore);
        Topo t = new Topo(idx, r);
        try {
            build(t);
            HostCommand.Result c = kns.tryExec(15, t.src, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", t.dstAddr);
            if (!c.ok() || !c.output().contains(" 0% packet loss")) {
                r.error = "no connectivity (ping " + t.dstAddr + "): " + lastLines(c.output(), 3);
                if (t.usnet != null) {
                    collectUsnet(r, t.usnet, null, null, 0);
                }
                System.out.println("  " + r.error);
                return t;
            }
            t.port = Integer.toString(5200 + idx);
            t.serverOut = Files.createTempFile("usnet-bench-iperf3-server", ".out");
            int serverLife = opt.paths().size() * opt.reps() * (opt.seconds() + 30) + 60;
            t.server = Iperf3.startServer(kns, t.dst, t.serverOut, serverLife, t.dstAddr, t.port);
            if (opt.warmup() > 0) {
                // Untimed: lets the JIT compile usnet's data path (and TCP settle) before the measured runs.
                Iperf3.warmUp(kns, t.src, t.dstAddr, t.port, opt.warmup());
            }
        } catch (Exception e) {
            r.error = (r.error == null ? "" : r.error + "; ") + e;
            System.out.println("  failed: " + e);
        }
        return t;
    }

    private void tearDown(Topo t) {
        try {
            if (t.server != null) {
                kns.kill(t.server);
            }
            if (t.serverOut != null) {
                Files.deleteIfExists(t.serverOut);
            }
        } catch (Exception e) {
            System.err.println("tap-throughput: stopping iperf3 server of " + t.result.name + ": " + e);
        }
        if (t.usnet != null) {
            t.usnet.close();
        }
        kns.delete(t.namespaces);
        t.result.loadAfter = loadavg();
    }

    private void build(Topo t) throws Exception {
        int idx = t.idx;
        String name = t.result.name;
        PathResult r = t.result;
        t.src = ns(t, "p" + idx + "a");
        t.dst = ns(t, "p" + idx + "b");
        String net = "198.18." + (idx * 10) + ".";
        switch (name) {
            case "kernel-veth" -> {
                kns.ip("-n", t.src, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", t.dst);
                kaddr(t.src, "veth0", net + "1/24");
                kaddr(t.dst, "veth0", net + "2/24");
                t.dstAddr = net + "2";
                r.setup = "A veth0 <-> B veth0 (veth pair), " + net + "0/24";
            }
            case "kernel-bridge" -> {
                String br = ns(t, "p" + idx + "br");
                kns.ip("-n", br, "link", "add", "br0", "type", "bridge", "forward_delay", "0", "stp_state", "0");
                for (String[] side : new String[][] {{t.src, "pa"}, {t.dst, "pb"}}) {
                    kns.ip("-n", side[0], "link", "add", "eth0", "type", "veth", "peer", "name", side[1], "netns", br);
                    kns.exec(br, "ip", "link", "set", side[1], "master", "br0");
                    kns.exec(br, "ip", "link", "set", side[1], "up");
                }
                kns.exec(br, "ip", "link", "set", "br0", "up");
                kaddr(t.src, "eth0", net + "1/24");
                kaddr(t.dst, "eth0", net + "2/24");
                t.dstAddr = net + "2";
                String nf = kns.tryExec(5, br, "cat", "/proc/sys/net/bridge/bridge-nf-call-iptables").output().trim();
                r.setup = "A eth0 -veth- [br0 in netns " + br + "] -veth- B eth0, " + net + "0/24; bridge-nf-call-iptables="
                        + (nf.isEmpty() ? "n/a" : nf);
            }
            case "usnet-bridge-gso", "usnet-bridge" -> {
                boolean gso = name.endsWith("-gso");
                Usnet u = usnet(t, "bench-br" + idx, gso);
                Bridge br = new Bridge("br0", MAC_BR);
                u.stack.register(br);
                u.onLoop(() -> {
                    br.addPort(u.a);
                    br.addPort(u.b);
                    u.a.setUp(true);
                    u.b.setUp(true);
                    br.setUp(true);
                    return null;
                });
                kaddr(t.src, "utapA", net + "1/24");
                kaddr(t.dst, "utapB", net + "2/24");
                t.dstAddr = net + "2";
                r.setup = "A utapA =TAP= [usnet bridge br0] =TAP= B utapB, " + net + "0/24, " + tapDesc(gso);
            }
            case "usnet-router-gso", "usnet-router" -> {
                boolean gso = name.endsWith("-gso");
                Usnet u = usnet(t, "bench-rt" + idx, gso);
                String net2 = "198.18." + (idx * 10 + 1) + ".";
                u.onLoop(() -> {
                    u.stack.knobs().set("net.ipv4.ip_forward", "1");
                    u.stack.devinet().add(u.a, Ipv4Addr.parse(net + "254"), 24);
                    u.stack.devinet().add(u.b, Ipv4Addr.parse(net2 + "254"), 24);
                    u.a.setUp(true);
                    u.b.setUp(true);
                    return null;
                });
                kaddr(t.src, "utapA", net + "1/24");
                kaddr(t.dst, "utapB", net2 + "1/24");
                kns.exec(t.src, "ip", "route", "add", "default", "via", net + "254");
                kns.exec(t.dst, "ip", "route", "add", "default", "via", net2 + "254");
                t.dstAddr = net2 + "1";
                r.setup = "A utapA " + net + "1 =TAP= [usnet router, ip_forward=1, " + net + "254 | " + net2 + "254] =TAP= B utapB "
                        + net2 + "1, " + tapDesc(gso);
            }
            default -> throw new IllegalArgumentException(name);
        }
        System.out.println("  " + r.setup);
    }

    private static String tapDesc(boolean gso) {
        return gso ? "TAPs with IFF_VNET_HDR + TUN_F_CSUM|TSO4|TSO6" : "plain TAPs (no vnet_hdr, no offloads)";
    }

    private String ns(Topo t, String tag) {
        String n = kns.create(tag);
        t.namespaces.add(n);
        return n;
    }

    private void kaddr(String netns, String dev, String cidr) {
        kns.exec(netns, "ip", "addr", "add", cidr, "dev", dev);
        kns.exec(netns, "ip", "link", "set", dev, "up");
    }

    private Usnet usnet(Topo t, String name, boolean gso) throws Exception {
        Usnet u = new Usnet(name, opt.loops(), opt.busyPollMicros());
        t.usnet = u;
        Tun.Options oa = Tun.Options.inNetns(t.src, "utapA");
        Tun.Options ob = Tun.Options.inNetns(t.dst, "utapB");
        if (gso) {
            oa = oa.withVnetHdr(true);
            ob = ob.withVnetHdr(true);
        }
        u.a = TapDevice.open(u.stack, oa, u.stackLoop, MAC_A);
        u.b = TapDevice.open(u.stack, ob, u.loopForB(), MAC_B);
        return u;
    }

    // ---- iperf3 ----

    /** One measured iperf3 run on a path that is up; a failure marks the path and takes it out of later rounds. */
    private void iperfOnce(Topo t, int rep) {
        PathResult r = t.result;
        try {
            long cpu0 = os.getProcessCpuTime();
            long loop0 = t.usnet != null ? t.usnet.loopCpuNanos() : 0;
            long t0 = System.nanoTime();
            HostCommand.Result c = Iperf3.client(kns, t.src, t.dstAddr, t.port, opt.seconds(), true);
            long wall = System.nanoTime() - t0;
            long cpu = os.getProcessCpuTime() - cpu0;
            long loopCpu = t.usnet != null ? t.usnet.loopCpuNanos() - loop0 : 0;
            Object doc;
            try {
                doc = MiniJson.parse(c.output().substring(Math.max(0, c.output().indexOf('{'))));
            } catch (RuntimeException e) {
                throw new IllegalStateException("iperf3 run " + rep + " exited " + c.exit() + ": " + lastLines(c.output(), 5));
            }
            Object err = MiniJson.at(doc, "error");
            Object bps = MiniJson.at(doc, "end", "sum_received", "bits_per_second");
            if (err != null || !(bps instanceof Double d)) {
                throw new IllegalStateException("iperf3 run " + rep + ": " + (err != null ? err : "no end.sum_received"));
            }
            Object retr = MiniJson.at(doc, "end", "sum_sent", "retransmits");
            r.gbps.add(d / 1e9);
            r.cpuPct.add(100.0 * cpu / wall);
            if (t.usnet != null) {
                r.loopCpuPct.add(100.0 * loopCpu / wall);
            }
            r.retransmits.add(retr instanceof Double x ? x.longValue() : -1L);
            System.out.printf(Locale.ROOT, "  %-17s %.2f Gbit/s, %d retransmits%s%n", r.name, d / 1e9, r.retransmits.getLast(),
                    t.usnet == null ? "" : String.format(Locale.ROOT, ", usnet process CPU %.0f %% (event loop thread(s) %.0f %%)",
                            r.cpuPct.getLast(), r.loopCpuPct.getLast()));
        } catch (Exception e) {
            r.error = e.toString();
            System.out.println("  " + r.name + " failed: " + e);
        }
    }

    // ---- ping ----

    private void pings(Topo t, PathResult r) throws Exception {
        Map<String, Histogram> latBefore = t.usnet != null ? latencySnapshot(t.usnet.stack) : null;
        long wake0 = t.usnet != null ? t.usnet.a.tapStats().readWakeups + t.usnet.b.tapStats().readWakeups : 0;
        HostCommand.Result p = kns.tryExec(opt.pings() / 50 + 30, t.src, "ping", "-n", "-i", "0.01", "-c",
                Integer.toString(opt.pings()), "-W", "1", t.dstAddr);
        r.pingSent = opt.pings();
        Matcher m = PING_TIME.matcher(p.output());
        while (m.find()) {
            r.pingReceived++;
            r.ping.recordValue(Math.round(Double.parseDouble(m.group(2)) * 1e6));
        }
        System.out.printf(Locale.ROOT, "  ping: %d/%d replies, p50 %.3f ms, p99 %.3f ms, max %.3f ms%n", r.pingReceived,
                r.pingSent, r.pingMs(50), r.pingMs(99), r.ping.getTotalCount() == 0 ? Double.NaN : r.ping.getMaxValue() / 1e6);
        if (r.pingReceived == 0) {
            r.error = "ping: no replies: " + lastLines(p.output(), 3);
        }
        if (t.usnet != null) {
            collectUsnet(r, t.usnet, latBefore, p, wake0);
        }
    }

    private static Map<String, Histogram> latencySnapshot(NetStack s) {
        Map<String, Histogram> m = new HashMap<>();
        for (LatencyPaths.Path p : s.latency().all()) {
            m.put(p.name(), p.snapshot());
        }
        return m;
    }

    /** usnet counters: TAP driver stats, drops, per-path in-stack latency (during the pings), wake-ups per ping. */
    private void collectUsnet(PathResult r, Usnet u, Map<String, Histogram> latBefore, HostCommand.Result ping, long wake0) {
        StringBuilder j = new StringBuilder("{");
        j.append("\"event_loops\":").append(opt.loops());
        j.append(",\"tap_a\":").append(tapJson(u.a.tapStats()));
        j.append(",\"tap_b\":").append(tapJson(u.b.tapStats()));
        j.append(",\"drops\":{");
        boolean first = true;
        for (Map.Entry<DropReason, Long> e : u.stack.drops().snapshot().entrySet()) {
            if (e.getValue() == 0) {
                continue;
            }
            j.append(first ? "" : ",").append(MiniJson.quote(e.getKey().name())).append(':').append(e.getValue());
            first = false;
        }
        j.append('}');
        r.notes.add("tap A: " + u.a.tapStats());
        r.notes.add("tap B: " + u.b.tapStats());
        r.notes.add("usnet drops: " + u.stack.drops().snapshot().entrySet().stream().filter(e -> e.getValue() > 0).toList());
        if (latBefore != null && ping != null) {
            long wakeups = u.a.tapStats().readWakeups + u.b.tapStats().readWakeups - wake0;
            double perPing = r.pingReceived == 0 ? Double.NaN : (double) wakeups / r.pingReceived;
            j.append(",\"ping_phase\":{\"tap_read_wakeups\":").append(wakeups).append(",\"tap_read_wakeups_per_ping\":")
                    .append(MiniJson.num(perPing)).append(",\"in_stack_latency\":[");
            StringBuilder note = new StringBuilder(String.format(Locale.ROOT,
                    "ping phase: %d TAP read wake-ups (%.2f per echo); in-stack latency (rx stamp -> transmit) per path:",
                    wakeups, perPing));
            first = true;
            for (LatencyPaths.Path p : u.stack.latency().all()) {
                Histogram h = p.snapshot();
                Histogram before = latBefore.get(p.name());
                if (before != null) {
                    h.subtract(before);
                }
                if (h.getTotalCount() == 0) {
                    continue;
                }
                j.append(first ? "" : ",").append("{\"path\":").append(MiniJson.quote(p.name())).append(",\"packets\":")
                        .append(h.getTotalCount()).append(",\"p50_us\":").append(MiniJson.num(h.getValueAtPercentile(50) / 1e3))
                        .append(",\"p99_us\":").append(MiniJson.num(h.getValueAtPercentile(99) / 1e3)).append('}');
                note.append(String.format(Locale.ROOT, " %s p50 %.1f us p99 %.1f us (%d pkts);", p.name(),
                        h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getTotalCount()));
                first = false;
            }
            j.append("]}");
            r.notes.add(note.toString());
        }
        j.append('}');
        r.usnetJson = j.toString();
        for (String n : r.notes) {
            System.out.println("  " + n);
        }
    }

    private static String tapJson(TapStats s) {
        return "{\"read_wakeups\":" + s.readWakeups + ",\"rx_frames\":" + s.rxFrames + ",\"rx_bytes\":" + s.rxBytes
                + ",\"rx_gso_frames\":" + s.rxGsoFrames + ",\"rx_max_gso_size\":" + s.rxMaxGsoSize + ",\"rx_max_frame\":"
                + s.rxMaxFrame + ",\"rx_dropped\":" + s.rxDropped + ",\"read_errors\":" + s.readErrors + ",\"tx_frames\":"
                + s.txFrames + ",\"tx_bytes\":" + s.txBytes + ",\"tx_gso_frames\":" + s.txGsoFrames + ",\"write_errors\":"
                + s.writeErrors + ",\"write_eagain\":" + s.writeEagain + ",\"tx_dropped\":" + s.txDropped
                + ",\"tx_queue_drops\":" + s.txQueueDrops.get() + ",\"tx_gso_refused\":" + s.txGsoDropped.get() + "}";
    }

    // ---- report ----

    private PathResult find(List<PathResult> rs, String name) {
        return rs.stream().filter(r -> r.name.equals(name) && r.error == null && !r.gbps.isEmpty()).findFirst().orElse(null);
    }

    private String table(List<PathResult> rs, String loadBefore, String loadAfter) {
        PathResult kb = find(rs, "kernel-bridge");
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "tap-throughput: iperf3 TCP %d s x %d interleaved rounds (median, after %d s warm-up), %d pings at 10 ms; usnet on %s%n",
                opt.seconds(), opt.reps(), opt.warmup(), opt.pings(), loopsDesc()));
        String fmt = "%-17s | %15s | %13s | %11s | %11s | %11s | %s%n";
        b.append(String.format(Locale.ROOT, fmt, "path", "Gbit/s (median)", "min–max", "usnet CPU %", "ping p50 ms",
                "ping p99 ms", "ratio to kernel bridge"));
        b.append("------------------+-----------------+---------------+-------------+-------------+-------------+-----------------------\n");
        for (PathResult r : rs) {
            if (r.gbps.isEmpty()) {
                b.append(String.format(Locale.ROOT, fmt, r.name, "FAILED", "", "", "", "", r.error == null ? "" : r.error));
                continue;
            }
            double med = r.median();
            String range = String.format(Locale.ROOT, "%.2f–%.2f", min(r.gbps), max(r.gbps));
            String cpu = r.usnet ? String.format(Locale.ROOT, "%.0f", median(r.cpuPct)) : "—";
            String ratio = kb == null ? "n/a" : String.format(Locale.ROOT, "%.2f×", med / kb.median());
            if (kb != null && r.ping.getTotalCount() > 0 && kb.ping.getTotalCount() > 0) {
                ratio += String.format(Locale.ROOT, " (RTT p50 %.1f×)", r.pingMs(50) / kb.pingMs(50));
            }
            if (r.error != null) {
                ratio += "  [" + r.error + "]";
            }
            b.append(String.format(Locale.ROOT, fmt, r.name, String.format(Locale.ROOT, "%.2f", med), range, cpu,
                    fmtMs(r.pingMs(50)), fmtMs(r.pingMs(99)), ratio));
        }
        b.append("usnet CPU % = the usnet JVM's process CPU time / wall time during the iperf3 runs (100 % = one core).\n");
        b.append("\nTargets (from the issue):\n");
        target(b, rs, kb, "usnet-bridge-gso", 0.85);
        target(b, rs, kb, "usnet-router-gso", 0.80);
        for (PathResult r : rs) {
            if (!r.usnet) {
                continue;
            }
            if (kb == null || r.ping.getTotalCount() == 0 || kb.ping.getTotalCount() == 0) {
                b.append(String.format(Locale.ROOT, "  %-16s p50 RTT <= 3× kernel bridge: n/a%n", r.name));
                continue;
            }
            double x = r.pingMs(50) / kb.pingMs(50);
            b.append(String.format(Locale.ROOT, "  %-16s p50 RTT <= 3× kernel bridge (%.3f ms): %.3f ms = %.2f×  %s%n", r.name,
                    kb.pingMs(50), r.pingMs(50), x, x <= 3.0 ? "MET" : "NOT MET"));
        }
        b.append(String.format(Locale.ROOT, "%nLoad average before: %s; after: %s (%d CPUs)%n", loadBefore, loadAfter,
                Runtime.getRuntime().availableProcessors()));
        return b.toString();
    }

    private static void target(StringBuilder b, List<PathResult> rs, PathResult kb, String name, double want) {
        PathResult r = rs.stream().filter(x -> x.name.equals(name)).findFirst().orElse(null);
        if (r == null) {
            return;
        }
        if (kb == null || r.gbps.isEmpty()) {
            b.append(String.format(Locale.ROOT, "  %-16s throughput >= %.2f× kernel bridge: n/a (%s)%n", name, want,
                    kb == null ? "kernel-bridge not measured" : "no measurement"));
            return;
        }
        double x = r.median() / kb.median();
        b.append(String.format(Locale.ROOT, "  %-16s throughput >= %.2f× kernel bridge (%.2f Gbit/s): %.2f Gbit/s = %.2f×  %s"
                        + " (per-round ratios %s, median %.2f×)%n", name, want, kb.median(), r.median(), x, x >= want ? "MET" : "NOT MET",
                fmtRatios(roundRatios(r, kb)), median(roundRatios(r, kb))));
    }

    /** usnet / kernel bridge in each round (both ran within seconds of each other); empty unless every round has both. */
    private static List<Double> roundRatios(PathResult r, PathResult kb) {
        List<Double> out = new ArrayList<>();
        if (r.gbps.size() == kb.gbps.size()) {
            for (int i = 0; i < r.gbps.size(); i++) {
                out.add(r.gbps.get(i) / kb.gbps.get(i));
            }
        }
        return out;
    }

    private static String fmtRatios(List<Double> xs) {
        List<String> f = new ArrayList<>();
        for (double x : xs) {
            f.add(String.format(Locale.ROOT, "%.2f", x));
        }
        return "[" + String.join(", ", f) + "]";
    }

    private String json(List<PathResult> rs, String started, String loadBefore, String loadAfter) {
        PathResult kb = find(rs, "kernel-bridge");
        StringBuilder j = new StringBuilder();
        j.append("{\n  \"benchmark\": \"tap-throughput\",\n  \"started\": ").append(MiniJson.quote(started));
        j.append(",\n  \"options\": {\"seconds\": ").append(opt.seconds()).append(", \"reps\": ").append(opt.reps())
                .append(", \"pings\": ").append(opt.pings()).append(", \"ping_interval_ms\": 10, \"warmup_s\": ").append(opt.warmup())
                .append(", \"event_loops\": ")
                .append(opt.loops()).append(", \"busy_poll_us\": ").append(opt.busyPollMicros())
                .append("},\n  \"usnet_threads\": ").append(MiniJson.quote(loopsDesc()));
        j.append(",\n  \"host\": ").append(BenchSupport.hostJson(loadBefore, loadAfter)).append(",\n");
        j.append("  \"paths\": [");
        for (int k = 0; k < rs.size(); k++) {
            PathResult r = rs.get(k);
            j.append(k == 0 ? "\n" : ",\n").append("    {\"path\": ").append(MiniJson.quote(r.name));
            j.append(", \"setup\": ").append(MiniJson.quote(r.setup));
            j.append(", \"loadavg_before\": ").append(MiniJson.quote(r.loadBefore));
            j.append(", \"loadavg_after\": ").append(MiniJson.quote(r.loadAfter));
            j.append(", \"ok\": ").append(r.error == null);
            j.append(", \"error\": ").append(MiniJson.quote(r.error));
            j.append(", \"gbps\": ").append(MiniJson.list(r.gbps));
            j.append(", \"gbps_median\": ").append(MiniJson.num(r.gbps.isEmpty() ? Double.NaN : r.median()));
            j.append(", \"gbps_min\": ").append(MiniJson.num(r.gbps.isEmpty() ? Double.NaN : min(r.gbps)));
            j.append(", \"gbps_max\": ").append(MiniJson.num(r.gbps.isEmpty() ? Double.NaN : max(r.gbps)));
            j.append(", \"retransmits\": ").append(r.retransmits);
            j.append(", \"jvm_cpu_pct\": ").append(MiniJson.list(r.cpuPct));
            j.append(", \"usnet_cpu_pct_median\": ").append(r.usnet && !r.cpuPct.isEmpty() ? MiniJson.num(median(r.cpuPct)) : "null");
            j.append(", \"event_loop_cpu_pct\": ").append(MiniJson.list(r.loopCpuPct));
            j.append(", \"ping\": {\"sent\": ").append(r.pingSent).append(", \"received\": ").append(r.pingReceived)
                    .append(", \"p50_ms\": ").append(MiniJson.num(r.pingMs(50))).append(", \"p99_ms\": ")
                    .append(MiniJson.num(r.pingMs(99))).append(", \"min_ms\": ")
                    .append(MiniJson.num(r.ping.getTotalCount() == 0 ? Double.NaN : r.ping.getMinValue() / 1e6))
                    .append(", \"max_ms\": ")
                    .append(MiniJson.num(r.ping.getTotalCount() == 0 ? Double.NaN : r.ping.getMaxValue() / 1e6))
                    .append(", \"mean_ms\": ")
                    .append(MiniJson.num(r.ping.getTotalCount() == 0 ? Double.NaN : r.ping.getMean() / 1e6)).append('}');
            double ratio = kb == null || r.gbps.isEmpty() ? Double.NaN : r.median() / kb.median();
            double rttRatio = kb == null || r.ping.getTotalCount() == 0 ? Double.NaN : r.pingMs(50) / kb.pingMs(50);
            j.append(", \"ratio_to_kernel_bridge\": ").append(MiniJson.num(ratio));
            j.append(", \"round_ratios_to_kernel_bridge\": ").append(MiniJson.list(kb == null ? List.of() : roundRatios(r, kb)));
            j.append(", \"rtt_p50_ratio_to_kernel_bridge\": ").append(MiniJson.num(rttRatio));
            j.append(", \"usnet\": ").append(r.usnetJson == null ? "null" : r.usnetJson);
            j.append('}');
        }
        j.append("\n  ],\n  \"targets\": [");
        List<String> ts = new ArrayList<>();
        for (Object[] t : new Object[][] {{"usnet-bridge-gso", 0.85}, {"usnet-router-gso", 0.80}}) {
            PathResult r = find(rs, (String) t[0]);
            double x = kb == null || r == null ? Double.NaN : r.median() / kb.median();
            ts.add("{\"what\": " + MiniJson.quote(t[0] + " throughput >= " + t[1] + " x kernel-bridge") + ", \"ratio\": "
                    + MiniJson.num(x) + ", \"met\": " + (Double.isNaN(x) ? "null" : Boolean.toString(x >= (Double) t[1])) + "}");
        }
        for (PathResult r : rs) {
            if (!r.usnet) {
                continue;
            }
            double x = kb == null || r.ping.getTotalCount() == 0 ? Double.NaN : r.pingMs(50) / kb.pingMs(50);
            ts.add("{\"what\": " + MiniJson.quote(r.name + " ping p50 <= 3 x kernel-bridge") + ", \"ratio\": " + MiniJson.num(x)
                    + ", \"met\": " + (Double.isNaN(x) ? "null" : Boolean.toString(x <= 3.0)) + "}");
        }
        j.append("\n    ").append(String.join(",\n    ", ts)).append("\n  ]\n}\n");
        return j.toString();
    }

    // ---- helpers ----

    private static String fmtMs(double ms) {
        return Double.isNaN(ms) ? "—" : String.format(Locale.ROOT, "%.3f", ms);
    }
}
