package dev.usnet.tools.compare;

import static dev.usnet.tools.compare.RunValues.byKey;
import static dev.usnet.tools.compare.RunValues.drops;
import static dev.usnet.tools.compare.RunValues.join;
import static dev.usnet.tools.compare.RunValues.measured;
import static dev.usnet.tools.compare.RunValues.medianOf;
import static dev.usnet.tools.compare.RunValues.num;
import static dev.usnet.tools.compare.RunValues.per;
import static dev.usnet.tools.compare.RunValues.rx;
import static dev.usnet.tools.compare.RunValues.rxPackets;

import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.HdrHistogram.Histogram;

/**
 * A comparison's {@code report.md} and its PNG charts: per app, per path and per namespace a side-by-side table
 * with a row per variant (medians over seeds, min–max when they differ), the variant that differs most from the
 * baseline in bold (see {@link MetricTable}), latency percentile curves per app and path, and bars of
 * throughput and CPU per packet.
 */
final class CompareReport {
    /** A path that carried fewer packets than this in every run is listed, not tabled and plotted; so is a namespace that received fewer. */
    static final long MINOR_PATH_PACKETS = 10;

    private final List<List<CompareRunner.Run>> groups = new ArrayList<>();
    private final List<String> rows = new ArrayList<>();
    private final int seeds;
    /** Runs on the wall clock: every number is a measurement of this machine, none is simulated. */
    private final boolean realClock;
    private final List<MetricTable> tables = new ArrayList<>();

    /** Results fields that count events; a difference of a handful of them ranks as minor (see {@link MetricTable}). */
    private static final Set<String> COUNT_KEYS = Set.of("packets", "ops", "retrans", "rtos", "cow_copies");

    private CompareReport(List<CompareRunner.Run> runs) {
        for (CompareRunner.Run r : runs) {
            int g = r.planned().variant().group();
            while (groups.size() <= g) {
                groups.add(new ArrayList<>());
            }
            groups.get(g).add(r);
        }
        for (List<CompareRunner.Run> g : groups) {
            rows.add("#" + (rows.size() + 1) + " " + g.getFirst().planned().variant().label());
        }
        seeds = groups.getFirst().size();
        realClock = "real".equals(groups.getFirst().getFirst().result().results().clock());
    }

    /** Writes {@code report.md} and the charts into {@code dir}; returns the files written, the report first. */
    static List<Path> write(Path dir, String commandLine, String file, double durationSeconds,
                            List<CompareRunner.Run> runs) throws IOException {
        return new CompareReport(runs).writeAll(dir, commandLine, file, durationSeconds);
    }

