package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.errors;
import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tools.Usnet;
import dev.usnet.tools.app.TcpApp;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TCP apps in topology files ({@code kind: stream | rr | burst}): parsed with their units, checked with line
 * and key, and run in real time between two in-JVM namespaces (no privileges), with their report lines in the
 * exit summary and their histograms in the output directory.
 */
class TcpAppsTopologyTest {

    /** Two namespaces on one veth pair; the apps are appended under a's {@code apps:}. */
    private static final String TWO = """
            name: tcp-apps
            namespaces:
              b: {}
              a:
                knobs:
                  usnet.tcp.kernel: 3.19
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer:
                      namespace: b
                      name: eth0
                      addresses: [198.18.0.2/24]
                apps:
            """;

    /** Line 16 onwards: a 2 MiB stream, transactions for 200 ms, 10 bursts. */
    private static final String BOUNDED = TWO + """
                  - kind: stream
                    server: b
                    bytes: 2m
                    write_size: 16k
                  - kind: rr
                    server: b
                    to: 198.18.0.2
                    port: 5002
                    request_size: 64
                    response_size: 1k
                    duration: 200ms
                  - kind: burst
                    server: b
                    port: 5003
                    burst_size: 32k
                    compute: 1ms
                    count: 10
                    congestion: reno
            """;

    /**
     * The same kinds with no count and no duration: they run until usnet run ends. The stream's small send
     * buffer keeps what it still has to deliver after its stop (its FIN comes after the queued data) short.
     */
    private static final String UNBOUNDED = TWO + """
                  - {kind: stream, server: b, port: 6001, send_buffer: 128k}
                  - {kind: rr, server: b, port: 6002, request_size: 100, response_size: 200}
                  - {kind: burst, server: b, port: 6003, burst_size: 32k, compute: 2ms}
            """;


    @Test
    void entriesParseWithTheirUnitsAndTheServerAddressIsDerived() {
        TopologySpec spec = TopologyFile.parse("t.yaml", BOUNDED);
        List<TopologySpec.App> apps = spec.namespace("a").apps();
        var stream = (TopologySpec.TcpStream) apps.get(0);
        assertEquals("b", stream.common().server());
        assertNull(stream.common().to());
        assertEquals(5001, stream.common().port());
        assertEquals(0, stream.common().durationNanos());
        assertEquals(2 << 20, stream.common().count());
        assertEquals(16 * 1024, stream.writeBytes());
        assertEquals(Ipv4Addr.parse("198.18.0.2"), spec.serverAddress("a", stream));
        var rr = (TopologySpec.TcpRr) apps.get(1);
        assertEquals(0, rr.common().count());
        assertEquals(200_000_000L, rr.common().durationNanos());
        assertEquals(64, rr.requestBytes());
        assertEquals(1024, rr.responseBytes());
        var burst = (TopologySpec.TcpBurst) apps.get(2);
        assertEquals(32 * 1024, burst.burstBytes());
        assertEquals(10, burst.common().count());
        assertEquals(1_000_000L, burst.computeNanos());
        assertEquals(1, burst.ackBytes());
        assertEquals("reno", burst.common().congestion());
        assertEquals(16, stream.where().line());

        // A server with addresses on several networks is reached on the one the client shares with it.
        spec = TopologyFile.parse("t.yaml", """
                namespaces:
                  c:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.5.1/24], peer: {namespace: s, name: e1, addresses: [198.18.5.2/24]}}
                    apps:
                      - {kind: stream, server: s, bytes: 1m}
                  s:
                    devices:
                      - {name: lo, kind: loopback, addresses: [198.18.9.9/32]}
                      - {name: e0, kind: veth, addresses: [198.18.4.2/24], peer: {name: e0p, addresses: [198.18.4.1/24]}}
                """);
        var s = (TopologySpec.TcpStream) spec.namespace("c").apps().get(0);
        assertEquals(1 << 20, s.common().count());
        assertEquals(Ipv4Addr.parse("198.18.5.2"), spec.serverAddress("c", s));
        assertEquals(List.of(), errors(BOUNDED));
    }

