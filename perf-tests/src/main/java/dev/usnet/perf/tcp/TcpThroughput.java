package dev.usnet.perf.tcp;

import static dev.usnet.perf.BenchSupport.lastLines;
import static dev.usnet.perf.BenchSupport.loadavg;
import static dev.usnet.perf.BenchSupport.max;
import static dev.usnet.perf.BenchSupport.median;
import static dev.usnet.perf.BenchSupport.min;
import static dev.usnet.perf.BenchSupport.positive;
import static dev.usnet.perf.MiniJson.list;
import static dev.usnet.perf.MiniJson.num;
import static dev.usnet.perf.MiniJson.quote;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.perf.BenchNetns;
import dev.usnet.perf.BenchSupport;
import dev.usnet.perf.Iperf3;
import dev.usnet.perf.LoopThreads;
import dev.usnet.tap.HostCommand;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scenario benchmark {@code tcp-throughput}: bulk TCP between two namespaces, the kernel's and usnet's, in one
 * run.
 *
 * <ul>
 *   <li>{@code kernel-veth}: two kernel network namespaces joined by a veth pair (TSO/GSO on, as veth comes),
 *       iperf3 for {@code --seconds}, receiver throughput.
 *   <li>{@code usnet-1448}: two usnet namespaces in this JVM joined by a usnet veth pair without GSO (every
 *       segment is one 1448-byte MSS frame), TCP in real time on Netty epoll event loops.
 *   <li>{@code usnet-64k}: the same with GSO (and tx checksum) offload on the veth: TCP sends super-segments of
 *       up to 45 MSS (65160 bytes) that cross the veth whole.
 * </ul>
 *
 * For usnet a bulk sender writes from one preallocated buffer whenever the send buffer has room and the receiver
 * discards (or, with {@code --sink read}, copies) whatever arrives; the rate is the sender's bytes acknowledged
 * over {@code --seconds} after one second of settling, from {@code tcp_info}. Each run is a new connection (iperf3
 * also connects anew per run). Every row is set up and warmed up ({@code --warmup} s, untimed) first; then the rows
 * run round by round, each once per round, {@code --reps} rounds, so drifting load on a shared host hits all rows
 * alike; the table shows the median. Next to it: retransmits, receive backlog drops, the JVM's CPU (100 % = one
 * core), the event-loop threads' CPU, the host's CPU, payload bytes per data frame (GSO super-segments count
 * once), and the bytes the event-loop threads allocated per data frame (the steady state should allocate nothing).
 *
 * <p>{@code --loops 1} runs both usnet namespaces on one event loop (the veth hand-off stays on one thread);
 * {@code --loops 2} gives each namespace its own loop (sender and receiver in parallel; every hand-off crosses
 * threads). The default {@code 1,2} runs both. Kernel namespaces are {@code usnet-tcpbench-<pid>-*} on
 * 198.18.70.0/24 only and are deleted by name in a finally block and on Ctrl-C.
 *
 * <p>Run it with {@code perf-tests/tcp-throughput.sh [--seconds N] [--reps N] [--warmup S] [--paths a,b]
 * [--loops 1,2] [--backlog N] [--sink skip|read] [--set key=value] [--json FILE]}; the kernel paths need root,
 * iproute2 and iperf3.
 */
public final class TcpThroughput {
    static final List<String> ALL_PATHS = List.of("kernel-veth", "usnet-1448", "usnet-64k");
    /** Not run by default: the kernel with one MSS per skb, and usnet-1448 with checksums computed in software. */
    static final List<String> EXTRA_PATHS = List.of("kernel-veth-1448", "usnet-1448-swcsum");

    static final String NET = "198.18.70.";
    static final int ADDR_A = Ipv4Addr.parse(NET + "1");
    static final int ADDR_B = Ipv4Addr.parse(NET + "2");
    static final int USNET_PORT = 5201;
    static final int IPERF_PORT = 5270;
    private static final long MAC_A = 0x02_00_5e_00_46_01L;
    private static final long MAC_B = 0x02_00_5e_00_46_02L;

    record Options(int seconds, int reps, int warmup, List<String> paths, List<Integer> loops, Path json, int backlog,
            boolean read, int chunk, List<String[]> knobs) {}

    /** What one row (a path, for usnet with one loop setting) measured, one entry per repetition. */
    static final class Row {
        final String path;
        final int loops;
        String setup = "";
        String error;
        String loadBefore;
        String loadAfter;
        final List<Double> gbps = new ArrayList<>();
        /** usnet: what the receiving application got over the same window (a cross-check of the acked rate). */
        final List<Double> rcvGbps = new ArrayList<>();
        final List<Long> retrans = new ArrayList<>();
        final List<Long> drops = new ArrayList<>();
        final List<Double> jvmCpu = new ArrayList<>();
        final List<Double> loopCpu = new ArrayList<>();
        final List<Double> hostCpu = new ArrayList<>();
        final List<Double> allocPerSeg = new ArrayList<>();
        final List<Double> avgSegBytes = new ArrayList<>();
        final List<Double> acksPerSeg = new ArrayList<>();
        final List<Long> gcs = new ArrayList<>();
        String lastInfo;
        String nstat;

