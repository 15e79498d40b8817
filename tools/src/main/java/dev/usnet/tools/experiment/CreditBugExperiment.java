package dev.usnet.tools.experiment;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.app.AppConfig;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tcp.app.BurstApp;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.KernelPreset;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The 2015 netns + bridge + veth regression (bisected to 9949afa4, the 3.19 credit bug) as one run: two
 * namespaces joined by veth + a learning bridge with microsecond RTTs, where the only queue is the
 * receiver's 1000-packet backlog (modelled by the bridge port's link
 * emulation: the port toward the receiver drains at the link rate and holds at most {@code queueLimit}
 * frames). An MPI-like burst app alternates cwnd-limited bursts with idle compute phases over CUBIC, once per
 * kernel preset, in virtual time. Per preset: the cwnd trace, the bursts, a plot; and a summary table.
 */
public final class CreditBugExperiment {
    /** What to run. */
    public record Params(List<KernelPreset> kernels, long seed, int bursts, int burstBytes, long computeNanos,
                         long rateBps, long oneWayDelayNanos, int queueLimit, int hz, boolean gso,
                         java.util.Map<String, String> knobs) {
        public static Params defaults() {
            return new Params(List.of(KernelPreset.values()), 1, 300, 2 << 20, 100_000_000L, 10_000_000_000L,
                    10_000L, 1000, 1000, false, java.util.Map.of());
        }

        public Params withKernels(List<KernelPreset> k) {
            return new Params(k, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withSeed(long s) {
            return new Params(kernels, s, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withBursts(int n) {
            return new Params(kernels, seed, n, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withBurstBytes(int n) {
            return new Params(kernels, seed, bursts, n, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withComputeNanos(long n) {
            return new Params(kernels, seed, bursts, burstBytes, n, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withRateBps(long r) {
            return new Params(kernels, seed, bursts, burstBytes, computeNanos, r, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withQueueLimit(int q) {
            return new Params(kernels, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, q, hz, gso, knobs);
        }

        /** Knobs for both end namespaces after the preset, e.g. one switch overridden: usnet.tcp.ai=per-ack. */
        public Params withKnobs(java.util.Map<String, String> k) {
            return new Params(kernels, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso,
                    java.util.Map.copyOf(k));
        }

    }

    /** One preset's outcome. */
    public record PresetResult(KernelPreset kernel, List<BurstApp.Burst> bursts, TcpTrace trace, long startNanos,
                               Histogram completion, long retransmits, long rtos, long largestJump,
                               long largestJumpAtNanos, long maxCwnd, long queueDrops, AppResult app) {

        public double completionUs(double pct) {
            return completion.getValueAtPercentile(pct) / 1000.0;
        }
    }

    private static final int PORT = 5001;

    private CreditBugExperiment() {}

    /** Runs every preset of {@code p}; writes CSVs, plots and the summary into {@code out} when it is not null. */
    public static List<PresetResult> run(Params p, Path out) throws IOException {
        return run(p, out, r -> {});
    }

    /** As above, handing each preset's result to {@code done} as soon as that preset has run (for progress). */
    public static List<PresetResult> run(Params p, Path out, java.util.function.Consumer<PresetResult> done) throws IOException {
        List<PresetResult> results = new ArrayList<>();
        for (KernelPreset k : p.kernels()) {
            PresetResult r = runOne(p, k);
            results.add(r);
            done.accept(r);
        }
        if (out != null) {
            write(p, results, out);
        }
        return results;
    }

    static PresetResult runOne(Params p, KernelPreset k) {
        VirtualScheduler sched = new VirtualScheduler();
        try (NamespaceRegistry reg = new NamespaceRegistry(n -> sched, p.seed())) {
            NetNamespace n1 = reg.create("node1");
            NetNamespace n2 = reg.create("node2");
            NetNamespace host = reg.create("host");
            for (NetNamespace ns : List.of(n1, n2)) {
                ns.stack().knobs().set("usnet.tcp.kernel", k.label());
                ns.stack().knobs().set("net.ipv4.tcp_congestion_control", "cubic");
                ns.stack().knobs().set("usnet.hz", Integer.toString(p.hz()));
                for (var e : new java.util.TreeMap<>(p.knobs()).entrySet()) {
                    ns.stack().knobs().set(e.getKey(), e.getValue());
                }
            }
            Bridge br = new Bridge("br0", NamespaceRegistry.macFor("host/br0"));
            host.stack().register(br);
            VethEnd[] a = reg.createVeth(n1, "eth0", host, "veth1");
            VethEnd[] b = reg.createVeth(n2, "eth0", host, "veth2");
            for (VethEnd[] pair : List.of(a, b)) {
                for (VethEnd e : pair) {
                    e.setGsoOffload(p.gso());
                    e.setTxChecksumOffload(p.gso());
                    e.setUp(true);
                }
                br.addPort(pair[1]);
            }
            br.setUp(true);
            n1.stack().devinet().add(a[0], Ipv4Addr.parse("198.18.0.1"), 24);
            n2.stack().devinet().add(b[0], Ipv4Addr.parse("198.18.0.2"), 24);
            // The data direction drains into node2 at the link rate through a queue of queueLimit frames: the
            // receive backlog. ACKs come back over the other port with the same propagation delay.
            NetemParams toReceiver = NetemParams.NONE.withRate(p.rateBps()).withDelay(p.oneWayDelayNanos())
                    .withLimit(p.queueLimit());
            NetemParams toSender = NetemParams.NONE.withDelay(p.oneWayDelayNanos()).withLimit(p.queueLimit());
            br.port(b[1]).setNetem(toReceiver);
            br.port(a[1]).setNetem(toSender);

            AppConfig cfg = AppConfig.defaults().withPort(PORT).withCongestionControl("cubic").withCount(p.bursts());
            BurstApp.Params bp = BurstApp.Params.of(p.burstBytes(), p.computeNanos());
            BurstApp.Server server = BurstApp.server(n2.stack(), cfg, bp);
            server.start();
            List<BurstApp.Burst> bursts = new ArrayList<>();
            TcpTrace trace = new TcpTrace();
            BurstApp.Client client = BurstApp.client(n1.stack(), Ipv4Addr.parse("198.18.0.2"), cfg, bp);
            client.observer(bursts::add);
            client.setTrace(trace);
            long start = sched.nanoTime();
            client.start();
            // Virtual time: run until the client is done (bounded so a stall cannot hang the run).
            long limit = start + 3_600_000_000_000L;
            while (!client.isDone() && sched.nanoTime() < limit) {
                long next = sched.nextEventTime();
                if (next < 0) {
                    break;
                }
                sched.runUntil(next);
            }
            if (!client.isDone()) {
                throw new IllegalStateException("preset " + k.label() + ": the burst app did not finish (stalled at "
                        + sched.nanoTime() / 1_000_000 + " ms virtual)");
            }
            AppResult app = client.result();
            Histogram h = new Histogram(3);
            long retrans = 0;
            long rtos = 0;
            for (BurstApp.Burst bu : bursts) {
                h.recordValue(Math.max(1, bu.completionNanos()));
                retrans += bu.retransmits();
                rtos += bu.timeouts();
            }
            long jump = 0;
            long jumpAt = 0;
            long maxCwnd = 0;
            for (int r = 0; r < trace.rows(); r++) {
                maxCwnd = Math.max(maxCwnd, trace.cwnd(r));
                // Growth from one ACK in the Open state: recovery exits (cwnd set back to ssthresh) do not count.
                if (r > 0 && "ack".equals(trace.event(r)) && trace.caState(r) == CaState.OPEN
                        && trace.caState(r - 1) == CaState.OPEN) {
                    long d = trace.cwnd(r) - trace.cwnd(r - 1);
                    if (d > jump) {
                        jump = d;
                        jumpAt = trace.timeNanos(r);
                    }
                }
            }
            long qdrops = host.stack().drops().get(DropReason.NETEM_QUEUE_FULL);
            PresetResult res = new PresetResult(k, bursts, trace, start, h, retrans, rtos, jump, jumpAt - start,
                    maxCwnd, qdrops, app);
            server.stop();
            // Let the close handshake and TIME-WAIT finish in virtual time before the namespaces go.
            sched.runFor(200_000_000_000L);
            return res;
        }
    }

    private static void write(Params p, List<PresetResult> results, Path out) throws IOException {
        Files.createDirectories(out);
        List<String> names = new ArrayList<>();
        List<TcpTrace> traces = new ArrayList<>();
        List<Long> starts = new ArrayList<>();
        for (PresetResult r : results) {
            String k = r.kernel().label();
            try (Writer w = Files.newBufferedWriter(out.resolve("trace-" + k + ".csv"), StandardCharsets.UTF_8)) {
                r.trace().writeCsv(w);
            }
            try (Writer w = Files.newBufferedWriter(out.resolve("bursts-" + k + ".csv"), StandardCharsets.UTF_8)) {
                w.write("burst,start_us,completion_us,retransmits,rtos,cwnd_start,cwnd_end\n");
                for (BurstApp.Burst b : r.bursts()) {
                    w.write(String.format(Locale.ROOT, "%d,%.3f,%.3f,%d,%d,%d,%d%n", b.index(),
                            (b.startNanos() - r.startNanos()) / 1000.0, b.completionNanos() / 1000.0, b.retransmits(),
                            b.timeouts(), b.cwndStart(), b.cwndEnd()));
                }
            }
            TracePlot.writeOne(out.resolve("cwnd-" + k + ".png"), "CUBIC, usnet.tcp.kernel=" + k
                    + ": snd_cwnd, snd_ssthresh, snd_cwnd_cnt per ACK", r.trace(), r.startNanos());
            names.add(k);
            traces.add(r.trace());
            starts.add(r.startNanos());
        }
        TracePlot.writeOverlay(out.resolve("cwnd-all.png"), "snd_cwnd per kernel preset (same bursts, same seed)",
                names, traces, starts);
        Files.writeString(out.resolve("summary.txt"), summary(p, results), StandardCharsets.UTF_8);
    }

    /** The summary table, as printed and written to summary.txt. */
    public static String summary(Params p, List<PresetResult> results) {
        return header(p) + table(results);
    }

    /** What is being run: the summary's first lines, printed before the first preset starts. */
    public static String header(Params p) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT,
                "credit-bug: %d bursts of %d bytes, %.3f ms compute, CUBIC, link %s, one-way delay %.1f us, "
                        + "receive queue %d frames, HZ %d, %s, seed %d%n",
                p.bursts(), p.burstBytes(), p.computeNanos() / 1e6, rate(p.rateBps()), p.oneWayDelayNanos() / 1e3,
                p.queueLimit(), p.hz(), p.gso() ? "TSO/GSO on (stretch ACKs)" : "1448-byte segments", p.seed()));
        if (!p.knobs().isEmpty()) {
            b.append("knobs on both ends: ").append(new java.util.TreeMap<>(p.knobs())).append('\n');
        }
        return b.toString();
    }

    /** The per-preset table of the summary. */
    public static String table(List<PresetResult> results) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-6s %12s %12s %12s %8s %6s %14s %9s %11s%n", "kernel", "burst p50 us",
                "burst p99 us", "burst max us", "retrans", "RTOs", "max cwnd jump", "max cwnd", "queue drops"));
        for (PresetResult r : results) {
            b.append(String.format(Locale.ROOT, "%-6s %12.1f %12.1f %12.1f %8d %6d %14s %9d %11d%n",
                    r.kernel().label(), r.completionUs(50), r.completionUs(99), r.completion().getMaxValue() / 1000.0,
                    r.retransmits(), r.rtos(), r.largestJump() + " @" + r.largestJumpAtNanos() / 1_000_000 + "ms",
                    r.maxCwnd(), r.queueDrops()));
        }
        return b.toString();
    }

    private static String rate(long bps) {
        if (bps % 1_000_000_000L == 0) {
            return bps / 1_000_000_000L + " Gbit/s";
        }
        return bps / 1_000_000L + " Mbit/s";
    }
}
