package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.tools.topology.file.TopologySpec;
import org.junit.jupiter.api.Test;

/**
 * The app keys usnet demo needed: a udp-send's {@code keep_clones} and {@code max_burst}, a stream's
 * {@code interval}.
 */
class DemoAppKeysTest {
    private static final String FILE = """
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}
                apps:
                  - {kind: udp-send, to: 198.18.0.2, port: 5001, keep_clones: 64, max_burst: 10ms}
                  - {kind: stream, server: b, write_size: 16k, interval: 10ms}
              b:
                apps:
                  - {kind: udp-sink, port: 5001}
            """;

    @Test
    void theKeysAreRead() {
        TopologySpec s = TopologyFile.parse("t.yaml", FILE);
        TopologySpec.UdpSend u = (TopologySpec.UdpSend) s.namespace("a").apps().get(0);
        assertEquals(64, u.keepClones());
        assertEquals(10_000_000L, u.maxBurstNanos());
        TopologySpec.TcpStream t = (TopologySpec.TcpStream) s.namespace("a").apps().get(1);
        assertEquals(16384, t.writeBytes());
        assertEquals(10_000_000L, t.intervalNanos());
    }

    @Test
    void withoutThemNothingIsKeptAndEverythingOwedIsSent() {
        TopologySpec s = TopologyFile.parse("t.yaml", FILE.replace(", keep_clones: 64, max_burst: 10ms", "")
                .replace(", interval: 10ms", ""));
        TopologySpec.UdpSend u = (TopologySpec.UdpSend) s.namespace("a").apps().get(0);
        assertEquals(0, u.keepClones());
        assertEquals(0, u.maxBurstNanos());
        assertEquals(0, ((TopologySpec.TcpStream) s.namespace("a").apps().get(1)).intervalNanos());
    }

    @Test
    void badValuesNameTheirLineAndKey() {
        assertEquals("t.yaml:9: namespaces.a.apps[0].keep_clones: expected an integer 0..1048576, got -1",
                onlyError(FILE.replace("keep_clones: 64", "keep_clones: -1")));
        assertEquals("t.yaml:9: namespaces.a.apps[0].max_burst: '10' needs a unit (expected a time with its unit like"
                + " 100ns, 50us, 1.5ms, 2s (ns, us, ms, s); or 0)", onlyError(FILE.replace("max_burst: 10ms", "max_burst: 10")));
        assertEquals("t.yaml:10: namespaces.a.apps[1].interval: expected a time above 0, got 0",
                onlyError(FILE.replace("interval: 10ms", "interval: 0")));
    }

    @Test
    void intervalIsAStreamKey() {
        String e = onlyError(FILE.replace("{kind: stream, server: b, write_size: 16k, interval: 10ms}",
                "{kind: rr, server: b, interval: 10ms}"));
        assertEquals("t.yaml:10: namespaces.a.apps[1].interval: 'interval' applies to kind stream, not rr", e);
    }
}
