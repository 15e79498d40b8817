package dev.usnet.tools.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which differences a comparison ranks, and how much it claims of them: only beyond the seeds' spread, a handful
 * of events and flood paths after real differences, wall-clock numbers never in bold; and an --out that already
 * holds something is refused unless --force, which empties only a comparison's own output.
 */
class CompareRankingTest {

    private static double[][] seeds(double[]... perRow) {
        return perRow;
    }

    @Test
    void aDifferenceWithinTheSeedsSpreadIsNotRankedAndOneBeyondItIs() {
        MetricTable overlapping = new MetricTable.Builder("app a", List.of("#1 x", "#2 y"), 3)
                .column("Mbit/s", false, seeds(new double[] {900, 950, 1000}, new double[] {940, 990, 1040})).build();
        assertNull(overlapping.mostDifferent(), "940..1040 overlaps 900..1000: noise, not a difference");
        MetricTable apart = new MetricTable.Builder("app a", List.of("#1 x", "#2 y"), 3)
                .column("Mbit/s", false, seeds(new double[] {900, 950, 1000}, new double[] {1010, 1050, 1100})).build();
        MetricTable.Most m = apart.mostDifferent();
        assertNotNull(m);
        assertEquals(MetricTable.Rank.MAJOR, m.rank());
        assertTrue(apart.markdown(3).contains("**1050 (1010–1100)**"), apart.markdown(3));
    }

    @Test
    void aHandfulOfEventsRanksAfterADifferenceInNumbersOfSomeSize() {
        // 0 → 7 drops scores 1; 3 → 140 retransmissions scores 0.98 but is the one to believe.
        MetricTable t = new MetricTable.Builder("namespace h", List.of("#1 x", "#2 y"), 1)
                .column("drops", false, true, seeds(new double[] {0}, new double[] {7}))
                .column("retrans", false, true, seeds(new double[] {3}, new double[] {140})).build();
        MetricTable.Most m = t.mostDifferent();
        assertEquals("retrans", t.columnName(m.column()));
        assertEquals(MetricTable.Rank.MAJOR, m.rank());
        MetricTable only = new MetricTable.Builder("namespace h", List.of("#1 x", "#2 y"), 1)
                .column("drops", false, true, seeds(new double[] {0}, new double[] {7})).build();
        assertEquals(MetricTable.Rank.MINOR, only.mostDifferent().rank());
        assertTrue(only.markdown(3).contains("(minor: fewer than 100 drops on both sides)"), only.markdown(3));
        // Not a count: a latency of 1 µs against 51 µs is a real difference.
        MetricTable latency = new MetricTable.Builder("path p", List.of("#1 x", "#2 y"), 1)
                .column("p50 µs", false, seeds(new double[] {1}, new double[] {51})).build();
        assertEquals(MetricTable.Rank.MAJOR, latency.mostDifferent().rank());
    }

    /** One run of variant g with one flood path of {@code floodPackets} and a namespace with {@code cowBytes}. */
    private static CompareRunner.Run run(int g, String clock, long floodPackets, long cowBytes) {
        TopologySpec spec = TopologyFile.parse("t.yaml", """
                version: 1
                name: t
                namespaces:
                  h: {}
                """);
        Variant v = new Variant(g, g, Map.of("usnet.cow", g == 0 ? "none" : "head-copy"), List.of(), Map.of(), 1L);
        Map<String, Object> ns = new LinkedHashMap<>();
        ns.put("name", "h");
        ns.put("cow_copies", cowBytes / 1000);
        ns.put("cow_bytes", cowBytes);
        ns.put("drops", Map.of());
        ns.put("mib", Map.of());
        List<Map<String, Object>> paths = new ArrayList<>();
        paths.add(new LinkedHashMap<>(Map.of("ns", "h", "name", "hb0->flood", "packets", floodPackets, "bytes", floodPackets * 60)));
        Map<String, Object> dev = new LinkedHashMap<>(Map.of("name", "h/eth0", "rx_packets", 100_000L, "rx_bytes", 150_000_000L));
        Map<String, Object> measured = new LinkedHashMap<>(Map.of("cpu_ns", Map.of("h", 1000L + g * 5000L)));
        Results r = new Results("t", clock, 1, 1.0, Map.of(), List.of(), List.of(ns), paths, List.of(dev), measured, Map.of());
        return new CompareRunner.Run(new CompareRunner.Planned(v, spec, 1),
                new CompareRunner.Outcome(r, new RunHistograms(Map.of(), Map.of()), Map.of(), 1_000_000_000L, 1_000_000L));
    }