    private List<Path> writeAll(Path dir, String commandLine, String file, double durationSeconds) throws IOException {
        List<Path> written = new ArrayList<>();
        Path report = dir.resolve("report.md");
        written.add(report);
        StringBuilder b = new StringBuilder();
        Results first = groups.getFirst().getFirst().result().results();
        b.append("# usnet compare: ").append(first.topology()).append("\n\n");
        b.append("```\n").append(commandLine).append("\n```\n\n");
        List<Long> seedList = groups.getFirst().stream().map(r -> r.result().results().seed()).toList();
        b.append(String.format(Locale.ROOT, "%s, %s seconds per run, clock %s; %d variant%s × %d seed%s (%s) = %d runs.",
                file, MetricTable.format(durationSeconds), first.clock(), groups.size(), groups.size() == 1 ? "" : "s",
                seeds, seeds == 1 ? "" : "s", join(seedList), groups.size() * seeds));
        b.append(seeds > 1 ? " Each cell is the median over the seeds, with min–max in parentheses when they differ."
                : "").append("\n\n");
        b.append("Row 1 is the baseline (every --vary and --param at its first value). In each table the variant that"
                + " differs most from it is in bold: the largest relative difference |v − b| / max(|b|, |v|) of medians"
                + " in any column (1 when only one of them has the metric), when it is more than 1 %. Columns marked ‡ are wall-clock"
                + " measurements (`measured` in results.json): noisy, and left out of that choice."
                + (seeds > 1 ? " A difference counts only when it is larger than the seeds' spread: every seed of the"
                        + " variant above every seed of the baseline, or below." : "")
                + " Differences of fewer than " + MetricTable.format(MetricTable.SMALL_COUNT) + " events, and a"
                + " bridge's flood paths, rank after the others.\n\n");
        if (realClock) {
            b.append("**Clock real: every number here was measured on this machine's wall clock** (marked ‡), so none"
                    + " is in bold and the largest differences below are measurements, to be read with their spread over"
                    + " seeds.\n\n");
        }
        if (seeds == 1 && groups.size() > 1) {
            b.append("**One seed per variant: the ranking below cannot tell a difference from the noise between seeds**;"
                    + " run with --seeds 3 (or more) to rank only differences larger than their spread.\n\n");
        }
        b.append("## Variants\n\n| variant | seeds | wall s | speed |\n|---|---|---:|---:|\n");
        for (int g = 0; g < groups.size(); g++) {
            long wall = groups.get(g).stream().mapToLong(r -> r.result().wallNanos()).sum();
            long virt = groups.get(g).stream().mapToLong(r -> r.result().clockNanos()).sum();
            b.append("| ").append(rows.get(g)).append(g == 0 ? " (baseline)" : "").append(" | ")
                    .append(join(groups.get(g).stream().map(r -> r.result().results().seed()).toList())).append(" | ")
                    .append(String.format(Locale.ROOT, "%.2f | %.1fx |%n", wall / 1e9, wall == 0 ? 0 : (double) virt / wall));
        }
        b.append('\n');

        int summaryAt = b.length();
        b.append("## Apps\n\n");
        List<String> tcpApps = new ArrayList<>();
        for (String app : subjects(r -> r.apps().stream().map(m -> (String) m.get("name")).toList())) {
            Map<String, Object> any = find(app, r -> r.apps(), "name");
            String kind = (String) any.get("kind");
            boolean tcp = kind.equals("stream") || kind.equals("rr") || kind.equals("burst");
            if (tcp) {
                tcpApps.add(app);
            }
            MetricTable.Builder t = new MetricTable.Builder("app " + app + " (" + kind + " → " + any.get("to") + ")", rows, seeds);
            Function<CompareRunner.Run, Map<String, Object>> of = r -> byKey(r.result().results().apps(), "name", app);
            add(t, of, "bytes", "bytes", false);
            add(t, of, "mbit_s", "Mbit/s", tcp);
            add(t, of, "ops", "ops", !tcp);
            addPercentiles(t, of);
            add(t, of, "retrans", "retrans", tcp);
            add(t, of, "rtos", "RTOs", tcp);
            // What an app kind reports beyond the common fields (an mpi app's completion_s and mb_s, a spawner's
            // reaped): a column each, by the key's name, so a new kind's numbers show without this code knowing it.
            for (String key : extraAppKeys(app)) {
                add(t, of, key, key, false);
            }
            if (tcp) {
                addColumn(t, "app CPU ns/byte", true, r -> {
                    Map<String, Object> m = of.apply(r);
                    Object cpu = measured(r, "app_cpu_ns").get(app);
                    return m == null || cpu == null ? null : per(num(cpu), num(m.get("bytes")));
                }, false);
            }
            List<String> failed = new ArrayList<>();
            for (List<CompareRunner.Run> g : groups) {
                for (CompareRunner.Run r : g) {
                    Map<String, Object> m = of.apply(r);
                    if (m != null && "failed".equals(m.get("outcome"))) {
                        failed.add("#" + (r.planned().variant().group() + 1) + " seed " + r.result().results().seed()
                                + ": " + m.get("reason"));
                    }
                }
            }
            if (!failed.isEmpty()) {
                t.note("Failed: " + String.join("; ", failed) + ".");
            }
            b.append(table(t).markdown(3));
            List<ComparePlots.CwndSeries> cwnd = new ArrayList<>();
            for (int g = 0; g < groups.size(); g++) {
                CompareRunner.Run r = groups.get(g).getFirst();
                ComparePlots.CwndSeries c = r.result().cwnd().get(app);
                if (c != null) {
                    cwnd.add(new ComparePlots.CwndSeries(rows.get(g) + (seeds > 1 ? " (seed " + r.result().results().seed()
                            + ")" : ""), c.timeMs(), c.cwnd()));
                }
            }
            if (!cwnd.isEmpty()) {
                Path c = dir.resolve("cwnd-" + fileName(app) + ".png");
                ComparePlots.writeCwndOverlay(c, "snd_cwnd: " + app + (seeds > 1 ? " (each variant's first seed)" : ""), cwnd);
                written.add(c);
                b.append("![").append(app).append(" cwnd](").append(c.getFileName()).append(")\n\n");
            }
            Path png = dir.resolve("latency-app-" + fileName(app) + ".png");
            if (ComparePlots.writePercentiles(png, "latency percentiles: " + app + pooled(), pooled(h -> h.apps().get(app)))) {
                written.add(png);
                b.append("![").append(app).append(" latency percentiles](").append(png.getFileName()).append(")\n\n");
            }
        }
        if (!tcpApps.isEmpty()) {
            Path png = dir.resolve("throughput.png");
            double[][] v = new double[groups.size()][tcpApps.size()];
            for (int g = 0; g < groups.size(); g++) {
                for (int a = 0; a < tcpApps.size(); a++) {
                    String app = tcpApps.get(a);
                    v[g][a] = medianOf(groups.get(g), r -> {
                        Map<String, Object> m = byKey(r.result().results().apps(), "name", app);
                        return m == null ? null : num(m.get("mbit_s"));
                    });
                }
            }
            ComparePlots.writeBars(png, "TCP throughput" + (seeds > 1 ? " (median over seeds)" : ""), "Mbit/s", tcpApps,
                    rows, v);
            written.add(png);
            b.append("![TCP throughput](throughput.png)\n\n");
        }

        b.append("## Paths\n\n");
        List<String> paths = subjects(r -> r.paths().stream().map(m -> RunHistograms.pathKey((String) m.get("ns"),
                (String) m.get("name"))).toList());
        if (paths.isEmpty()) {
            b.append("No forwarding path carried a packet.\n\n");
        }
        // A bridge floods a first ARP request or an unknown destination to every port: with many idle ports that is
        // a path each, carrying a packet or two. They get one line, not a table and a chart each.
        Map<String, Long> mostPackets = new LinkedHashMap<>();
        for (List<CompareRunner.Run> g : groups) {
            for (CompareRunner.Run r : g) {
                for (Map<String, Object> m : r.result().results().paths()) {
                    mostPackets.merge(RunHistograms.pathKey((String) m.get("ns"), (String) m.get("name")),
                            ((Number) m.get("packets")).longValue(), Math::max);
                }
            }
        }
        List<String> minor = paths.stream().filter(p -> mostPackets.getOrDefault(p, 0L) < MINOR_PATH_PACKETS).toList();
        paths = paths.stream().filter(p -> mostPackets.getOrDefault(p, 0L) >= MINOR_PATH_PACKETS).toList();
        for (String path : paths) {
            MetricTable.Builder t = new MetricTable.Builder("path " + path, rows, seeds);
            if (path.endsWith("->" + dev.usnet.core.stats.LatencyPaths.FLOOD)) {
                t.minor("a bridge's flood path, whose packets are first ARP requests and frames to not yet learned"
                        + " addresses: their number follows from timing, not from the variant");
            }
            Function<CompareRunner.Run, Map<String, Object>> of = r -> r.result().results().paths().stream()
                    .filter(m -> RunHistograms.pathKey((String) m.get("ns"), (String) m.get("name")).equals(path))
                    .findFirst().orElse(null);
            add(t, of, "packets", "packets", true);
            add(t, of, "bytes", "bytes", true);
            addPercentiles(t, of);
            b.append(table(t).markdown(3));
            Path png = dir.resolve("latency-path-" + fileName(path) + ".png");
            if (ComparePlots.writePercentiles(png, "forwarding latency percentiles: " + path + pooled(),
                    pooled(h -> h.paths().get(path)))) {
                written.add(png);
                b.append("![").append(path).append(" latency percentiles](").append(png.getFileName()).append(")\n\n");
            }
        }

        if (!minor.isEmpty()) {
            b.append(minor.size()).append(minor.size() == 1 ? " path" : " paths").append(" carried fewer than ")
                    .append(MINOR_PATH_PACKETS).append(" packets in every run (no table or chart): ")
                    .append(minor.stream().map(p -> p + " (" + mostPackets.get(p) + ")").collect(java.util.stream.Collectors.joining(", ")))
                    .append(".\n\n");
        }

        b.append("## Namespaces\n\n");
        b.append("CPU per packet and per byte divide a namespace's CPU time by what its devices received (the sum of"
                + " their rx_packets and rx_bytes, as `ip -s link` counts them). `model` is the CPU model's"
                + " `cpu_model_ns` (with `usnet.cpu.model=1`), ‡ the JVM time its work measured (`measured.cpu_ns`).\n\n");
        List<String> all = subjects(r -> r.namespaces().stream().map(m -> (String) m.get("name")).toList());
        // Idle containers (count: of a parameter) are namespaces that received next to nothing: one line, not a
        // table and a bar each, so the namespaces that do the work stay readable.
        Map<String, Long> mostRx = new LinkedHashMap<>();
        for (List<CompareRunner.Run> g : groups) {
            for (CompareRunner.Run r : g) {
                for (String ns : all) {
                    mostRx.merge(ns, rxPackets(r, ns), Math::max);
                }
            }
        }
        List<String> quiet = all.stream().filter(n -> mostRx.get(n) < MINOR_PATH_PACKETS).toList();
        List<String> nss = all.stream().filter(n -> mostRx.get(n) >= MINOR_PATH_PACKETS).toList();
        if (!quiet.isEmpty()) {
            b.append(quiet.size()).append(quiet.size() == 1 ? " namespace" : " namespaces").append(" received fewer than ")
                    .append(MINOR_PATH_PACKETS).append(" packets in every run (no table or bar): ")
                    .append(String.join(", ", quiet)).append(".\n\n");
        }
        List<String> modelled = new ArrayList<>();
        for (String ns : nss) {
            MetricTable.Builder t = new MetricTable.Builder("namespace " + ns, rows, seeds);
            Function<CompareRunner.Run, Map<String, Object>> of = r -> byKey(r.result().results().namespaces(), "name", ns);
            add(t, of, "cow_copies", "COW copies", true);
            add(t, of, "cow_bytes", "COW bytes", true);
            int before = t.columnCount();
            add(t, of, "cpu_model_ns", "model CPU ns", false);
            if (t.columnCount() > before) {
                modelled.add(ns);
                addColumn(t, "model ns/packet", false, r -> cpuPer(r, ns, of, true, false), false);
                addColumn(t, "model ns/byte", false, r -> cpuPer(r, ns, of, true, true), false);
                add(t, of, "cpu_util", "model CPU util", true);
            }
            addColumn(t, "CPU ns", true, r -> num(measured(r, "cpu_ns").get(ns)), false);
            addColumn(t, "ns/packet", true, r -> cpuPer(r, ns, of, false, false), false);
            addColumn(t, "ns/byte", true, r -> cpuPer(r, ns, of, false, true), false);
            addColumn(t, "drops", false, true, r -> {
                Map<String, Object> m = of.apply(r);
                return m == null ? null : drops(m).values().stream().mapToDouble(Long::doubleValue).sum();
            }, false);
            b.append(table(t).markdown(3));
        }
        chartCpu(dir, written, b, nss, modelled);

        tcpCounters(b, all);

        b.append("## Drops by reason\n\n");
        boolean anyDrops = false;
        for (String ns : all) {
            Function<CompareRunner.Run, Map<String, Object>> of = r -> byKey(r.result().results().namespaces(), "name", ns);
            Set<String> reasons = new TreeSet<>();
            for (List<CompareRunner.Run> g : groups) {
                for (CompareRunner.Run r : g) {
                    Map<String, Object> m = of.apply(r);
                    if (m != null) {
                        reasons.addAll(drops(m).keySet());
                    }
                }
            }
            if (reasons.isEmpty()) {
                continue;
            }
            anyDrops = true;
            MetricTable.Builder t = new MetricTable.Builder("drops in " + ns, rows, seeds);
            for (String reason : reasons) {
                addColumn(t, reason, false, true, r -> {
                    Map<String, Object> m = of.apply(r);
                    return m == null ? null : (double) drops(m).getOrDefault(reason, 0L);
                }, true);
            }
            b.append(table(t).markdown(3));
        }
        if (!anyDrops) {
            b.append("No namespace dropped a packet in any run.\n\n");
        }
        CompareVerdicts verdicts = new CompareVerdicts(groups, rows, seeds, realClock);
        verdicts.expectations(b);
        b.insert(summaryAt, verdicts.summary(tables));
        Files.writeString(report, b.toString());
        return written;
    }

