package dev.usnet.tools.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MpiRegressionTest {
    @TempDir
    Path dir;

    private static String variant(String mode, String kernel, long seed, double completion, long timeouts, long backlogDrops) {
        return String.format(Locale.ROOT, """
                {"vary": {"mode": "%s", "usnet.tcp.kernel": "%s"}, "seed": %d, "results": {
                  "apps": [{"name": "h0.ping-0", "kind": "ping"},
                           {"name": "h0.mpi-0", "kind": "mpi", "completion_s": %.3f, "mb_s": %.3f,
                            "cwnd_at_loss": {"recovery": {"4": 2, "10": 1}, "rto": {"2": %d}}}],
                  "namespaces": [{"name": "h0", "mib": {"TcpExtTCPTimeouts": %d, "TcpExtTCPSackFailures": 2, "TcpRetransSegs": 7}, "drops": {"BACKLOG_FULL": %d}},
                                 {"name": "c0", "mib": {"TcpExtTCPTimeouts": 1, "TcpRetransSegs": 3}, "drops": {}}]}}""",
                mode, kernel, seed, completion, 1000 / completion, timeouts, timeouts, backlogDrops);
    }

    private Path compareDir(String name, String... variants) throws IOException {
        Path d = Files.createDirectories(dir.resolve(name));
        Files.writeString(d.resolve("results.json"), "{\"variants\": [" + String.join(",", variants) + "]}");
        return d;
    }

    @Test
    void overheadIsNetnsMedianOverNativeMedianPerKernel() throws IOException {
        Path d = compareDir("a",
                variant("native", "3.19", 1, 2.0, 0, 0), variant("native", "3.19", 2, 2.2, 0, 0),
                variant("native", "3.19", 3, 9.0, 0, 0),
                variant("netns", "3.19", 1, 2.1, 1, 5), variant("netns", "3.19", 2, 2.3, 3, 5),
                variant("netns", "3.19", 3, 2.4, 2, 5),
                variant("native", "4.0", 1, 2.0, 0, 0), variant("netns", "4.0", 1, 8.0, 40, 900));
        List<MpiRegression.Row> rows = MpiRegression.rows(MpiRegression.read(List.of(d), "mode"));
        assertEquals(List.of("3.19", "4.0"), rows.stream().map(MpiRegression.Row::variant).toList());
        MpiRegression.Row r319 = rows.get(0);
        assertEquals(2.2, r319.nativeCell().completionS(), 1e-9); // median of 2.0, 2.2, 9.0: the outlier does not move it
        assertEquals(2.3, r319.netnsCell().completionS(), 1e-9);
        assertEquals((2.3 / 2.2 - 1) * 100, r319.overheadPercent(), 1e-9);
        // counters summed over namespaces (h0's timeouts + c0's 1), then the median over seeds (1, 3, 2 -> 2, +1)
        assertEquals(3.0, r319.netnsCell().counters().get("TcpExtTCPTimeouts"), 1e-9);
        assertEquals(10.0, r319.netnsCell().counters().get("TcpRetransSegs"), 1e-9);
        assertEquals(5.0, MpiRegression.value(r319.netnsCell(), MpiRegression.RTOS), 1e-9); // 3 timeouts + 2 after SACK recovery
        assertEquals(300.0, rows.get(1).overheadPercent(), 1e-9);
        assertEquals(900.0, rows.get(1).netnsCell().drops().get("BACKLOG_FULL"), 1e-9);
        // cwnd at loss pooled over seeds: recovery {4:2, 10:1} in each of 3 seeds, rto {2: 1+3+2}
        assertEquals(6L, r319.netnsCell().cwndAtLoss().get(4L));
        assertEquals(6L, r319.netnsCell().cwndAtLoss().get(2L));

        String md = MpiRegression.markdown(rows, null);
        assertTrue(md.contains("| 4.0 and later | 300 % |"), md);
        assertTrue(md.contains("| 4.0 | 1 | 2.000 | 8.000 | +300.0 % | 500.0 | 125.0 | 1 / 41 | 3 / 43 | 10 / 10 |"), md);
        assertTrue(md.contains("| 3.19 | 3 | 2.200 (2.000–9.000) | 2.300 (2.100–2.400) | +4.5 % |"), md);
    }

    @Test
    void runsOfSeveralCompareDirectoriesJoinAndOtherAxesNameTheVariant() throws IOException {
        Path a = compareDir("a", variant("native", "4.0", 1, 2.0, 0, 0), variant("netns", "4.0", 1, 3.0, 0, 0));
        Path b = compareDir("b", variant("native", "4.0", 1, 2.0, 0, 0).replace("\"usnet.tcp.kernel\": \"4.0\"",
                        "\"usnet.tcp.kernel\": \"4.0\", \"usnet.tcp.ai\": \"accumulate\""),
                variant("netns", "4.0", 1, 2.5, 0, 0).replace("\"usnet.tcp.kernel\": \"4.0\"",
                        "\"usnet.tcp.kernel\": \"4.0\", \"usnet.tcp.ai\": \"accumulate\""));
        List<MpiRegression.Row> rows = MpiRegression.rows(MpiRegression.read(List.of(a, b), "mode"));
        assertEquals(List.of("4.0", "4.0, usnet.tcp.ai=accumulate"), rows.stream().map(MpiRegression.Row::variant).toList());
        assertEquals(25.0, rows.get(1).overheadPercent(), 1e-9);
    }

    @Test
    void aRunWithoutTheModeAxisOrWithoutAnMpiAppIsRefusedByName() throws IOException {
        Path noMode = compareDir("m", variant("native", "4.0", 1, 2, 0, 0).replace("\"mode\": \"native\", ", ""));
        var e = assertThrows(IllegalArgumentException.class, () -> MpiRegression.read(List.of(noMode), "mode"));
        assertTrue(e.getMessage().contains("no 'mode'") && e.getMessage().contains("--param mode=native,netns"), e.getMessage());
        Path noMpi = compareDir("n", variant("native", "4.0", 1, 2, 0, 0).replace("\"kind\": \"mpi\"", "\"kind\": \"burst\""));
        e = assertThrows(IllegalArgumentException.class, () -> MpiRegression.read(List.of(noMpi), "mode"));
        assertTrue(e.getMessage().contains("has no mpi app"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> MpiRegression.read(List.of(dir.resolve("none")), "mode"));
        assertTrue(e.getMessage().contains("no such file"), e.getMessage());
    }
}