    private static String section(String md, String heading) {
        int from = md.indexOf(heading);
        assertTrue(from >= 0, md);
        int to = md.indexOf("\n## ", from + heading.length());
        return md.substring(from, to < 0 ? md.length() : to);
    }

    @Test
    void aFloodPathNeverTopsTheListAboveCowBytes(@TempDir Path dir) throws IOException {
        CompareReport.write(dir, "usnet compare t.yaml", "t.yaml", 1,
                List.of(run(0, "virtual", 1, 618_000_000L), run(1, "virtual", 51, 13_900_000L)));
        String md = Files.readString(dir.resolve("report.md"));
        String summary = section(md, "## Largest differences from the baseline");
        int cow = summary.indexOf("| namespace h |");
        int flood = summary.indexOf("| path h/hb0->flood |");
        assertTrue(cow > 0 && flood > cow, "the COW difference first, the flood path after it:\n" + summary);
        assertTrue(summary.contains("minor: a bridge's flood path"), summary);
        assertTrue(md.contains("One seed per variant: the ranking below cannot tell a difference from the noise"), md);
    }

    @Test
    void realClockNumbersAreMarkedMeasuredAndNeverBold(@TempDir Path dir) throws IOException {
        CompareReport.write(dir, "usnet compare t.yaml --clock real", "t.yaml", 1,
                List.of(run(0, "real", 1, 618_000_000L), run(1, "real", 51, 13_900_000L)));
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("Clock real: every number here was measured"), md);
        String tables = md.substring(md.indexOf("## Namespaces"));
        assertFalse(tables.contains("**#2"), "no variant in bold when every number is a measurement:\n" + tables);
        assertTrue(tables.contains("COW bytes ‡"), tables);
        String summary = section(md, "## Largest differences from the baseline");
        assertTrue(summary.contains("Measured on the wall clock"), summary);
        assertTrue(summary.matches("(?s).*\\| namespace h \\| #2 usnet.cow=head-copy \\| COW [a-z]+ ‡ \\|.*"), summary);
    }

    @Test
    void aNonEmptyOutIsRefusedUnlessForceWhichEmptiesOnlyAComparisonsOwnOutput(@TempDir Path dir) throws IOException {
        Path out = dir.resolve("out");
        Files.createDirectories(out.resolve("runs/1"));
        Files.writeString(out.resolve("report.md"), "old");
        Files.writeString(out.resolve("cwnd-old.png"), "old chart");
        UsageException refused = assertThrows(UsageException.class, () -> CompareCommand.prepareOut(out, false));
        assertTrue(refused.getMessage().contains("is not empty") && refused.getMessage().contains("--force"),
                refused.getMessage());
        assertTrue(Files.exists(out.resolve("cwnd-old.png")), "nothing removed without --force");
        CompareCommand.prepareOut(out, true);
        try (var s = Files.list(out)) {
            assertEquals(0, s.count(), "--force empties the directory");
        }
        Path home = dir.resolve("home");
        Files.createDirectories(home);
        Files.writeString(home.resolve("thesis.tex"), "years of work");
        UsageException foreign = assertThrows(UsageException.class, () -> CompareCommand.prepareOut(home, true));
        assertTrue(foreign.getMessage().contains("empties only a directory an earlier usnet compare wrote"),
                foreign.getMessage());
        assertTrue(Files.exists(home.resolve("thesis.tex")));
        Path empty = dir.resolve("empty");
        Files.createDirectories(empty);
        CompareCommand.prepareOut(empty, false);
        CompareCommand.prepareOut(dir.resolve("new"), false);
    }
}