    /** The app result keys every kind has, which the app table shows as its own columns (or are not numbers). */
    private static final Set<String> COMMON_APP_KEYS = Set.of("name", "ns", "kind", "to", "outcome", "reason", "bytes",
            "mbit_s", "ops", "p50_us", "p99_us", "p999_us", "max_us", "retrans", "rtos", "pids", "server_pids");

    /** The numeric keys of {@code app}'s results beyond {@link #COMMON_APP_KEYS}, in the order they first appear. */
    private List<String> extraAppKeys(String app) {
        Set<String> keys = new LinkedHashSet<>();
        for (List<CompareRunner.Run> g : groups) {
            for (CompareRunner.Run r : g) {
                Map<String, Object> m = byKey(r.result().results().apps(), "name", app);
                if (m != null) {
                    m.forEach((k, v) -> {
                        if (v instanceof Number && !COMMON_APP_KEYS.contains(k)) {
                            keys.add(k);
                        }
                    });
                }
            }
        }
        return new ArrayList<>(keys);
    }

    /**
     * The TCP counters {@code netstat -s} prints for the 2015 regression's story, in this order, under their
     * {@code nstat} names (the results' {@code mib} keys: /proc/net/netstat's TcpExt fields prefixed TcpExt,
     * /proc/net/snmp's Tcp fields prefixed Tcp); every other {@code Tcp*} counter follows in name order.
     */
    static final List<String> TCP_COUNTERS_FIRST = List.of("TcpExtTCPTimeouts", "TcpExtTCPFastRetrans",
            "TcpExtTCPForwardRetrans", "TcpExtTCPSackRecovery", "TcpExtTCPLossProbes", "TcpExtTCPSACKReorder",
            "TcpExtTCPFACKReorder", "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo",
            "TcpExtDelayedACKs", "TcpExtDelayedACKLost", "TcpRetransSegs");

