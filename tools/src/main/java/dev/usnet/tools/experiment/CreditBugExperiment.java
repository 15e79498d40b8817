package dev.usnet.tools.experiment;

import dev.usnet.core.netem.NetemSysctl;
import dev.usnet.tools.app.App;
import dev.usnet.tools.app.TcpApp;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tcp.app.BurstApp;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.KernelPreset;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Knob;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.TcpBurst;
import dev.usnet.tools.topology.file.TopologySpec.TcpCommon;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.tools.run.VirtualRun;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.HdrHistogram.Histogram;

/**
 * The 2015 netns + bridge + veth regression (bisected to 9949afa4, the 3.19 credit bug) as one run per kernel
 * preset of the topology file {@code examples/credit-bug.yaml}: two namespaces joined by veth + a learning bridge
 * with microsecond RTTs, where the only queue is the receiver's 1000-packet backlog (the link emulation of the
 * bridge port toward the receiver), and an MPI-like burst app alternating cwnd-limited bursts with idle compute
 * phases over CUBIC. The file is built by the topology builder and run in virtual time by {@link VirtualRun},
 * with the preset and the command's options set as knobs and app settings of the file. Per preset: the cwnd
 * trace, the bursts, a plot; and a summary table.
 */
public final class CreditBugExperiment {
    /** The bundled copy of examples/credit-bug.yaml (tools/pom.xml puts it on the classpath). */
    static final String RESOURCE = "/examples/credit-bug.yaml";

