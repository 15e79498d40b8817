package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.app.BurstApp;
import dev.usnet.tools.app.App;
import dev.usnet.tools.app.TcpApp;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TCP app's {@code trace:} (its client's cwnd trace) and a burst app's {@code bursts:} (one row per burst), in
 * memory through {@link TcpApp#trace()} and {@link TcpApp#bursts()} and as CSV files; a device's
 * {@code gso:}; and a virtual run that ends when its TCP apps are done.
 */
class AppLogTopologyTest {
    private static final String TWO = """
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    netem: {rate: 1gbit, delay: 50us}
                    peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}
                apps:
                  - {kind: burst, server: b, burst_size: 64k, compute: 1ms, count: 5, trace: logs/burst-trace.csv, bursts: bursts.csv}
                  - {kind: stream, server: b, port: 5002, bytes: 1m, trace: true}
                  - {kind: rr, server: b, port: 5003, count: 10}
              b: {}
            """;

    private static TcpApp app(VirtualRun.RunResult r, String kind) {
        for (App a : r.apps()) {
            if (a instanceof TcpApp t && t.kind().equals(kind)) {
                return t;
            }
        }
        throw new AssertionError("no " + kind + " app in " + r.apps());
    }

    @Test
    void theLogsAreKeptForTheAppsThatAskAndWrittenWhereAFileIsNamed(@TempDir Path tmp) throws Exception {
        TopologySpec spec = TopologyFile.parse("t.yaml", TWO);
        VirtualRun.RunResult r = VirtualRun.run(spec, new VirtualRun.Options(60_000_000_000L, null, tmp).endingWhenAppsDone());
        assertTrue(r.summary().failed().isEmpty(), r.summary().apps().toString());
        // It ended when the apps were done, not after a minute (the stop and packets in flight add a little).
        assertTrue(r.virtualNanos() < 2_000_000_000L, "virtual " + r.virtualNanos());

        TcpApp burst = app(r, "burst");
        List<BurstApp.Burst> bursts = burst.bursts();
        assertEquals(5, bursts.size());
        for (int i = 0; i < 5; i++) {
            assertEquals(i, bursts.get(i).index());
            assertTrue(bursts.get(i).startNanos() >= burst.startNanos() && bursts.get(i).completionNanos() > 0);
        }
        TcpTrace t = burst.trace();
        assertNotNull(t);
        assertTrue(t.rows() > 40, "one row per ACK at least: " + t.rows());
        StringWriter csv = new StringWriter();
        t.writeCsv(csv);
        assertEquals(csv.toString(), Files.readString(tmp.resolve("logs/burst-trace.csv")));
        StringWriter bcsv = new StringWriter();
        BurstApp.writeCsv(bursts, burst.startNanos(), bcsv);
        String written = Files.readString(tmp.resolve("bursts.csv"));
        assertEquals(bcsv.toString(), written);
        assertEquals(6, written.lines().count(), written);
        // The first burst starts when the connection is up: one handshake (2 x 50 us and serialization) after the start.
        assertTrue(written.startsWith("burst,start_us,completion_us,retransmits,rtos,cwnd_start,cwnd_end\n0,100."), written);
        assertTrue(r.summary().appLogs().contains(tmp.resolve("bursts.csv")), r.summary().appLogs().toString());

        // trace: true keeps it in memory only; no key, no trace.
        TcpApp stream = app(r, "stream");
        assertNotNull(stream.trace());
        assertTrue(stream.trace().rows() > 100, "1 MiB is over 700 segments: " + stream.trace().rows());
        assertNull(stream.bursts());
        TcpApp rr = app(r, "rr");
        assertNull(rr.trace());
        assertNull(rr.bursts());
        try (var files = Files.walk(tmp)) {
            // Besides the logs asked for, only the TCP apps' latency histograms (written in virtual time too).
            assertEquals(List.of("burst-trace.csv", "bursts.csv"), files.filter(Files::isRegularFile)
                    .map(f -> f.getFileName().toString()).filter(n -> !n.endsWith(".hgrm")).sorted().toList());
        }
    }

    @Test
    void usnetRunNamesTheLogsItWrote(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("two.yaml");
        Files.writeString(f, TWO);
        Path out = tmp.resolve("out");
        RunCommandTest.Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "3", "--out", out.toString(),
                f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("usnet: wrote app logs logs/burst-trace.csv, bursts.csv to " + out + "\n"), r.out());
        assertTrue(Files.readString(out.resolve("logs/burst-trace.csv")).startsWith(
                "time_us,cwnd,ssthresh,snd_cwnd_cnt,srtt_us,inflight,ca_state,event\n"));
    }

    @Test
    void badLogKeysNameTheirLine() {
        String abs = TopologyErrors.onlyError(TWO.replace("trace: logs/burst-trace.csv", "trace: /etc/passwd"));
        assertTrue(abs.startsWith("t.yaml:10: namespaces.a.apps[0].trace: expected true, false or a file name relative to"
                + " the output directory"), abs);
        String up = TopologyErrors.onlyError(TWO.replace("trace: logs/burst-trace.csv", "trace: ../x.csv"));
        assertTrue(up.startsWith("t.yaml:10: namespaces.a.apps[0].trace: "), up);
        String twice = TopologyErrors.onlyError(TWO.replace("bursts: bursts.csv", "bursts: logs/burst-trace.csv"));
        assertEquals("t.yaml:10: namespaces.a.apps[0].bursts: file logs/burst-trace.csv is already written by the entry at"
                + " line 10", twice);
        String onStream = TopologyErrors.onlyError(TWO.replace("bytes: 1m, trace: true", "bytes: 1m, bursts: true"));
        assertTrue(onStream.startsWith("t.yaml:11: namespaces.a.apps[1].bursts: ") && onStream.contains("applies to kind burst"),
                onStream);
        String gso = TopologyErrors.onlyError(TWO.replace("addresses: [198.18.0.1/24]", "addresses: [198.18.0.1/24]\n        gso: maybe"));
        assertTrue(gso.startsWith("t.yaml:7: namespaces.a.devices[0].gso: expected true or false"), gso);
    }

    @Test
    void gsoSetsTheDevicesGenericSegmentationOffload() {
        TopologySpec spec = TopologyFile.parse("t.yaml", """
                namespaces:
                  a:
                    devices:
                      - name: eth0
                        kind: veth
                        gso: true
                        peer: {namespace: b, name: eth0, gso: false}
                      - name: eth1
                        kind: veth
                        peer: {namespace: b, name: eth1}
                  b: {}
                """);
        VirtualScheduler vs = new VirtualScheduler();
        try (Topology t = TopologyBuilder.build(spec, n -> vs, TopologyBuilder.ExternalDevices.placeholders())) {
            assertTrue(t.device("a", "eth0").gsoOffload());
            assertFalse(t.device("b", "eth0").gsoOffload());
            // Without the key a veth keeps its own default (off, as the experiment's 1448-byte segments need).
            assertFalse(t.device("a", "eth1").gsoOffload());
        }
    }
}