    @Test
    void badEntriesAreReportedWithLineAndKey() {
        String e = onlyError(TWO + "      - {kind: tcp, server: b}\n");
        assertEquals("t.yaml:16: namespaces.a.apps[0].kind: expected one of ping, udp-send, udp-sink, stream, rr, burst,"
                + " spawn, mpi, udp-echo, http-server, http-get, got \"tcp\"", e);
        e = onlyError(TWO + "      - kind: rr\n        count: 10\n");
        assertEquals("t.yaml:16: namespaces.a.apps[0].server: missing (required)", e);
        e = onlyError(TWO + "      - kind: rr\n        server: c\n");
        assertTrue(e.startsWith("t.yaml:17: namespaces.a.apps[0].server: no usnet namespace c (declared: b, a)"), e);
        e = onlyError(TWO + "      - kind: stream\n        server: b\n        bytes: 10q\n");
        assertTrue(e.startsWith("t.yaml:18: namespaces.a.apps[0].bytes: '10q': unknown unit 'q'"), e);
        e = onlyError(TWO + "      - kind: burst\n        server: b\n        burst_size: 64k\n        compute: 5\n");
        assertTrue(e.startsWith("t.yaml:19: namespaces.a.apps[0].compute: '5' needs a unit"), e);
        e = onlyError(TWO + "      - kind: rr\n        server: b\n        response_size: 0\n");
        assertEquals("t.yaml:18: namespaces.a.apps[0].response_size: expected a size of at least 1 bytes, got 0", e);
        e = onlyError(TWO + "      - kind: burst\n        server: b\n");
        assertEquals("t.yaml:16: namespaces.a.apps[0].burst_size: missing (required)", e);
        e = onlyError(TWO + "      - kind: rr\n        server: b\n        duration: 0\n");
        assertEquals("t.yaml:18: namespaces.a.apps[0].duration: expected a time above 0, got 0", e);
        e = onlyError(TWO + "      - kind: stream\n        server: b\n        count: 5\n");
        assertEquals("t.yaml:18: namespaces.a.apps[0].count: 'count' applies to kind rr, burst, not stream"
                + " (a stream's amount is bytes:)", e);
        e = onlyError(TWO + "      - kind: stream\n        server: b\n        kernel: 3.19\n");
        assertTrue(e.startsWith("t.yaml:18: namespaces.a.apps[0].kernel: 'kernel' is not a per-socket setting: set"
                + " usnet.tcp.kernel"), e);
        e = onlyError(TWO + "      - kind: stream\n        server: b\n        congestion: bbr\n");
        assertEquals("t.yaml:18: namespaces.a.apps[0].congestion: expected one of reno, cubic, got \"bbr\"", e);
        e = onlyError(TWO + "      - kind: rr\n        server: b\n        to: 198.18.0.1\n");
        assertTrue(e.startsWith("t.yaml:18: namespaces.a.apps[0].to: 198.18.0.1 is not an address of namespace b"
                + " (has: 198.18.0.2)"), e);
        e = onlyError(TWO + "      - {kind: rr, server: b}\n      - {kind: stream, server: b, port: 5001}\n");
        assertTrue(e.startsWith("t.yaml:17: namespaces.a.apps[1].port: TCP port 5001 of namespace b already has the server"
                + " of the rr app at line 16"), e);
        // The build judges reachability: without the client's address there is no route to the server.
        e = onlyError((TWO + "      - {kind: stream, server: b}\n").replace("[198.18.0.1/24]", "[198.18.7.1/24]"));
        assertTrue(e.startsWith("t.yaml:16: namespaces.a.apps[0]: stream app: namespace a has no route to 198.18.0.2"), e);
        // Every problem at once.
        assertEquals(3, errors(TWO + "      - {kind: rr, server: b, count: many}\n"
                + "      - {kind: burst, server: b, burst_size: 1x, compute: 1}\n").size());
    }

    @Test
    void checkRefusesABadTcpAppWithExit2(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("bad.yaml");
        Files.writeString(f, TWO + "      - kind: rr\n        server: b\n        request_size: big\n");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(new String[] {"run", "--check", f.toString()}, new PrintWriter(so, true),
                new PrintWriter(se, true));
        assertEquals(Usnet.EXIT_USAGE, code, so + "" + se);
        assertTrue(se.toString().contains("usnet: " + f + ":18: namespaces.a.apps[0].request_size: 'big' is not a size"),
                se.toString());
        Files.writeString(f, BOUNDED);
        code = Usnet.execute(new String[] {"run", "--check", f.toString()}, new PrintWriter(so, true),
                new PrintWriter(se, true));
        assertEquals(0, code, so + "" + se);
    }

    @Test
    void theTcpExampleInTheDocsValidates() throws IOException {
        String doc = Files.readString(RunCommandTest.examples().resolveSibling("docs/topology.md"));
        int start = doc.indexOf("```yaml\n", doc.indexOf("#### TCP apps")) + "```yaml\n".length();
        TopologySpec spec = TopologyFile.parse("doc.yaml", doc.substring(start, doc.indexOf("```", start)));
        TopologyBuilder.check(spec);
        assertEquals(List.of("stream", "rr", "burst"), spec.namespace("node1").apps().stream()
                .map(a -> ((TopologySpec.TcpApp) a).kind()).toList());
    }