        Row(String path, int loops) {
            this.path = path;
            this.loops = loops;
        }

        boolean usnet() {
            return path.startsWith("usnet");
        }

        String label() {
            return usnet() ? path + " (" + loops + (loops == 1 ? " loop)" : " loops)") : path;
        }

        double median() {
            return BenchSupport.median(gbps);
        }
    }

    private final Options opt;
    private final BenchNetns kns = new BenchNetns("usnet-tcpbench", "tcp-throughput");
    private final com.sun.management.OperatingSystemMXBean os =
            ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class);

    TcpThroughput(Options opt) {
        this.opt = opt;
    }

    public static void main(String[] args) throws Exception {
        Options o = BenchSupport.parseOrExit("tcp-throughput", "tcp-throughput [--seconds N] [--reps N] [--warmup S] [--paths "
                + String.join(",", ALL_PATHS) + "[," + String.join(",", EXTRA_PATHS)
                + "]] [--loops 1,2] [--backlog N] [--sink skip|read] [--chunk BYTES] [--set key=value ...] [--json FILE]",
                () -> parse(args));
        if (o.paths().stream().anyMatch(p -> p.startsWith("kernel"))) {
            BenchSupport.exitIfMissing("tcp-throughput", BenchNetns.missing("ip", "iperf3", "timeout", "ss"),
                    " for the kernel path (or run only usnet paths: --paths usnet-1448,usnet-64k)");
        }
        System.exit(new TcpThroughput(o).run());
    }

    static Options parse(String[] args) {
        int seconds = 10;
        int reps = 3;
        int warmup = 3;
        int backlog = 1000;
        boolean read = false;
        int chunk = 128 * 1024;
        List<Integer> loops = List.of(1, 2);
        List<String[]> knobs = new ArrayList<>();
        List<String> paths = ALL_PATHS;
        Path json = Path.of("perf-tests/target/tcp-throughput.json");
        for (String[] av : BenchSupport.options(args)) {
            String a = av[0];
            String v = av[1];
            switch (a) {
                case "--seconds" -> seconds = positive(a, v);
                case "--reps" -> reps = positive(a, v);
                case "--warmup" -> warmup = v.equals("0") ? 0 : positive(a, v);
                case "--backlog" -> {
                    backlog = positive(a, v);
                    if (backlog > NetStack.BACKLOG_CAPACITY) {
                        throw new IllegalArgumentException("--backlog is at most " + NetStack.BACKLOG_CAPACITY);
                    }
                }
                case "--chunk" -> chunk = positive(a, v);
                case "--sink" -> {
                    if (!v.equals("skip") && !v.equals("read")) {
                        throw new IllegalArgumentException("--sink is skip or read");
                    }
                    read = v.equals("read");
                }
                case "--loops" -> {
                    List<Integer> l = new ArrayList<>();
                    for (String s : v.split(",")) {
                        int n = positive(a, s.trim());
                        if (n > 2) {
                            throw new IllegalArgumentException("--loops takes 1, 2 or 1,2");
                        }
                        if (!l.contains(n)) {
                            l.add(n);
                        }
                    }
                    loops = List.copyOf(l);
                }
                case "--json" -> json = Path.of(v);
                case "--set" -> {
                    int eq = v.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--set takes key=value, not '" + v + "'");
                    }
                    knobs.add(new String[] {v.substring(0, eq).trim(), v.substring(eq + 1).trim()});
                }
                case "--paths" -> paths = BenchSupport.paths(v, Stream.concat(ALL_PATHS.stream(), EXTRA_PATHS.stream()).toList());
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        return new Options(seconds, reps, warmup, paths, loops, json, backlog, read, chunk, List.copyOf(knobs));
    }

    int run() throws Exception {
        kns.addCleanupHook();
        String loadBefore = loadavg();
        String started = Instant.now().toString();
        System.out.printf(Locale.ROOT, "tcp-throughput: paths %s; %d rounds of %d s per row (rows interleaved round by round, median),"
                        + " warm-up %d s; usnet event loops %s; usnet receiver %s; net.core.netdev_max_backlog %d; load average before: %s%n",
                String.join(",", opt.paths()), opt.reps(), opt.seconds(), opt.warmup(), opt.loops(), opt.read() ? "reads (copies)" : "skips",
                opt.backlog(), loadBefore);
        List<Runner> runners = new ArrayList<>();
        List<Row> rows = new ArrayList<>();
        try {
            int k = 0;
            for (String p : opt.paths()) {
                if (p.startsWith("kernel")) {
                    runners.add(new KernelRunner(p, ++k));
                } else {
                    for (int loops : opt.loops()) {
                        runners.add(new UsnetRunner(p, loops));
                    }
                }
            }
            for (Runner x : runners) {
                rows.add(x.row());
                x.row().loadBefore = loadavg();
                System.out.printf(Locale.ROOT, "%n== set up %s (load average %s)%n", x.row().label(), x.row().loadBefore);
                try {
                    x.setUp();
                    System.out.println("  " + x.row().setup);
                    x.warmUp();
                } catch (Exception e) {
                    fail(x.row(), "setup", e);
                }
            }
            // Round by round, every row once per round: a change in the host's load hits every row alike.
            for (int rep = 1; rep <= opt.reps(); rep++) {
                System.out.printf(Locale.ROOT, "%n== round %d of %d (load average %s)%n", rep, opt.reps(), loadavg());
                for (Runner x : runners) {
                    if (x.row().error != null && x.row().gbps.isEmpty()) {
                        continue;
                    }
                    try {
                        x.rep(rep);
                    } catch (Exception e) {
                        fail(x.row(), "run " + rep, e);
                    }
                }
            }
        } finally {
            for (Runner x : runners) {
                x.row().loadAfter = loadavg();
                try {
                    x.close();
                } catch (RuntimeException e) {
                    System.err.println("tcp-throughput: closing " + x.row().label() + ": " + e);
                }
            }
            kns.close();
        }
        String loadAfter = loadavg();
        BenchSupport.report(table(rows, loadBefore, loadAfter), opt.json(), json(rows, started, loadBefore, loadAfter));
        kns.removeCleanupHook();
        return rows.stream().anyMatch(r -> r.error != null) ? 1 : 0;
    }

    private static void fail(Row r, String when, Exception e) {
        String msg = when + ": " + e;
        r.error = r.error == null ? msg : r.error + "; " + msg;
        System.out.println("  " + r.label() + " failed: " + msg);
    }

    /** One row's topology, alive for the whole run: set up and warmed once, then one measurement per round. */
    interface Runner extends AutoCloseable {
        Row row();

        void setUp() throws Exception;

        void warmUp() throws Exception;

        void rep(int rep) throws Exception;

        @Override
        void close();
    }

    // ---- kernel ----

    /** Two kernel namespaces joined by a veth pair, an iperf3 server in B; each run is {@code iperf3 -c -t N -J} from A. */
    final class KernelRunner implements Runner {
        final Row r;
        final int idx;
        final String port;
        final List<String> names = new ArrayList<>();
        String a;
        String b;
        Process srv;
        Path srvOut;

        KernelRunner(String path, int idx) {
            this.r = new Row(path, 0);
            this.idx = idx;
            this.port = Integer.toString(IPERF_PORT + idx);
        }

        @Override
        public Row row() {
            return r;
        }

        @Override
        public void setUp() throws Exception {
            a = kns.create("k" + idx + "a");
            names.add(a);
            b = kns.create("k" + idx + "b");
            names.add(b);
            kns.ip("-n", a, "link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", b);
            r.setup = "netns A veth0 " + NET + "1 <-> netns B veth0 " + NET + "2 (kernel veth pair, MTU 1500";
            if (r.path.equals("kernel-veth-1448")) {
                // One MSS per skb: TCP sizes its TSO/GSO packets to the device's gso_max_size.
                kns.ip("-n", a, "link", "set", "veth0", "gso_max_size", "1500");
                kns.ip("-n", b, "link", "set", "veth0", "gso_max_size", "1500");
                r.setup += ", gso_max_size 1500: one 1448-byte segment per skb)";
            } else {
                r.setup += ", TSO/GSO on as veth comes)";
            }
            r.setup += ", iperf3 " + iperfVersion();
            for (String[] s : new String[][] {{a, NET + "1/24"}, {b, NET + "2/24"}}) {
                kns.exec(s[0], "ip", "addr", "add", s[1], "dev", "veth0");
                kns.exec(s[0], "ip", "link", "set", "veth0", "up");
            }
            HostCommand.Result c = kns.tryExec(15, a, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", NET + "2");
            if (!c.ok()) {
                throw new IllegalStateException("no connectivity: " + lastLines(c.output(), 3));
            }
            srvOut = Files.createTempFile("usnet-tcpbench-iperf3-server", ".out");
            int life = opt.reps() * (opt.paths().size() * 2 + 1) * (opt.seconds() + 30) + opt.warmup() + 120;
            srv = Iperf3.startServer(kns, b, srvOut, life, NET + "2", port);
        }

        @Override
        public void warmUp() {
            if (opt.warmup() > 0) {
                Iperf3.warmUp(kns, a, NET + "2", port, opt.warmup());
            }
        }

        @Override
        public void rep(int rep) {
            long[] st0 = procStat();
            long t0 = System.nanoTime();
            HostCommand.Result run = Iperf3.client(kns, a, NET + "2", port, opt.seconds(), true);
            long wall = System.nanoTime() - t0;
            long[] st1 = procStat();
            double bps = iperfNumber(run.output(), "sum_received", "bits_per_second");
            double retr = iperfNumber(run.output(), "sum_sent", "retransmits");
            if (Double.isNaN(bps)) {
                throw new IllegalStateException("iperf3 exited " + run.exit() + ": " + lastLines(run.output(), 5));
            }
            r.gbps.add(bps / 1e9);
            r.retrans.add(Double.isNaN(retr) ? -1L : (long) retr);
            r.hostCpu.add(hostCpuPct(st0, st1));
            System.out.printf(Locale.ROOT, "  %-26s %6.2f Gbit/s, %d retransmits, host CPU %.0f %% (iperf3, %.1f s)%n", r.label(),
                    bps / 1e9, r.retrans.getLast(), r.hostCpu.getLast(), wall / 1e9);
        }

        @Override
        public void close() {
            if (srv != null) {
                kns.kill(srv);
            }
            if (srvOut != null) {
                try {
                    Files.deleteIfExists(srvOut);
                } catch (IOException e) {
                    // a temporary file
                }
            }
            kns.delete(names);
        }
    }

    private static String iperfVersion() {
        String v = HostCommand.run(5, "iperf3", "--version").output().strip();
        int nl = v.indexOf('\n');
        return nl < 0 ? v : v.substring(0, nl);
    }

    /** A number from an iperf3 -J report: the first {@code key} inside the object named {@code section}. */
    static double iperfNumber(String json, String section, String key) {
        int s = json.lastIndexOf("\"" + section + "\"");
        if (s < 0) {
            return Double.NaN;
        }
        int close = json.indexOf('}', s);
        Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*([-0-9.eE+]+)").matcher(json);
        if (!m.find(s) || close >= 0 && m.start() > close) {
            return Double.NaN;
        }
        return Double.parseDouble(m.group(1));
    }

    // ---- usnet ----

    /** Two usnet namespaces over one in-JVM veth pair, on one or two epoll event loops, TCP installed in both. */
    final class UsnetPair implements AutoCloseable {
        final MultiThreadIoEventLoopGroup group;
        final IoEventLoop loopA;
        final IoEventLoop loopB;
        final NetStack a;
        final NetStack b;
        final VethEnd[] veth;
        final long[] threadIds;
        Tcp tcpA;
        Tcp tcpB;
        TcpListener listener;
        final ByteBuf src;
        final ByteBuf readBuf;
        DiscardSink sink;

        UsnetPair(int loops, boolean gso, boolean csumOffload) throws Exception {
            group = new MultiThreadIoEventLoopGroup(loops, EpollIoHandler.newFactory());
            loopA = (IoEventLoop) group.next();
            loopB = loops == 1 ? loopA : (IoEventLoop) group.next();
            a = new NetStack("tcp-a", new RealTimeScheduler(loopA), 1);
            b = new NetStack("tcp-b", new RealTimeScheduler(loopB), 2);
            veth = VethEnd.createPair(a, "veth0", MAC_A, b, "veth0", MAC_B);
            threadIds = loopB == loopA ? new long[] {LoopThreads.threadId(loopA)}
                    : new long[] {LoopThreads.threadId(loopA), LoopThreads.threadId(loopB)};
            src = PooledByteBufAllocator.DEFAULT.directBuffer(opt.chunk(), opt.chunk());
            for (int i = 0; i < opt.chunk(); i++) {
                src.writeByte(i * 31 + 7);
            }
            readBuf = opt.read() ? PooledByteBufAllocator.DEFAULT.directBuffer(256 * 1024, 256 * 1024) : null;
            onA(() -> {
                setupEnd(a, veth[0], NET + "1", gso, csumOffload);
                tcpA = Tcp.install(a);
                return null;
            });
            onB(() -> {
                setupEnd(b, veth[1], NET + "2", gso, csumOffload);
                tcpB = Tcp.install(b);
                listener = tcpB.listen(0, USNET_PORT, 16, child -> {
                    DiscardSink s = new DiscardSink(readBuf);
                    s.sock = child;
                    sink = s;
                    child.setCallbacks(s);
                });
                return null;
            });
        }

        private void setupEnd(NetStack s, VethEnd v, String addr, boolean gso, boolean csumOffload) {
            s.knobs().set("net.core.netdev_max_backlog", Integer.toString(opt.backlog()));
            for (String[] kv : opt.knobs()) {
                s.knobs().set(kv[0], kv[1]);
            }
            v.setGsoOffload(gso);
            v.setTxChecksumOffload(csumOffload);
            v.setUp(true);
            s.devinet().add(v, Ipv4Addr.parse(addr), 24);
        }

        <T> T onA(Callable<T> task) throws Exception {
            return loopA.submit(task).get(10, TimeUnit.SECONDS);
        }

        <T> T onB(Callable<T> task) throws Exception {
            return loopB.submit(task).get(10, TimeUnit.SECONDS);
        }

        long cpuNanos() {
            return LoopThreads.cpuNanos(threadIds);
        }

        long allocatedBytes() {
            return LoopThreads.allocatedBytes(threadIds);
        }

        long drops() {
            return a.drops().total() + b.drops().total();
        }

        @Override
        public void close() {
            try {
                onA(() -> {
                    a.close();
                    return null;
                });
                onB(() -> {
                    b.close();
                    return null;
                });
            } catch (Exception e) {
                System.err.println("tcp-throughput: closing usnet namespaces: " + e);
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
            src.release();
            if (readBuf != null) {
                readBuf.release();
            }
        }
    }

    /**
     * Counters at one instant of a usnet run (sender's taken on its loop, receiver's on its loop). Frames are the
     * veth ends' tx packet counts: the sender's are its data segments (a GSO super-segment is one frame), the
     * receiver's its ACKs.
     */
    record Sample(long nanos, long acked, long retrans, long dataFrames, long rcvBytes, long ackFrames, long drops,
            long backlogDrops, long procCpu, long loopCpu, long alloc, long gcCount, long[] stat, String info,
            Map<Mib, Long> mibA, Map<Mib, Long> mibB) {}

    private Sample sample(UsnetPair u, TcpSock s, boolean withInfo) throws Exception {
        long[] stat = procStat();
        long procCpu = os.getProcessCpuTime();
        long loopCpu = u.cpuNanos();
        long alloc = u.allocatedBytes();
        long gc = gcCount();
        long[] snd = u.onA(() -> {
            TcpInfo i = s.info();
            return new long[] {System.nanoTime(), i.bytesAcked(), i.totalRetrans(), frames(u.a, u.veth[0])};
        });
        String info = withInfo ? u.onA(() -> s.info().format()) : null;
        long[] rcv = u.onB(() -> {
            DiscardSink k = u.sink;
            return new long[] {k == null ? 0 : k.bytes, frames(u.b, u.veth[1]),
                    u.b.drops().get(DropReason.BACKLOG_FULL) + u.a.drops().get(DropReason.BACKLOG_FULL)};
        });
        return new Sample(snd[0], snd[1], snd[2], snd[3], rcv[0], rcv[1], u.drops(), rcv[2], procCpu, loopCpu, alloc, gc,
                stat, info, u.a.mib().snapshot(), u.b.mib().snapshot());
    }

    /** Frames {@code v} transmitted, less ARP: TCP segments (GSO super-segments count once). */
    private static long frames(NetStack s, VethEnd v) {
        return v.stats().txPackets - s.mib().get(Mib.ArpOutRequests) - s.mib().get(Mib.ArpOutReplies);
    }

    /** Two usnet namespaces kept for the whole run; each run is a new connection measured after 1 s of settling. */
    final class UsnetRunner implements Runner {
        final Row r;
        final boolean gso;
        final boolean csum;
        UsnetPair u;

        UsnetRunner(String path, int loops) {
            this.r = new Row(path, loops);
            this.gso = path.equals("usnet-64k");
            this.csum = !path.endsWith("-swcsum");
        }

        @Override
        public Row row() {
            return r;
        }

        @Override
        public void setUp() throws Exception {
            u = new UsnetPair(r.loops, gso, csum);
            r.setup = String.format(Locale.ROOT, "usnet netns tcp-a veth0 %s1 <-> tcp-b veth0 %s2 (in-JVM veth, MTU 1500, GSO %s, "
                            + "tx checksum offload %s), %s, netdev_max_backlog %d, tcp_wmem/tcp_rmem max %s / %s, receiver %s",
                    NET, NET, gso ? "on" : "off", csum ? "on" : "off",
                    r.loops == 1 ? "both namespaces on one epoll event loop" : "one epoll event loop per namespace",
                    opt.backlog(), u.a.knobs().getLongs("net.ipv4.tcp_wmem")[2], u.a.knobs().getLongs("net.ipv4.tcp_rmem")[2],
                    opt.read() ? "reads (copies) into a 256 KiB buffer" : "skips (no copy)");
            for (String[] kv : opt.knobs()) {
                r.setup += ", " + kv[0] + "=" + kv[1];
            }
        }

        @Override
        public void warmUp() throws Exception {
            if (opt.warmup() > 0) {
                // Untimed: the JIT compiles the data path (once per JVM; every row warms its own connection).
                oneUsnetRep(u, r, 0, opt.warmup() * 1000L);
            }
        }

        @Override
        public void rep(int rep) throws Exception {
            oneUsnetRep(u, r, rep, opt.seconds() * 1000L);
        }

        @Override
        public void close() {
            if (u != null) {
                u.close();
            }
        }
    }

    /** One connection: settle 1 s, measure {@code ms}; {@code rep} 0 is the untimed warm-up (nothing recorded). */
    private void oneUsnetRep(UsnetPair u, Row r, int rep, long ms) throws Exception {
        BulkSender sender = new BulkSender(u.src);
        UsnetPair pair = u;
        pair.onB(() -> {
            pair.sink = null;
            return null;
        });
        TcpSock s = u.onA(() -> pair.tcpA.connect(ADDR_B, USNET_PORT, sender));
        await(() -> sender.connected || sender.closed, 5_000, "connect");
        if (!sender.connected) {
            throw new IllegalStateException("connect failed: " + sender.closedWith);
        }
        // Slow start and the first ramp of cwnd are over well within a second on a veth.
        Thread.sleep(1000L);
        Sample s0 = sample(u, s, false);
        Thread.sleep(ms);
        Sample s1 = sample(u, s, true);
        u.onA(() -> {
            sender.stop();
            s.abort();
            return null;
        });
        await(() -> {
            try {
                return pair.onB(() -> pair.sink == null || pair.sink.closed || pair.sink.sock.state() == TcpState.CLOSED);
            } catch (Exception e) {
                return true;
            }
        }, 5_000, "receiver close");
        double secs = (s1.nanos() - s0.nanos()) / 1e9;
        double wall = secs * 1e9;
        if (rep == 0) {
            System.out.printf(Locale.ROOT, "  warm-up: %.2f Gbit/s over %.1f s%n", (s1.acked() - s0.acked()) * 8 / secs / 1e9, secs);
            return;
        }
        long acked = s1.acked() - s0.acked();
        long segs = s1.dataFrames() - s0.dataFrames();
        r.gbps.add(acked * 8 / secs / 1e9);
        r.rcvGbps.add((s1.rcvBytes() - s0.rcvBytes()) * 8 / secs / 1e9);
        r.retrans.add(s1.retrans() - s0.retrans());
        r.drops.add(s1.drops() - s0.drops());
        r.jvmCpu.add(100.0 * (s1.procCpu() - s0.procCpu()) / wall);
        r.loopCpu.add(100.0 * (s1.loopCpu() - s0.loopCpu()) / wall);
        r.hostCpu.add(hostCpuPct(s0.stat(), s1.stat()));
        r.allocPerSeg.add(segs == 0 ? Double.NaN : (double) (s1.alloc() - s0.alloc()) / segs);
        r.avgSegBytes.add(segs == 0 ? Double.NaN : (double) acked / segs);
        r.acksPerSeg.add(segs == 0 ? Double.NaN : (double) (s1.ackFrames() - s0.ackFrames()) / segs);
        r.gcs.add(s1.gcCount() - s0.gcCount());
        r.lastInfo = s1.info();
        System.out.printf(Locale.ROOT, "  %-26s %6.2f Gbit/s (%.1f s), %d retransmits, %d drops (%d backlog), %.0f B/data frame,"
                        + " %.2f ACKs/data frame, JVM CPU %.0f %% (loops %.0f %%), host CPU %.0f %%, loop threads allocated %.1f B/data frame,"
                        + " %d GCs%n", r.label(), r.gbps.getLast(), secs, r.retrans.getLast(), r.drops.getLast(),
                s1.backlogDrops() - s0.backlogDrops(), r.avgSegBytes.getLast(), r.acksPerSeg.getLast(), r.jvmCpu.getLast(),
                r.loopCpu.getLast(), r.hostCpu.getLast(), r.allocPerSeg.getLast(), r.gcs.getLast());
        System.out.println("    sender: " + s1.info());
        r.nstat = "sender " + mibDelta(s0.mibA(), s1.mibA()) + "; receiver " + mibDelta(s0.mibB(), s1.mibB());
        System.out.println("    nstat deltas (TCP): " + r.nstat);
    }

    /** The TCP counters that changed between two snapshots, as {@code nstat} would print them. */
    private static String mibDelta(Map<Mib, Long> a, Map<Mib, Long> b) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Mib, Long> e : b.entrySet()) {
            String n = e.getKey().name();
            long d = e.getValue() - a.getOrDefault(e.getKey(), 0L);
            if (d != 0 && n.startsWith("Tcp")) {
                sb.append(sb.isEmpty() ? "" : " ").append(n).append('=').append(d);
            }
        }
        return sb.toString();
    }

    private static void await(BooleanSupplier done, long ms, String what) throws InterruptedException {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException(what + ": timed out after " + ms + " ms");
            }
            Thread.sleep(10);
        }
    }

    private static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, g.getCollectionCount());
        }
        return n;
    }

    // ---- report ----

    private static Row kernelRow(List<Row> rows) {
        return rows.stream().filter(r -> r.path.equals("kernel-veth") && !r.gbps.isEmpty()).findFirst().orElse(null);
    }

    private String table(List<Row> rows, String loadBefore, String loadAfter) {
        Row k = kernelRow(rows);
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "tcp-throughput: %d rounds x %d s per row, rows interleaved (median; %d s untimed warm-up"
                        + " per row; usnet: new connection per run, measured after 1 s), usnet receiver %s, netdev_max_backlog %d,"
                        + " %d CPUs%n", opt.reps(), opt.seconds(), opt.warmup(), opt.read() ? "reads" : "skips", opt.backlog(),
                Runtime.getRuntime().availableProcessors()));
        String fmt = "%-27s | %8s | %13s | %9s | %11s | %8s | %9s | %10s | %10s | %8s | %s%n";
        b.append(String.format(Locale.ROOT, fmt, "path", "Gbit/s", "min–max", "× kernel", "retrans/run", "drops", "JVM CPU %",
                "loop CPU %", "host CPU %", "B/seg", "alloc B/seg (loop threads)"));
        b.append("----------------------------+----------+---------------+-----------+-------------+----------+-----------+------------+"
                + "------------+----------+---------------------------\n");
        for (Row r : rows) {
            if (r.gbps.isEmpty()) {
                b.append(String.format(Locale.ROOT, fmt, r.label(), "FAILED", "", "", "", "", "", "", "", "", r.error == null ? "" : r.error));
                continue;
            }
            String ratio = k == null ? "n/a" : String.format(Locale.ROOT, "%.2f×", r.median() / k.median());
            b.append(String.format(Locale.ROOT, fmt, r.label(), f2(r.median()),
                    String.format(Locale.ROOT, "%.2f–%.2f", min(r.gbps), max(r.gbps)), ratio, medianLong(r.retrans),
                    r.usnet() ? medianLong(r.drops) : "—", r.usnet() ? f0(median(r.jvmCpu)) : "—",
                    r.usnet() ? f0(median(r.loopCpu)) : "—", f0(median(r.hostCpu)), r.usnet() ? f0(median(r.avgSegBytes)) : "—",
                    r.usnet() ? String.format(Locale.ROOT, "%.2f", median(r.allocPerSeg)) : "—")
                    .replaceAll("\\s+$", "") + (r.error != null ? "  [" + r.error + "]" : "") + "\n");
        }
        b.append("CPU % of one core (200 % = both cores of a 2-CPU host). B/seg = payload bytes per data frame the sender's veth\n"
                + "sent (a GSO super-segment is one frame; at most 65160 = 45 MSS). alloc B/seg = bytes the event-loop threads\n"
                + "allocated (ThreadMXBean) per data frame, all their work included.\n");
        b.append("\nTargets (from the issue, ratio of medians in this run):\n");
        target(b, rows, k, "usnet-64k", 1.0);
        target(b, rows, k, "usnet-1448", 0.3);
        for (String p : List.of("usnet-1448", "usnet-64k", "usnet-1448-swcsum")) {
            Row one = rows.stream().filter(r -> r.path.equals(p) && r.loops == 1 && !r.gbps.isEmpty()).findFirst().orElse(null);
            Row two = rows.stream().filter(r -> r.path.equals(p) && r.loops == 2 && !r.gbps.isEmpty()).findFirst().orElse(null);
            if (one != null && two != null) {
                b.append(String.format(Locale.ROOT, "  %-16s 2 loops / 1 loop: %.2f× (%s is better here)%n", p,
                        two.median() / one.median(), two.median() > one.median() ? "2 loops" : "1 loop"));
            }
        }
        b.append(String.format(Locale.ROOT, "%nLoad average before: %s; after: %s%n", loadBefore, loadAfter));
        return b.toString();
    }

    private static void target(StringBuilder b, List<Row> rows, Row k, String path, double want) {
        Row best = rows.stream().filter(r -> r.path.equals(path) && !r.gbps.isEmpty())
                .max((x, y) -> Double.compare(x.median(), y.median())).orElse(null);
        if (best == null) {
            return;
        }
        if (k == null) {
            b.append(String.format(Locale.ROOT, "  %-16s >= %.1f× kernel-veth: n/a (kernel-veth not measured)%n", path, want));
            return;
        }
        double x = best.median() / k.median();
        b.append(String.format(Locale.ROOT, "  %-16s >= %.1f× kernel-veth (%.2f Gbit/s): best %s %.2f Gbit/s = %.2f×  %s%n", path, want,
                k.median(), best.label(), best.median(), x, x >= want ? "MET" : "NOT MET"));
    }

    private String json(List<Row> rows, String started, String loadBefore, String loadAfter) {
        Row k = kernelRow(rows);
        StringBuilder j = new StringBuilder();
        j.append("{\n  \"benchmark\": \"tcp-throughput\",\n  \"started\": ").append(quote(started));
        j.append(",\n  \"options\": {\"seconds\": ").append(opt.seconds()).append(", \"reps\": ").append(opt.reps())
                .append(", \"warmup_s\": ").append(opt.warmup()).append(", \"loops\": ").append(opt.loops())
                .append(", \"netdev_max_backlog\": ").append(opt.backlog()).append(", \"usnet_knobs\": ")
                .append(quote(opt.knobs().stream().map(kv -> kv[0] + "=" + kv[1]).toList().toString())).append(", \"sink\": ")
                .append(quote(opt.read() ? "read" : "skip")).append(", \"chunk\": ").append(opt.chunk()).append("}");
        j.append(",\n  \"host\": ").append(BenchSupport.hostJson(loadBefore, loadAfter)).append(",\n  \"rows\": [");
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            j.append(i == 0 ? "\n" : ",\n").append("    {\"path\": ").append(quote(r.path)).append(", \"event_loops\": ")
                    .append(r.usnet() ? Integer.toString(r.loops) : "null").append(", \"setup\": ").append(quote(r.setup))
                    .append(", \"ok\": ").append(r.error == null).append(", \"error\": ").append(quote(r.error))
                    .append(", \"gbps\": ").append(list(r.gbps)).append(", \"receiver_gbps\": ").append(list(r.rcvGbps))
                    .append(", \"gbps_median\": ")
                    .append(num(r.gbps.isEmpty() ? Double.NaN : r.median())).append(", \"ratio_to_kernel_veth\": ")
                    .append(num(k == null || r.gbps.isEmpty() ? Double.NaN : r.median() / k.median()))
                    .append(", \"retransmits\": ").append(r.retrans).append(", \"drops\": ").append(r.drops)
                    .append(", \"jvm_cpu_pct\": ").append(list(r.jvmCpu)).append(", \"loop_cpu_pct\": ").append(list(r.loopCpu))
                    .append(", \"host_cpu_pct\": ").append(list(r.hostCpu)).append(", \"payload_bytes_per_data_frame\": ")
                    .append(list(r.avgSegBytes)).append(", \"acks_per_data_frame\": ").append(list(r.acksPerSeg))
                    .append(", \"loop_alloc_bytes_per_data_frame\": ").append(list(r.allocPerSeg)).append(", \"gc_count\": ")
                    .append(r.gcs).append(", \"sender_tcp_info\": ").append(quote(r.lastInfo))
                    .append(", \"nstat_last_run\": ").append(quote(r.nstat)).append(", \"loadavg_before\": ")
                    .append(quote(r.loadBefore)).append(", \"loadavg_after\": ").append(quote(r.loadAfter)).append('}');
        }
        j.append("\n  ]\n}\n");
        return j.toString();
    }

    // ---- helpers ----

    /** Busy and total jiffies of all CPUs from /proc/stat (busy = total - idle - iowait). */
    private static long[] procStat() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
            long total = 0;
            for (int i = 1; i < Math.min(f.length, 9); i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            return new long[] {total - idle, total};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, 0};
        }
    }

    /** Host CPU busy between two /proc/stat samples, in % of one core. */
    private static double hostCpuPct(long[] a, long[] b) {
        long total = b[1] - a[1];
        return total <= 0 ? Double.NaN : 100.0 * (b[0] - a[0]) / total * Runtime.getRuntime().availableProcessors();
    }

    private static String medianLong(List<Long> xs) {
        if (xs.isEmpty()) {
            return "—";
        }
        long[] a = xs.stream().mapToLong(Long::longValue).sorted().toArray();
        return Long.toString(a[a.length / 2]);
    }

    private static String f0(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.0f", v);
    }

    private static String f2(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.2f", v);
    }
}
