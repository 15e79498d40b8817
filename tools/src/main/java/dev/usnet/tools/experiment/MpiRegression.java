package dev.usnet.tools.experiment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The netns-over-native overhead of an {@code mpi} app per TCP variant, read from {@code usnet compare} results
 * (docs/mpi-regression.md): the runs are grouped by the value of the mode parameter ({@code native} and
 * {@code netns}) and by every other varied axis (the kernel preset, a switch), and each group's completion time,
 * application bandwidth and TCP counters (as {@code netstat -s} names them, summed over every namespace of the
 * run) are the median over its seeds.
 */
public final class MpiRegression {
    /** The modes compared: the first is the reference the overhead is measured against. */
    static final String NATIVE = "native";
    static final String NETNS = "netns";

    /** TCP counters summed over the run's namespaces, in the report's column order (MIB names as nstat prints them). */
    static final List<String> COUNTERS = List.of("TcpExtTCPTimeouts", "TcpExtTCPSackFailures", "TcpExtTCPLossFailures",
            "TcpRetransSegs", "TcpExtTCPFastRetrans", "TcpExtTCPForwardRetrans",
            "TcpExtTCPSackRecovery", "TcpExtTCPLossProbes", "TcpExtTCPFullUndo", "TcpExtTCPPartialUndo",
            "TcpExtTCPDSACKUndo", "TcpExtTCPLossUndo", "TcpExtTCPSACKReorder", "TcpExtTCPFACKReorder", "TcpExtDelayedACKs",
            "TcpExtDelayedACKLost");

    /** One run of the matrix: its group, its seed and what it measured. */
    record Run(String variant, String mode, long seed, double completionS, double mbS, Map<String, Long> counters,
               Map<String, Long> drops, Map<Long, Long> cwndAtLoss) {}

    /** A variant in one mode: medians over its seeds. */
    record Cell(String variant, String mode, int seeds, double completionS, double minCompletionS, double maxCompletionS,
                double mbS, Map<String, Double> counters, Map<String, Double> drops, Map<Long, Long> cwndAtLoss) {}

    /** A variant in both modes, and the overhead of netns over native ({@code NaN} when one mode is missing). */
    record Row(String variant, Cell nativeCell, Cell netnsCell) {
        double overheadPercent() {
            if (nativeCell == null || netnsCell == null || nativeCell.completionS() <= 0) {
                return Double.NaN;
            }
            return (netnsCell.completionS() / nativeCell.completionS() - 1) * 100;
        }
    }

    /** What was measured in 2015 (NAS CG class B, 8 hosts x 16 ranks, 10 GbE), per kernel: the table. */
    record Historical(String kernel, String overhead, String note) {}

    static final List<Historical> HISTORICAL = List.of(
            new Historical("3.16", "42 %", "per-ACK additive increase (usnet preset 3.18)"),
            new Historical("3.19", "8 %", "accumulate rule, CUBIC cnt floor 1; in netns ~3 TCP timeouts, 552 MB/s"),
            new Historical("4.0 and later", "300 %", "gentle rule (9949afa4), floor 2; in netns 140 TCP timeouts, 239 MB/s;"
                    + " reverting 9949afa4 on 4.2 gave 3.19's behaviour back"));

    private MpiRegression() {}

