package dev.usnet.tools.results;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.AppCounters;
import dev.usnet.tools.app.ResultValues;
import dev.usnet.tools.topology.file.ResultRows;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DeviceStats;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tcp.app.Percentiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a run simulated, in the {@value #SCHEMA} schema (docs/results.md): the part that is the same for the same
 * file and seed in virtual time, and under {@code measured} what the wall clock measured. Each section is a list
 * of ordered maps in a fixed order, so the JSON text is stable byte for byte.
 */
public record Results(String topology, String clock, long seed, double durationSeconds, Map<String, Map<String, String>> knobs,
                      List<Map<String, Object>> apps, List<Map<String, Object>> namespaces, List<Map<String, Object>> paths,
                      List<Map<String, Object>> devices, Map<String, Object> measured, Map<String, String> params,
                      List<Map<String, Object>> snapshots, List<Map<String, Object>> expectations) implements ResultRows {
    public static final String SCHEMA = "usnet-results/1";

    public Results {
        // Declaration order is part of the byte-stable text.
        params = params == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(params));
        snapshots = snapshots == null ? List.of() : List.copyOf(snapshots);
        expectations = expectations == null ? List.of() : List.copyOf(expectations);
    }

    /** Results whose {@code expect:} lines have not been judged (or that have none). */
    public Results(String topology, String clock, long seed, double durationSeconds, Map<String, Map<String, String>> knobs,
                   List<Map<String, Object>> apps, List<Map<String, Object>> namespaces, List<Map<String, Object>> paths,
                   List<Map<String, Object>> devices, Map<String, Object> measured, Map<String, String> params,
                   List<Map<String, Object>> snapshots) {
        this(topology, clock, seed, durationSeconds, knobs, apps, namespaces, paths, devices, measured, params, snapshots,
                List.of());
    }

    /**
     * The same results with the verdict on each {@code expect:} line of the topology, in file order: its line, text,
     * the value the run had ({@code null} when absent), whether it held, and for a capture check that failed, where.
     */
    public Results withExpectations(List<Map<String, Object>> verdicts) {
        return new Results(topology, clock, seed, durationSeconds, knobs, apps, namespaces, paths, devices, measured, params,
                snapshots, verdicts);
    }

    /** Results without periodic snapshots. */
    public Results(String topology, String clock, long seed, double durationSeconds, Map<String, Map<String, String>> knobs,
                   List<Map<String, Object>> apps, List<Map<String, Object>> namespaces, List<Map<String, Object>> paths,
                   List<Map<String, Object>> devices, Map<String, Object> measured, Map<String, String> params) {
        this(topology, clock, seed, durationSeconds, knobs, apps, namespaces, paths, devices, measured, params, List.of());
    }

    /** The same results with the run's periodic counter snapshots ({@code --snapshot-interval}). */
    public Results withSnapshots(List<Map<String, Object>> s) {
        return new Results(topology, clock, seed, durationSeconds, knobs, apps, namespaces, paths, devices, measured, params, s,
                expectations);
    }

    /**
     * Every counter now, as one entry of {@code snapshots} (docs/results.md): {@code t_s} on the run's clock, then per
     * namespace its MIB, drop and copy-on-write counters, per device its {@code ip -s link} counters, per app what it
     * has moved so far.
     */
    public static Map<String, Object> snapshot(double seconds, List<NetStack> stacks, List<App> apps) {
        Map<String, Object> snap = new LinkedHashMap<>();
        snap.put("t_s", fixed(seconds));
        List<Map<String, Object>> nss = new ArrayList<>();
        List<Map<String, Object>> devs = new ArrayList<>();
        for (NetStack s : stacks) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("name", s.name());
            n.put("cow_copies", s.cow().copies());
            n.put("cow_bytes", s.cow().bytesCopied());
            Map<String, Long> drops = new TreeMap<>();
            s.drops().snapshot().forEach((r, c) -> drops.put(r.name(), c));
            n.put("drops", drops);
            Map<String, Long> mib = new TreeMap<>();
            s.mib().snapshot().forEach((k, v) -> mib.put(k.name(), v));
            n.put("mib", mib);
            nss.add(n);
            for (Device d : s.devices()) {
                devs.add(device(s, d));
            }
        }
        snap.put("namespaces", nss);
        snap.put("devices", devs);
        List<Map<String, Object>> as = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        for (App a : apps) {
            Map<String, Object> full = app(a, index);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", full.get("name"));
            long bytes = (Long) full.get("bytes");
            if (a.counters() == null) {
                // No result yet (a TCP app still running): what its ends received so far.
                bytes = a.bytesSoFar();
            }
            m.put("bytes", bytes);
            m.put("ops", full.get("ops"));
            as.add(m);
        }
        snap.put("apps", as);
        return snap;
    }

    private static Map<String, Object> device(NetStack s, Device d) {
        DeviceStats st = d.stats();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", s.name() + "/" + d.name());
        m.put("rx_packets", st.rxPackets);
        m.put("rx_bytes", st.rxBytes);
        m.put("rx_dropped", st.rxDropped);
        m.put("tx_packets", st.txPackets);
        m.put("tx_bytes", st.txBytes);
        m.put("tx_dropped", st.txDropped);
        if (d.gro() != null) {
            // Only with GRO on, so results of topologies without it keep their bytes.
            m.put("rx_gro_packets", d.gro().groPackets());
            m.put("rx_gro_segments", d.gro().groSegments());
        }
        return m;
    }

    /** Results of a topology without parameters. */
    public Results(String topology, String clock, long seed, double durationSeconds, Map<String, Map<String, String>> knobs,
                   List<Map<String, Object>> apps, List<Map<String, Object>> namespaces, List<Map<String, Object>> paths,
                   List<Map<String, Object>> devices, Map<String, Object> measured) {
        this(topology, clock, seed, durationSeconds, knobs, apps, namespaces, paths, devices, measured, Map.of());
    }

    /**
     * The results of apps that have stopped and of namespaces still alive. Apps are named
     * {@code <ns>.<kind>-<i>}, i counting that namespace's apps of that kind from 0 in file order.
     */
    public static Results collect(String topology, String clock, long seed, double durationSeconds, List<App> apps,
                                  List<NetStack> stacks, Map<String, Object> measured) {
        return collect(topology, clock, seed, durationSeconds, Map.of(), apps, stacks, measured);
    }

    /** As above, for a topology run with {@code params} (its parameters' values, in declaration order). */
    public static Results collect(String topology, String clock, long seed, double durationSeconds, Map<String, String> params,
                                  List<App> apps, List<NetStack> stacks, Map<String, Object> measured) {
        Map<String, Map<String, String>> knobs = new LinkedHashMap<>();
        List<Map<String, Object>> nss = new ArrayList<>();
        List<Map<String, Object>> paths = new ArrayList<>();
        List<Map<String, Object>> devs = new ArrayList<>();
        // Real JVM time spent on each namespace's work: noisy, so it lives under measured.
        Map<String, Long> measuredCpu = new LinkedHashMap<>();
        measured.put("cpu_ns", measuredCpu);
        for (NetStack s : stacks) {
            knobs.put(s.name(), s.knobs().explicitValues());
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("name", s.name());
            n.put("cow_copies", s.cow().copies());
            n.put("cow_bytes", s.cow().bytesCopied());
            n.put("cow_shared", s.cow().shared());
            n.put("cow_headroom_copies", s.cow().headroomCopies());
            if (s.cpu().modelEnabled()) {
                n.put("cpu_model_ns", s.cpu().modelNanos());
                n.put("cpu_util", fixed(s.cpu().modelUtilisation(s.now())));
            }
            measuredCpu.put(s.name(), s.cpu().measuredNanos());
            Map<String, Long> drops = new TreeMap<>();
            s.drops().snapshot().forEach((r, c) -> {
                if (c != 0) {
                    drops.put(r.name(), c);
                }
            });
            n.put("drops", drops);
            Map<String, Long> mib = new TreeMap<>();
            s.mib().snapshot().forEach((k, v) -> mib.put(k.name(), v));
            n.put("mib", mib);
            // Only where connection tracking ran, so results of topologies without netfilter keep their bytes.
            Map<String, Object> netfilter = NetfilterCounters.of(s);
            if (netfilter != null) {
                n.put("netfilter", netfilter);
            }
            nss.add(n);
            for (LatencyPaths.Path p : s.latency().all()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ns", s.name());
                m.put("name", p.name());
                m.put("packets", p.packets());
                m.put("bytes", p.bytes());
                putPercentiles(m, Percentiles.of(p.summary()));
                paths.add(m);
            }
            for (Device d : s.devices()) {
                devs.add(device(s, d));
            }
        }
        List<Map<String, Object>> as = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        for (App a : apps) {
            as.add(app(a, index));
        }
        return new Results(topology, clock, seed, durationSeconds, knobs, as, nss, paths, devs, measured, params);
    }

    private static Map<String, Object> app(App a, Map<String, Integer> index) {
        String kind = a.kind();
        int i = index.merge(a.namespace() + "." + kind, 1, Integer::sum) - 1;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", a.namespace() + "." + kind + "-" + i);
        m.put("ns", a.namespace());
        m.put("kind", kind);
        Outcome o = a.outcome();
        String to = a.peer();
        AppCounters c = a.counters();
        long bytes = c == null ? 0 : c.bytes();
        double mbps = c == null || c.mbitPerSecond() == null ? 0 : c.mbitPerSecond();
        long ops = c == null ? 0 : c.operations();
        Percentiles lat = c == null ? null : c.latency();
        long retrans = c == null ? 0 : c.retransmits();
        long rtos = c == null ? 0 : c.timeouts();
        m.put("to", to);
        String family = AppFamily.of(to);
        if (family != null) {
            m.put("family", family);
        }
        m.put("outcome", o.ok() ? "ok" : "failed");
        if (!o.ok()) {
            m.put("reason", o.reason());
        }
        m.put("bytes", bytes);
        m.put("mbit_s", fixed(mbps));
        m.put("ops", ops);
        putPercentiles(m, lat);
        m.put("retrans", retrans);
        m.put("rtos", rtos);
        m.put("pids", ResultValues.pids(a.process()));
        a.putResultFields(m);
        return m;
    }

    private static void putPercentiles(Map<String, Object> m, Percentiles p) {
        m.put("p50_us", fixed(p == null ? 0 : p.p50Us()));
        m.put("p99_us", fixed(p == null ? 0 : p.p99Us()));
        m.put("p999_us", fixed(p == null ? 0 : p.p999Us()));
        m.put("max_us", fixed(p == null ? 0 : p.maxUs()));
    }

    /** Three decimals, always: the same number is always the same text. */
    static BigDecimal fixed(double v) {
        return ResultValues.fixed(v);
    }

    /** The whole document, keys in schema order; {@code measured} last. */
    public Map<String, Object> tree() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema", SCHEMA);
        m.put("topology", topology);
        m.put("clock", clock);
        m.put("seed", seed);
        m.put("duration_s", fixed(durationSeconds));
        m.put("params", params);
        m.put("knobs", knobs);
        m.put("apps", apps);
        m.put("namespaces", namespaces);
        m.put("paths", paths);
        m.put("devices", devices);
        if (!snapshots.isEmpty()) {
            m.put("snapshots", snapshots);
        }
        if (!expectations.isEmpty()) {
            m.put("expectations", expectations);
        }
        m.put("measured", measured);
        return m;
    }

    /** The JSON text, pretty-printed, ending in a newline. */
    public String toJson() {
        ObjectMapper om = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);
        try {
            return om.writeValueAsString(tree()) + "\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void write(Path file) throws IOException {
        if (file.toAbsolutePath().getParent() != null) {
            Files.createDirectories(file.toAbsolutePath().getParent());
        }
        Files.writeString(file, toJson());
    }

    /** Wall-clock seconds as measured, three decimals (for {@code measured}). */
    public static BigDecimal seconds(long nanos) {
        return fixed(nanos / 1e9);
    }

}
