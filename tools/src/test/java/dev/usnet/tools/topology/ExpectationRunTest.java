package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code expect:} lines: checked at load with file:line errors, evaluated against the run's results. */
class ExpectationRunTest {
    private static final String TOPOLOGY = """
            version: 1
            namespaces:
              a:
                devices:
                  - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}}
                apps:
                  - {kind: ping, to: 198.18.0.2, interval: 0.1}
              b: {}
            expect:
            """;

    private static Result run(Path tmp, String... expect) throws IOException {
        return run("virtual", tmp, expect);
    }

    /** A 2 s run of the topology with these expect: lines, on {@code clock}. */
    private static Result run(String clock, Path tmp, String... expect) throws IOException {
        Path f = tmp.resolve("t.yaml");
        StringBuilder b = new StringBuilder(TOPOLOGY);
        for (String x : expect) {
            b.append("  - ").append(x).append('\n');
        }
        Files.writeString(f, b);
        return RunCommandTest.run("run", "--clock", clock, "--duration", "2", "--out", tmp.toString(), f.toString());
    }

    @Test
    void expectationsThatHoldExitZero(@TempDir Path tmp) throws IOException {
        Result r = run(tmp, "app a.ping-0 ops == 21", "ns b drops.NEIGH_QUEUE_FULL == 0", "device a/eth0 tx_packets >= 21");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("usnet: 3 of 3 expectations held"), r.out());
    }

    @Test
    void aFailedExpectationIsListedWithItsValueAndExitsOne(@TempDir Path tmp) throws IOException {
        Result r = run(tmp, "app a.ping-0 ops >= 100", "device b/eth0 rx_packets > 0");
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("usnet: expect failed: " + tmp.resolve("t.yaml") + ":10: app a.ping-0 ops >= 100 (was 21)"),
                r.err());
        assertTrue(r.out().contains("usnet: 1 of 2 expectations held"), r.out());
    }

    @Test
    void inRealTimeExpectationsAreEvaluatedAfterTheStopWithTheSameLinesAndExitCodes(@TempDir Path tmp) throws IOException {
        // Real time decides how many pings fit in 2 s (about 20): the bounds leave it room either way.
        Result ok = run("real", tmp, "app a.ping-0 ops >= 10", "app a.ping-0 ok == 1", "device b/eth0 rx_packets >= 10");
        assertEquals(0, ok.code(), ok.out() + ok.err());
        assertTrue(ok.out().contains("usnet: 3 of 3 expectations held"), ok.out());
        assertTrue(!ok.err().contains("warning"), ok.err());
        // After the report: the apps' lines come first, the expectations' verdict after the cleanup line.
        assertTrue(ok.out().indexOf("usnet: deleted 2 usnet namespaces") < ok.out().indexOf("expectations held"), ok.out());

        Result bad = run("real", tmp, "app a.ping-0 ops >= 100000", "app a.ping-0 ops >= 10", "path a/eth0->eth0 packets > 0");
        assertEquals(1, bad.code(), bad.out() + bad.err());
        String where = "usnet: expect failed: " + tmp.resolve("t.yaml");
        assertTrue(bad.err().matches("(?s).*" + java.util.regex.Pattern.quote(where + ":10: app a.ping-0 ops >= 100000 (was ")
                + "\\d+\\).*"), bad.err());
        assertTrue(bad.err().contains(where + ":12: path a/eth0->eth0 packets > 0 (was absent from the run)"), bad.err());
        assertTrue(bad.out().contains("usnet: 1 of 3 expectations held"), bad.out());
    }

    @Test
    void badExpectLinesAreFileLineErrorsInCheck(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("t.yaml");
        Files.writeString(f, TOPOLOGY + "  - app a.ping-1 ops >= 1\n  - link x y == 1\n  - ns a drops.NO_SUCH == 0\n"
                + "  - ns a cow_bytes ~ 1\n  - device a/eth9 tx_bytes == 0\n  - ns a cow_bytes == many\n");
        Result r = RunCommandTest.run("run", "--check", f.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("t.yaml:10: expect[0]: no app 'a.ping-1' (apps are named <ns>.<kind>-<i>: a.ping-0)"), r.err());
        assertTrue(r.err().contains("t.yaml:11: expect[1]: unknown selector kind 'link'"), r.err());
        assertTrue(r.err().contains("t.yaml:12: expect[2]: unknown field 'drops.NO_SUCH' for ns"), r.err());
        assertTrue(r.err().contains("t.yaml:13: expect[3]: unknown comparison '~'"), r.err());
        assertTrue(r.err().contains("t.yaml:14: expect[4]: no device 'a/eth9'"), r.err());
        assertTrue(r.err().contains("t.yaml:15: expect[5]: expected a number, got 'many'"), r.err());
    }

    /** a and b on host/br0 (ports ha, hb), c routed by host through hr; a pings b. */
    private static final String BRIDGED = """
            version: 1
            namespaces:
              host:
                devices:
                  - {name: br0, kind: bridge}
                  - {name: hr, kind: veth, addresses: [198.18.1.1/24], peer: {namespace: c, name: eth0, addresses: [198.18.1.2/24]}}
              a:
                devices:
                  - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: host, name: ha, master: br0}}
                apps:
                  - {kind: ping, to: 198.18.0.2, interval: 0.1}
              b:
                devices:
                  - {name: eth0, kind: veth, addresses: [198.18.0.2/24], peer: {namespace: host, name: hb, master: br0}}
              c: {}
            expect:
            """;

    @Test
    void pathsAreNamedAsReportsNameThemAndOnesThatCanNeverOccurAreRefused(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("t.yaml");
        // NS/IN->OUT as reports and charts write it, or IN->OUT where one namespace has it.
        Files.writeString(f, BRIDGED + "  - path host/ha->flood packets >= 1\n  - path host/ha->hb packets >= 20\n"
                + "  - path hb->ha packets >= 20\n  - path host/ha->br0 packets >= 1\n");
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "2", "--out", tmp.resolve("o").toString(),
                f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("usnet: 4 of 4 expectations held"), r.out());
        // Pairs no packet can ever take are errors of --check, each saying why.
        Files.writeString(f, BRIDGED + "  - path host/ha->hr packets == 0\n  - path hr->hb packets == 0\n"
                + "  - path host/hr->flood packets == 0\n  - path host/ha->ha packets == 0\n  - path ha->zz packets == 0\n"
                + "  - path eth0->eth0 packets == 0\n  - path nope/ha->hb packets == 0\n  - path host/ha-hb packets == 0\n");
        r = RunCommandTest.run("run", "--check", f.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("t.yaml:17: expect[0]: path 'host/ha->hr' can never carry a packet: ha is a port of bridge"
                + " br0: its frames go to another port of br0 (ha->PORT), to br0 itself (ha->br0) or are flooded (ha->flood)"),
                r.err());
        assertTrue(r.err().contains("t.yaml:18: expect[1]: path 'hr->hb' (in host) can never carry a packet: hb is a port of"
                + " bridge br0: a packet routed towards it leaves through the bridge (hr->br0)"), r.err());
        assertTrue(r.err().contains("t.yaml:19: expect[2]: path 'host/hr->flood' can never carry a packet: hr is no bridge"
                + " port, and only a bridge port floods"), r.err());
        assertTrue(r.err().contains("t.yaml:20: expect[3]: path 'host/ha->ha' can never carry a packet"), r.err());
        assertTrue(r.err().contains("t.yaml:21: expect[4]: path 'ha->zz': no namespace has both devices"), r.err());
        assertTrue(r.err().contains("t.yaml:22: expect[5]: path 'eth0->eth0' is in several namespaces (a, b, c): write"
                + " NS/IN->OUT, e.g. a/eth0->eth0"), r.err());
        assertTrue(r.err().contains("t.yaml:23: expect[6]: path 'nope/ha->hb': no namespace 'nope'"), r.err());
        assertTrue(r.err().contains("t.yaml:24: expect[7]: path 'host/ha-hb': expected NS/IN->OUT"), r.err());
    }
}