    /**
     * Reads the runs of one or more compare output directories ({@code results.json} in each), keeping those with
     * an {@code mpi} app. {@code modeAxis} names the parameter or knob whose values are the modes.
     */
    static List<Run> read(List<Path> dirs, String modeAxis) throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<Run> runs = new ArrayList<>();
        for (Path dir : dirs) {
            Path file = Files.isDirectory(dir) ? dir.resolve("results.json") : dir;
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException(file + ": no such file (give a usnet compare --out directory)");
            }
            JsonNode root = json.readTree(file.toFile());
            JsonNode variants = root.path("variants");
            if (!variants.isArray()) {
                throw new IllegalArgumentException(file + ": not the results.json of usnet compare (no \"variants\" list)");
            }
            for (JsonNode v : variants) {
                runs.add(run(file, v, modeAxis));
            }
        }
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("no runs in " + dirs);
        }
        return runs;
    }

    private static Run run(Path file, JsonNode v, String modeAxis) {
        JsonNode vary = v.path("vary");
        JsonNode results = v.path("results");
        String mode = null;
        List<String> rest = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = vary.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals(modeAxis)) {
                mode = e.getValue().asText();
            } else {
                rest.add(label(e.getKey(), e.getValue().asText()));
            }
        }
        if (mode == null) {
            mode = results.path("params").path(modeAxis).asText(null);
        }
        if (mode == null) {
            throw new IllegalArgumentException(file + ": a run has no '" + modeAxis + "' among its varied axes or"
                    + " parameters (vary it: --param " + modeAxis + "=native,netns)");
        }
        JsonNode mpi = null;
        for (JsonNode app : results.path("apps")) {
            if ("mpi".equals(app.path("kind").asText())) {
                mpi = app;
                break;
            }
        }
        if (mpi == null) {
            throw new IllegalArgumentException(file + ": a run (" + vary + ") has no mpi app");
        }
        Map<String, Long> counters = new LinkedHashMap<>();
        Map<String, Long> drops = new TreeMap<>();
        for (JsonNode ns : results.path("namespaces")) {
            for (String c : COUNTERS) {
                counters.merge(c, ns.path("mib").path(c).asLong(0), Long::sum);
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = ns.path("drops").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                drops.merge(e.getKey(), e.getValue().asLong(), Long::sum);
            }
        }
        Map<Long, Long> cwnd = new TreeMap<>();
        for (String kind : List.of("recovery", "rto")) {
            for (Iterator<Map.Entry<String, JsonNode>> it = mpi.path("cwnd_at_loss").path(kind).fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                cwnd.merge(Long.parseLong(e.getKey()), e.getValue().asLong(), Long::sum);
            }
        }
        String variant = rest.isEmpty() ? "baseline" : String.join(", ", rest);
        return new Run(variant, mode, v.path("seed").asLong(), mpi.path("completion_s").asDouble(),
                mpi.path("mb_s").asDouble(), counters, drops, cwnd);
    }

    /** {@code usnet.tcp.kernel=4.0} reads as {@code 4.0}; any other axis as KEY=VALUE. */
    private static String label(String key, String value) {
        return key.endsWith("usnet.tcp.kernel") ? value : key + "=" + value;
    }

    /** The runs grouped by variant (in the order first seen) and mode, each group's medians over seeds. */
    static List<Row> rows(List<Run> runs) {
        Map<String, Map<String, List<Run>>> groups = new LinkedHashMap<>();
        for (Run r : runs) {
            groups.computeIfAbsent(r.variant(), k -> new LinkedHashMap<>()).computeIfAbsent(r.mode(), k -> new ArrayList<>())
                    .add(r);
        }
        List<Row> rows = new ArrayList<>();
        groups.forEach((variant, modes) -> rows.add(new Row(variant, cell(variant, NATIVE, modes.get(NATIVE)),
                cell(variant, NETNS, modes.get(NETNS)))));
        return rows;
    }

    private static Cell cell(String variant, String mode, List<Run> rs) {
        if (rs == null) {
            return null;
        }
        Map<String, Double> counters = new LinkedHashMap<>();
        for (String c : COUNTERS) {
            counters.put(c, median(rs.stream().mapToDouble(r -> r.counters().getOrDefault(c, 0L)).toArray()));
        }
        Map<String, Double> drops = new TreeMap<>();
        rs.forEach(r -> r.drops().keySet().forEach(k -> drops.put(k, 0.0)));
        drops.replaceAll((k, x) -> median(rs.stream().mapToDouble(r -> r.drops().getOrDefault(k, 0L)).toArray()));
        Map<Long, Long> cwnd = new TreeMap<>();
        rs.forEach(r -> r.cwndAtLoss().forEach((w, n) -> cwnd.merge(w, n, Long::sum)));
        double[] completion = rs.stream().mapToDouble(Run::completionS).toArray();
        return new Cell(variant, mode, rs.size(), median(completion), Arrays.stream(completion).min().orElse(Double.NaN),
                Arrays.stream(completion).max().orElse(Double.NaN), median(rs.stream().mapToDouble(Run::mbS).toArray()),
                counters, drops, cwnd);
    }

    /** The median; the mean of the middle two for an even count (as the compare report takes it). */
    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    /** The report's markdown: the 2015 table, then ours, then the TCP counters and drops of each mode. */
    static String markdown(List<Row> rows, String command) {
        StringBuilder b = new StringBuilder();
        b.append("# netns over native: the MPI regression, measured by usnet\n\n");
        if (command != null) {
            b.append("From `").append(command).append("`.\n\n");
        }
        b.append("## Measured in 2015 (NAS CG class B, 8 hosts x 16 ranks, 10 GbE, OpenMPI over TCP)\n\n");
        b.append("| kernel | overhead of netns over native | what else was seen |\n|---|---|---|\n");
        for (Historical h : HISTORICAL) {
            b.append("| ").append(h.kernel()).append(" | ").append(h.overhead()).append(" | ").append(h.note()).append(" |\n");
        }
        b.append("\n## usnet (virtual time; medians over seeds, completion's range over seeds in parentheses)\n\n");
        b.append("| variant | seeds | native s | netns s | overhead | native MB/s | netns MB/s | TCP timeouts native / netns"
                + " | all RTOs native / netns | retrans segs native / netns |\n|---|---|---|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            b.append("| ").append(r.variant()).append(" | ").append(seeds(r)).append(" | ")
                    .append(completion(r.nativeCell())).append(" | ").append(completion(r.netnsCell())).append(" | ")
                    .append(Double.isNaN(r.overheadPercent()) ? "-" : String.format(Locale.ROOT, "%+.1f %%", r.overheadPercent()))
                    .append(" | ").append(num(r.nativeCell() == null ? Double.NaN : r.nativeCell().mbS(), 1)).append(" | ")
                    .append(num(r.netnsCell() == null ? Double.NaN : r.netnsCell().mbS(), 1)).append(" | ")
                    .append(pair(r, "TcpExtTCPTimeouts")).append(" | ").append(pair(r, RTOS)).append(" | ")
                    .append(pair(r, "TcpRetransSegs")).append(" |\n");
        }
        for (String mode : List.of(NATIVE, NETNS)) {
            b.append("\n### TCP counters, ").append(mode).append(" (summed over every namespace; `netstat -s` names)\n\n");
            List<String> cols = COUNTERS.stream().filter(c -> rows.stream().anyMatch(r -> value(cell(r, mode), c) > 0)).toList();
            b.append("| variant |");
            cols.forEach(c -> b.append(' ').append(c.replace("TcpExt", "")).append(" |"));
            b.append("\n|---|");
            cols.forEach(c -> b.append("---|"));
            b.append('\n');
            for (Row r : rows) {
                Cell c = cell(r, mode);
                if (c == null) {
                    continue;
                }
                b.append("| ").append(r.variant()).append(" |");
                cols.forEach(k -> b.append(' ').append(num(value(c, k), 0)).append(" |"));
                b.append('\n');
            }
            b.append("\nDrops by reason: ");
            List<String> parts = new ArrayList<>();
            for (Row r : rows) {
                Cell c = cell(r, mode);
                if (c != null) {
                    parts.add(r.variant() + " " + (c.drops().isEmpty() ? "none" : c.drops().entrySet().stream()
                            .map(e -> e.getKey() + " " + num(e.getValue(), 0)).reduce((x, y) -> x + ", " + y).orElse("")));
                }
            }
            b.append(String.join("; ", parts)).append(".\n");
        }
        return b.toString();
    }

    /** The median completion, with the range over seeds in parentheses when the seeds differ. */
    private static String completion(Cell c) {
        if (c == null) {
            return "-";
        }
        String m = num(c.completionS(), 3);
        return c.minCompletionS() == c.maxCompletionS() ? m
                : m + " (" + num(c.minCompletionS(), 3) + "–" + num(c.maxCompletionS(), 3) + ")";
    }

    static Cell cell(Row r, String mode) {
        return mode.equals(NATIVE) ? r.nativeCell() : r.netnsCell();
    }

    /**
     * Every retransmission timeout, whatever state it struck in: Linux counts the first RTO of an episode under one of
     * three names (tcp_retransmit_timer: TCPTimeouts from Open/Disorder, TCPSackFailures or TCPRenoFailures from
     * Recovery, TCPLossFailures from Loss); netstat -s prints TCPTimeouts as "other TCP timeouts".
     */
    static final String RTOS = "rtos";

    static double value(Cell c, String counter) {
        if (c == null) {
            return 0;
        }
        if (counter.equals(RTOS)) {
            return value(c, "TcpExtTCPTimeouts") + value(c, "TcpExtTCPSackFailures") + value(c, "TcpExtTCPLossFailures");
        }
        return c.counters().getOrDefault(counter, 0.0);
    }

    private static String seeds(Row r) {
        int a = r.nativeCell() == null ? 0 : r.nativeCell().seeds();
        int b = r.netnsCell() == null ? 0 : r.netnsCell().seeds();
        return a == b ? Integer.toString(a) : a + " / " + b;
    }

    private static String pair(Row r, String counter) {
        return (r.nativeCell() == null ? "-" : num(value(r.nativeCell(), counter), 0)) + " / "
                + (r.netnsCell() == null ? "-" : num(value(r.netnsCell(), counter), 0));
    }

    static String num(double v, int decimals) {
        if (Double.isNaN(v)) {
            return "-";
        }
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }
}