    /**
     * Per namespace a table of its {@code mib.Tcp*} counters, {@link #TCP_COUNTERS_FIRST} first, then the others
     * by name, so that counters added to the MIB later appear without this code changing; a counter that is 0 (or
     * absent) in every run is left out, and so is a namespace with none.
     */
    private void tcpCounters(StringBuilder b, List<String> nss) {
        b.append("## TCP counters\n\n");
        b.append("Per namespace, its TCP MIB counters under their `nstat` names (`netstat -s` prints the same"
                + " counters as sentences), those of the 2015 netns regression first; a counter that is 0 in every run"
                + " is left out.\n\n");
        boolean any = false;
        for (String ns : nss) {
            Function<CompareRunner.Run, Map<String, Object>> of = r -> byKey(r.result().results().namespaces(), "name", ns);
            Set<String> rest = new TreeSet<>();
            for (List<CompareRunner.Run> g : groups) {
                for (CompareRunner.Run r : g) {
                    Map<String, Object> m = of.apply(r);
                    if (m != null && m.get("mib") instanceof Map<?, ?> mib) {
                        for (Object k : mib.keySet()) {
                            String key = (String) k;
                            if (key.startsWith("Tcp") && !TCP_COUNTERS_FIRST.contains(key)) {
                                rest.add(key);
                            }
                        }
                    }
                }
            }
            List<String> keys = new ArrayList<>(TCP_COUNTERS_FIRST);
            keys.addAll(rest);
            MetricTable.Builder t = new MetricTable.Builder("TCP counters in " + ns, rows, seeds);
            for (String key : keys) {
                addColumn(t, key, false, true, r -> {
                    Map<String, Object> m = of.apply(r);
                    if (m == null) {
                        return null;
                    }
                    Object v = m.get("mib") instanceof Map<?, ?> mib ? mib.get(key) : null;
                    return v == null ? 0.0 : num(v);
                }, false);
            }
            if (t.columnCount() > 0) {
                any = true;
                b.append(table(t).markdown(3));
            }
        }
        if (!any) {
            b.append("No namespace counted a TCP event in any run.\n\n");
        }
    }