    /**
     * What to run: the topology file, and the settings the experiment applies to it (read from the file by
     * {@link #of}, then changed by the {@code with*} methods or the command's options).
     */
    public record Params(TopologySpec topology, List<KernelPreset> kernels, long seed, int bursts, int burstBytes,
                         long computeNanos, long rateBps, long oneWayDelayNanos, int queueLimit, int hz, boolean gso,
                         Map<String, String> knobs) {

        /** The settings of the bundled examples/credit-bug.yaml, every preset. */
        public static Params defaults() {
            return of(bundledTopology());
        }

        /**
         * The settings {@code t} has: its seed, its burst app's count, burst size and compute time, the rate,
         * delay and limit of the link emulation toward the app's server, its usnet.hz and gso; the four presets
         * of the 2015 regression (3.18 to 4.3; 6.x only when asked for), as the command's --kernel default.
         */
        public static Params of(TopologySpec t) {
            Shape s = Shape.of(t);
            NetemParams toReceiver = s.netem(t, s.toReceiver);
            Knob hz = Shape.knob(t, s.client, "usnet.hz");
            Boolean gso = s.toReceiver.link().gso();
            return new Params(t, List.of(KernelPreset.V3_18, KernelPreset.V3_19, KernelPreset.V4_0, KernelPreset.V4_3), t.seed(), (int) s.app.common().count(), s.app.burstBytes(),
                    s.app.computeNanos(), toReceiver.rateBitsPerSecond(), toReceiver.delayNanos(), toReceiver.limit(),
                    hz == null ? 1000 : hz(hz), gso != null && gso, Map.of());
        }

        private static int hz(Knob k) {
            try {
                return Integer.parseInt(k.value().trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(k.where().error("usnet.hz: expected an integer 100..1000, got \""
                        + k.value() + "\""));
            }
        }

        public Params withKernels(List<KernelPreset> k) {
            return new Params(topology, k, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withSeed(long s) {
            return new Params(topology, kernels, s, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withBursts(int n) {
            return new Params(topology, kernels, seed, n, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withBurstBytes(int n) {
            return new Params(topology, kernels, seed, bursts, n, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withComputeNanos(long n) {
            return new Params(topology, kernels, seed, bursts, burstBytes, n, rateBps, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withRateBps(long r) {
            return new Params(topology, kernels, seed, bursts, burstBytes, computeNanos, r, oneWayDelayNanos, queueLimit, hz, gso, knobs);
        }

        public Params withOneWayDelayNanos(long d) {
            return new Params(topology, kernels, seed, bursts, burstBytes, computeNanos, rateBps, d, queueLimit, hz, gso, knobs);
        }

        public Params withQueueLimit(int q) {
            return new Params(topology, kernels, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, q, hz, gso, knobs);
        }

        public Params withHz(int h) {
            return new Params(topology, kernels, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, h, gso, knobs);
        }

        public Params withGso(boolean g) {
            return new Params(topology, kernels, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, g, knobs);
        }

        /** Knobs for both end namespaces after the preset, e.g. one switch overridden: usnet.tcp.ai=per-ack. */
        public Params withKnobs(Map<String, String> k) {
            return new Params(topology, kernels, seed, bursts, burstBytes, computeNanos, rateBps, oneWayDelayNanos, queueLimit, hz, gso,
                    Map.copyOf(k));
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

    /** A run stops at the latest after this much virtual time, so a stall cannot hang it. */
    static final long LIMIT_NANOS = 3_600_000_000_000L;

    private CreditBugExperiment() {}

    /**
     * The topology file: the project's examples/credit-bug.yaml when the launcher says where the project is
     * ({@code -Dusnet.root}, so an edit there takes effect without a rebuild), else the copy bundled in the jar.
     */
    public static TopologySpec bundledTopology() {
        String root = System.getProperty("usnet.root");
        if (root != null) {
            Path f = Path.of(root, "examples", "credit-bug.yaml");
            if (Files.isRegularFile(f)) {
                return TopologyFile.load(f);
            }
        }
        try (InputStream in = CreditBugExperiment.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the classpath (tools/pom.xml bundles it)");
            }
            return TopologyFile.parse("examples/credit-bug.yaml", new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("reading " + RESOURCE + ": " + e.getMessage(), e);
        }
    }

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

    /**
     * The topology of {@code p} for preset {@code k}: the preset, HZ and {@code p}'s knobs in the client's and
     * the server's namespace, the link emulation toward each end, the offloads of every veth end, and the burst
     * app's settings with its cwnd trace and burst log kept in memory.
     */
    static TopologySpec topologyFor(Params p, KernelPreset k) {
        TopologySpec t = p.topology();
        Shape s = Shape.of(t);
        List<String> set = new ArrayList<>();
        for (String ns : List.of(s.client, s.server)) {
            set.add(ns + ":usnet.tcp.kernel=" + k.label());
            set.add(ns + ":usnet.hz=" + p.hz());
            for (var e : new TreeMap<>(p.knobs()).entrySet()) {
                set.add(ns + ":" + e.getKey() + "=" + e.getValue());
            }
        }
        // The data direction drains into the receiver at the link rate through a queue of queueLimit frames: the
        // receive backlog. ACKs come back over the other port with the same propagation delay.
        String rx = NetemSysctl.FAMILY + s.toReceiver.link().name();
        set.add(s.toReceiverNs + ":" + rx + ".rate=" + p.rateBps());
        set.add(s.toReceiverNs + ":" + rx + ".delay=" + p.oneWayDelayNanos() + "ns");
        set.add(s.toReceiverNs + ":" + rx + ".limit=" + p.queueLimit());
        String tx = NetemSysctl.FAMILY + s.toSender.link().name();
        set.add(s.toSenderNs + ":" + tx + ".delay=" + p.oneWayDelayNanos() + "ns");
        set.add(s.toSenderNs + ":" + tx + ".limit=" + p.queueLimit());
        t = t.withKnobs(set);
        // Offloads: one Link object may be listed twice (a veth's peer end in the peer's namespace), so the new
        // links replace the old ones by identity.
        Map<Link, Link> links = new IdentityHashMap<>();
        List<Ns> nss = new ArrayList<>();
        for (Ns n : t.namespaces()) {
            List<DeviceSpec> devs = new ArrayList<>();
            for (DeviceSpec d : n.devices()) {
                if (d instanceof Veth v) {
                    Link l = links.computeIfAbsent(v.link(), x -> x.withOffloads(p.gso()));
                    Link peer = links.computeIfAbsent(v.peer(), x -> x.withOffloads(p.gso()));
                    devs.add(new Veth(l, v.peerNamespace(), peer, v.peerSide()));
                } else {
                    devs.add(d);
                }
            }
            List<TopologySpec.App> apps = new ArrayList<>();
            for (TopologySpec.App a : n.apps()) {
                if (a == s.app) {
                    TcpCommon c = s.app.common();
                    TcpCommon c2 = new TcpCommon(c.server(), c.to(), c.port(), p.bursts(), c.durationNanos(), c.congestion(),
                            c.noDelay(), c.sendBufferBytes(), c.receiveBufferBytes(), c.where(), c.serverWhere(), c.toWhere(),
                            c.portWhere(), new TopologySpec.AppLog(null, c.where()));
                    apps.add(new TcpBurst(c2, p.burstBytes(), p.computeNanos(), s.app.ackBytes(), s.app.writeBytes(),
                            new TopologySpec.AppLog(null, c.where())));
                } else {
                    apps.add(a);
                }
            }
            nss.add(new Ns(n.name(), n.where(), n.knobs(), devs, n.routes(), n.neighbours(), n.captures(), n.histograms(),
                    apps, n.nftables()));
        }
        return new TopologySpec(t.file(), t.name(), p.seed(), t.output(), t.kernelNamespaces(), nss, t.expectations());
    }

    static PresetResult runOne(Params p, KernelPreset k) {
        TopologySpec t = topologyFor(p, k);
        Shape s = Shape.of(t);
        VirtualRun.RunResult run;
        try {
            run = VirtualRun.run(t, new VirtualRun.Options(LIMIT_NANOS, null, null).endingWhenAppsDone());
        } catch (TopologyException e) {
            throw new IllegalArgumentException("preset " + k.label() + ": " + e.getMessage(), e);
        }
        App burst = null;
        for (App a : run.apps()) {
            // The one app topologyFor declares, found by the kind it was declared with.
            if (a.kind().equals("burst")) {
                burst = a;
            }
        }
        if (burst == null || !burst.completed()) {
            throw new IllegalStateException("preset " + k.label() + ": the burst app did not finish (stalled at "
                    + run.virtualNanos() / 1_000_000 + " ms virtual)");
        }
        // The experiment is about the burst TCP app itself: each burst's completion, retransmits and RTOs and the
        // client's cwnd trace are that class's records, which no other app has; a burst app is a TcpApp by its kind.
        TcpApp app = (TcpApp) burst;
        List<BurstApp.Burst> bursts = app.bursts();
        TcpTrace trace = app.trace();
        long start = app.startNanos();
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
        long qdrops = 0;
        for (Map<String, Object> n : run.results().namespaces()) {
            if (s.toReceiverNs.equals(n.get("name")) && n.get("drops") instanceof Map<?, ?> d
                    && d.get("NETEM_QUEUE_FULL") instanceof Long c) {
                qdrops = c;
            }
        }
        return new PresetResult(k, bursts, trace, start, h, retrans, rtos, jump, jumpAt - start, maxCwnd, qdrops,
                app.client().result());
    }

    /**
     * Where the experiment's parts are in a topology: its one burst app, the app's client and server namespaces,
     * and the two veth ends outside them that carry the data toward the server and the ACKs toward the client
     * (the bridge ports), with their namespaces.
     */
    private record Shape(TcpBurst app, String client, String server, Veth toReceiver, String toReceiverNs, Veth toSender,
                         String toSenderNs) {
        static Shape of(TopologySpec t) {
            TcpBurst app = null;
            String client = null;
            for (Ns n : t.namespaces()) {
                for (TopologySpec.App a : n.apps()) {
                    if (a instanceof TcpBurst b) {
                        if (app != null) {
                            throw new IllegalArgumentException(b.where().error("the credit-bug experiment runs one burst app; "
                                    + "the first is at line " + app.where().line()));
                        }
                        app = b;
                        client = n.name();
                    }
                }
            }
            if (app == null) {
                throw new IllegalArgumentException(t.file() + ": the credit-bug experiment needs a burst app (kind: burst)");
            }
            String server = app.common().server();
            String[] rx = farEnd(t, server);
            String[] tx = farEnd(t, client);
            if (rx == null || tx == null) {
                throw new IllegalArgumentException(app.where().error("the credit-bug experiment needs a veth from namespace "
                        + (rx == null ? server : client) + " to another namespace (the bridge port whose link emulation is"
                        + " the receive queue)"));
            }
            return new Shape(app, client, server, veth(t, rx), rx[0], veth(t, tx), tx[0]);
        }

        /** The namespace and name of the other end of the first veth of {@code ns} that leads out of it. */
        private static String[] farEnd(TopologySpec t, String ns) {
            for (Ns n : t.namespaces()) {
                for (DeviceSpec d : n.devices()) {
                    if (d instanceof Veth v && !v.peerSide() && !v.peerNamespace().equals(n.name())) {
                        if (n.name().equals(ns)) {
                            return new String[] {v.peerNamespace(), v.peer().name()};
                        }
                        if (v.peerNamespace().equals(ns)) {
                            return new String[] {n.name(), v.link().name()};
                        }
                    }
                }
            }
            return null;
        }

        /** The device entry of that end in its namespace, as a Veth whose link() is that end. */
        private static Veth veth(TopologySpec t, String[] end) {
            DeviceSpec d = t.namespace(end[0]).device(end[1]);
            if (d instanceof Veth v) {
                return v;
            }
            throw new IllegalArgumentException(t.file() + ": " + end[0] + "/" + end[1] + " is not a veth end");
        }

        /** The link-emulation settings of {@code end}: its netem:, then its namespace's usnet.netem knobs. */
        NetemParams netem(TopologySpec t, Veth end) {
            String dev = end.link().name();
            NetemParams p = NetemParams.NONE;
            List<Knob> knobs = new ArrayList<>(end.link().netem());
            knobs.addAll(t.namespace(end == toReceiver ? toReceiverNs : toSenderNs).knobs());
            for (Knob k : knobs) {
                if (k.key().equals(NetemSysctl.FAMILY + dev)) {
                    p = NetemParams.parse(k.value());
                } else if (k.key().startsWith(NetemSysctl.FAMILY + dev + ".")) {
                    p = p.with(k.key().substring((NetemSysctl.FAMILY + dev + ".").length()), k.value());
                }
            }
            return p;
        }

        /** The last knob {@code key} of namespace {@code ns}, or null. */
        static Knob knob(TopologySpec t, String ns, String key) {
            Knob v = null;
            for (Knob k : t.namespace(ns).knobs()) {
                if (k.key().equals(key)) {
                    v = k;
                }
            }
            return v;
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
                BurstApp.writeCsv(r.bursts(), r.startNanos(), w);
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
            b.append("knobs on both ends: ").append(new TreeMap<>(p.knobs())).append('\n');
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