    @Test
    void streamRrAndBurstRunBetweenTwoNamespacesInRealTime(@TempDir Path tmp) throws Exception {
        TopologySpec spec = TopologyFile.parse("t.yaml", BOUNDED);
        Daemon d = Daemon.start(spec, new Daemon.Options(tmp, 2), Daemon.Providers.forThisBuild());
        List<TcpApp> tcp = d.apps().list().stream().filter(a -> a instanceof TcpApp)
                .map(a -> (TcpApp) a).toList();
        Daemon.Summary s;
        try {
            assertEquals(3, tcp.size());
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (!tcp.stream().allMatch(TcpApp::isDone) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        } finally {
            s = d.stop();
        }
        assertEquals(List.of(), s.errors());
        AppResult stream = tcp.get(0).client().result();
        AppResult rr = tcp.get(1).client().result();
        AppResult burst = tcp.get(2).client().result();
        // Each ended by its own limit, in order.
        for (AppResult r : List.of(stream, rr, burst)) {
            assertEquals(TcpError.NONE, r.error(), r.format());
        }
        assertEquals(2 << 20, stream.bytes(), stream.format());
        assertEquals(2 << 20, tcp.get(0).server().result().bytesReceived(), tcp.get(0).server().result().format());
        assertTrue(rr.operations() > 0 && rr.durationNanos() >= 200_000_000L, rr.format());
        assertEquals(rr.operations() * (64 + 1024), rr.bytes(), rr.format());
        assertEquals(rr.operations(), rr.latency().count());
        assertEquals(rr.operations(), tcp.get(1).server().result().operations());
        assertEquals(10, burst.operations(), burst.format());
        assertEquals(10, burst.latency().count());
        assertTrue(burst.durationNanos() >= 9 * 1_000_000L, burst.format());
        assertEquals("reno", tcp.get(2).client().socket().congestionControl());
        // Report lines: both ends of each app, after their namespaces.
        assertEquals(6, s.apps().size(), s.apps().toString());
        assertTrue(s.apps().get(0).startsWith("a: stream client 198.18.0.1:"), s.apps().toString());
        assertTrue(s.apps().get(1).startsWith("b: stream server 198.18.0.2:5001->198.18.0.1:"), s.apps().toString());
        assertTrue(s.apps().get(2).matches("a: rr client .*->198\\.18\\.0\\.2:5002: .* " + rr.operations() + " ops .*"),
                s.apps().toString());
        assertTrue(s.apps().get(4).matches("a: burst client .*: .* 10 ops .*completion p50 .*"), s.apps().toString());
        // Histograms of rr and burst (the stream has none), though no namespace asked for histograms.
        assertTrue(Files.readString(tmp.resolve("a.rr-198.18.0.2-5002.hgrm")).contains("Percentile"));
        assertTrue(Files.readString(tmp.resolve("a.burst-198.18.0.2-5003.hgrm")).contains("Percentile"));
        assertEquals(2, s.histograms().size(), s.histograms().toString());
    }

    @Test
    void usnetRunStopsTheAppsAtTheEndAndReportsThem(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("tcp-apps.yaml");
        Files.writeString(f, UNBOUNDED);
        Path out = tmp.resolve("out");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(new String[] {"run", "--duration", "1", "--out", out.toString(), f.toString()},
                new PrintWriter(so, true), new PrintWriter(se, true));
        String o = so.toString();
        assertEquals(0, code, o + se);
        assertEquals("", se.toString());
        assertTrue(o.contains("usnet: ready (2 namespaces, 2 devices)"), o);
        assertTrue(number(o, "usnet: a: stream client \\S+: [0-9.]+ s, (\\d+) bytes") > 0, o);
        assertTrue(number(o, "usnet: b: stream server \\S+: [0-9.]+ s, (\\d+) bytes") > 0, o);
        assertTrue(number(o, "usnet: a: rr client \\S+:6002: .*?, (\\d+) ops") > 0, o);
        assertTrue(number(o, "usnet: b: rr server \\S+: .*?, (\\d+) ops") > 0, o);
        assertTrue(number(o, "usnet: a: burst client \\S+:6003: .*?, (\\d+) ops") > 0, o);
        assertFalse(o.contains("ECONNABORTED"), o);
        // Stopped by usnet run, not by their own limits: each of the six ends still did its job.
        assertEquals(6, o.lines().filter(l -> l.matches("usnet: [ab]: (stream|rr|burst) (client|server) .*; ok")).count(), o);
        assertTrue(o.contains("usnet: wrote 2 histograms to " + out), o);
        assertTrue(Files.readString(out.resolve("a.rr-198.18.0.2-6002.hgrm")).contains("Percentile"));
        assertTrue(Files.readString(out.resolve("a.burst-198.18.0.2-6003.hgrm")).contains("Percentile"));
    }

    private static long number(String out, String regex) {
        Matcher m = Pattern.compile(regex).matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }
}