    private MetricTable table(MetricTable.Builder t) {
        MetricTable m = t.build();
        tables.add(m);
        return m;
    }

    private void chartCpu(Path dir, List<Path> written, StringBuilder b, List<String> nss, List<String> modelled)
            throws IOException {
        if (!modelled.isEmpty()) {
            Path png = dir.resolve("cpu-model.png");
            ComparePlots.writeBars(png, "modelled CPU per received packet" + (seeds > 1 ? " (median over seeds)" : ""),
                    "ns/packet", modelled, rows, cpuMatrix(modelled, true));
            written.add(png);
            b.append("![modelled CPU per packet](cpu-model.png)\n\n");
        }
        Path png = dir.resolve("cpu-measured.png");
        ComparePlots.writeBars(png, "measured JVM CPU per received packet (wall clock, noisy)"
                + (seeds > 1 ? " (median over seeds)" : ""), "ns/packet", nss, rows, cpuMatrix(nss, false));
        written.add(png);
        b.append("![measured CPU per packet](cpu-measured.png)\n\n");
    }

    private double[][] cpuMatrix(List<String> nss, boolean model) {
        double[][] v = new double[groups.size()][nss.size()];
        for (int g = 0; g < groups.size(); g++) {
            for (int n = 0; n < nss.size(); n++) {
                String ns = nss.get(n);
                Function<CompareRunner.Run, Map<String, Object>> of = r -> byKey(r.result().results().namespaces(), "name", ns);
                v[g][n] = medianOf(groups.get(g), r -> cpuPer(r, ns, of, model, false));
            }
        }
        return v;
    }

