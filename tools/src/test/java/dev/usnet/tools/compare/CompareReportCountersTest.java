package dev.usnet.tools.compare;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report's TCP counter tables and the app table's extra columns, from results made up for the purpose:
 * counters named as {@code nstat} names them in a fixed order whatever the MIB holds, and an app kind's own
 * numbers (an mpi app's {@code completion_s}) shown without the report knowing the kind.
 */
class CompareReportCountersTest {
    private static final TopologySpec SPEC = TopologyFile.parse("t.yaml", """
            version: 1
            name: t
            namespaces:
              h1: {}
              h2: {}
            """);

    /** One run of variant {@code g}: namespaces h1 (with {@code mib}) and h2 (no TCP), one mpi-like app. */
    private static CompareRunner.Run run(int g, Map<String, Long> mib, String completion) {
        Variant v = new Variant(g, g, Map.of("usnet.tcp.kernel", g == 0 ? "3.19" : "4.0"), List.of(), Map.of(), 1L);
        List<Map<String, Object>> nss = new ArrayList<>();
        for (String ns : List.of("h1", "h2")) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("name", ns);
            n.put("cow_copies", 0L);
            n.put("cow_bytes", 0L);
            n.put("drops", Map.of());
            n.put("mib", ns.equals("h1") ? new TreeMap<>(mib) : Map.of("IpInReceives", 100L));
            nss.add(n);
        }
        List<Map<String, Object>> devs = new ArrayList<>();
        for (String ns : List.of("h1", "h2")) {
            devs.add(new LinkedHashMap<>(Map.of("name", ns + "/eth0", "rx_packets", 100L, "rx_bytes", 150000L)));
        }
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("name", "h1.mpi-0");
        app.put("ns", "h1");
        app.put("kind", "mpi");
        app.put("to", "");
        app.put("outcome", "ok");
        app.put("bytes", 1000000L);
        app.put("mbit_s", new BigDecimal("8.000"));
        app.put("ops", 10L);
        app.put("retrans", 0L);
        app.put("rtos", 0L);
        app.put("completion_s", new BigDecimal(completion));
        app.put("idle_ranks", 0L);
        app.put("pids", List.of());
        Map<String, Object> measured = new LinkedHashMap<>(Map.of("cpu_ns", Map.of("h1", 1000L, "h2", 1000L)));
        Results r = new Results("t", "virtual", 1, 1.0, Map.of(), List.of(app), nss, List.of(), devs, measured, Map.of());
        return new CompareRunner.Run(new CompareRunner.Planned(v, SPEC, 1),
                new CompareRunner.Outcome(r, new RunHistograms(Map.of(), Map.of()), Map.of(), 1_000_000_000L, 1_000_000L));
    }

    @Test
    void tcpCountersAreTabledPerNamespaceInNetstatOrderWithNewCountersAfterAndZeroColumnsLeftOut(@TempDir Path dir)
            throws IOException {
        // A counter this code does not name (TcpExtTCPFutureThing) and one it names at 0 in both runs (TCPLossUndo).
        Map<String, Long> a = Map.of("TcpRetransSegs", 12L, "TcpExtTCPTimeouts", 3L, "TcpExtDelayedACKs", 40L,
                "TcpExtTCPLossUndo", 0L, "TcpExtTCPFutureThing", 0L, "TcpInSegs", 900L, "IpInReceives", 1000L);
        Map<String, Long> b = Map.of("TcpRetransSegs", 30L, "TcpExtTCPTimeouts", 140L, "TcpExtDelayedACKs", 35L,
                "TcpExtTCPLossUndo", 0L, "TcpExtTCPFutureThing", 7L, "TcpInSegs", 880L, "IpInReceives", 990L);
        CompareReport.write(dir, "usnet compare t.yaml", "t.yaml", 1, List.of(run(0, a, "1.250"), run(1, b, "3.750")));
        String md = Files.readString(dir.resolve("report.md"));
        String header = "| variant | TcpExtTCPTimeouts | TcpExtDelayedACKs | TcpRetransSegs | TcpExtTCPFutureThing | TcpInSegs |\n";
        assertTrue(md.contains("### TCP counters in h1\n\n" + header), md);
        assertTrue(md.contains("| #1 usnet.tcp.kernel=3.19 (baseline) | 3 | 40 | 12 | 0 | 900 |\n"), md);
        // 4.0 differs most by its timeouts (|140 - 3| / 140) and by the new counter (7 against 0, score 1); 7 events
        // against none is a handful, which ranks after a difference in a hundred or more: the timeouts are bold.
        assertTrue(md.contains("| **#2 usnet.tcp.kernel=4.0** | **140** | 35 | 30 | 7 | 880 |\n"), md);
        assertFalse(md.contains("TcpExtTCPLossUndo"), "0 in every run: left out");
        assertFalse(md.contains("IpInReceives"), "not a TCP counter");
        assertFalse(md.contains("### TCP counters in h2"), "h2 counted no TCP event");
        int counters = md.indexOf("## TCP counters\n");
        assertTrue(counters > md.indexOf("## Namespaces") && counters < md.indexOf("## Drops by reason"), md);
    }

    @Test
    void anAppKindsOwnNumbersGetColumnsByTheirKeys(@TempDir Path dir) throws IOException {
        Map<String, Long> none = Map.of();
        CompareReport.write(dir, "usnet compare t.yaml", "t.yaml", 1, List.of(run(0, none, "1.250"), run(1, none, "3.750")));
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("### app h1.mpi-0 (mpi → )\n\n| variant | bytes | Mbit/s | ops | completion_s |\n"), md);
        assertTrue(md.contains("| #1 usnet.tcp.kernel=3.19 (baseline) | 1000000 | 8 | 10 | 1.25 |\n"), md);
        assertTrue(md.contains("| **#2 usnet.tcp.kernel=4.0** | 1000000 | 8 | 10 | **3.75** |\n"), md);
        assertFalse(md.contains("idle_ranks"), "0 in every run: left out");
        assertTrue(md.contains("No namespace counted a TCP event in any run."), md);
    }
}