    private static Double cpuPer(CompareRunner.Run r, String ns, Function<CompareRunner.Run, Map<String, Object>> of,
                                 boolean model, boolean perByte) {
        Map<String, Object> m = of.apply(r);
        if (m == null) {
            return null;
        }
        double cpu = model ? num(m.get("cpu_model_ns")) : num(measured(r, "cpu_ns").get(ns));
        return per(cpu, perByte ? rx(r, ns, "rx_bytes") : rx(r, ns, "rx_packets"));
    }

    private static final List<String> PERCENTILES = List.of("p50_us", "p99_us", "p999_us", "max_us");

    /** The four latency columns, all of them when any run has one non-zero, so that the shape reads whole. */
    private void addPercentiles(MetricTable.Builder t, Function<CompareRunner.Run, Map<String, Object>> of) {
        boolean any = false;
        for (List<CompareRunner.Run> g : groups) {
            for (CompareRunner.Run r : g) {
                Map<String, Object> m = of.apply(r);
                for (String k : PERCENTILES) {
                    any |= m != null && num(m.get(k)) != 0 && !Double.isNaN(num(m.get(k)));
                }
            }
        }
        if (any) {
            add(t, of, "p50_us", "p50 µs", true);
            add(t, of, "p99_us", "p99 µs", true);
            add(t, of, "p999_us", "p99.9 µs", true);
            add(t, of, "max_us", "max µs", true);
        }
    }

    /** A column of a results field, kept when some run has it non-zero (or always, with {@code always}). */
    private void add(MetricTable.Builder t, Function<CompareRunner.Run, Map<String, Object>> of, String key, String name,
                     boolean always) {
        addColumn(t, name, false, COUNT_KEYS.contains(key), r -> {
            Map<String, Object> m = of.apply(r);
            return m == null || !m.containsKey(key) ? null : num(m.get(key));
        }, always);
    }

    private void addColumn(MetricTable.Builder t, String name, boolean measured, Function<CompareRunner.Run, Double> f,
                           boolean always) {
        addColumn(t, name, measured, false, f, always);
    }

    /** A column; with the real clock every column is a measurement (‡), never a simulated number. */
    private void addColumn(MetricTable.Builder t, String name, boolean measured, boolean count,
                           Function<CompareRunner.Run, Double> f, boolean always) {
        double[][] v = new double[groups.size()][];
        boolean nonZero = false;
        for (int g = 0; g < groups.size(); g++) {
            List<CompareRunner.Run> runs = groups.get(g);
            v[g] = new double[runs.size()];
            for (int s = 0; s < runs.size(); s++) {
                Double x = f.apply(runs.get(s));
                v[g][s] = x == null ? Double.NaN : x;
                nonZero |= x != null && x != 0;
            }
        }
        if (always || nonZero) {
            t.column(name, measured || realClock, count, v);
        }
    }

    /** Per variant, its seeds' histograms added up (null when no run has one). */
    private List<ComparePlots.Named<Histogram>> pooled(Function<RunHistograms, Histogram> f) {
        List<ComparePlots.Named<Histogram>> out = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            Histogram sum = null;
            for (CompareRunner.Run r : groups.get(g)) {
                Histogram h = f.apply(r.result().histograms());
                if (h != null) {
                    if (sum == null) {
                        sum = h.copy();
                    } else {
                        sum.add(h);
                    }
                }
            }
            out.add(new ComparePlots.Named<>(rows.get(g), sum));
        }
        return out;
    }

    private String pooled() {
        return seeds > 1 ? " (" + seeds + " seeds pooled)" : "";
    }

    /** Every name {@code f} lists in any run, in the order they first appear (variants in order). */
    private List<String> subjects(Function<Results, List<String>> f) {
        Set<String> s = new LinkedHashSet<>();
        for (List<CompareRunner.Run> g : groups) {
            for (CompareRunner.Run r : g) {
                s.addAll(f.apply(r.result().results()));
            }
        }
        return new ArrayList<>(s);
    }

    private Map<String, Object> find(String name, Function<Results, List<Map<String, Object>>> list, String key) {
        for (List<CompareRunner.Run> g : groups) {
            for (CompareRunner.Run r : g) {
                Map<String, Object> m = byKey(list.apply(r.result().results()), key, name);
                if (m != null) {
                    return m;
                }
            }
        }
        throw new IllegalStateException("no " + name);
    }

    /** A subject's name as part of a file name: {@code host/hb1->br0} is {@code host_hb1-br0}. */
    static String fileName(String s) {
        return s.replace("->", "-").replaceAll("[^A-Za-z0-9._-]", "_");
    }
}
