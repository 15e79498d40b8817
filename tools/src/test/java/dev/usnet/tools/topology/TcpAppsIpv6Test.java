package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.RunCommandTest.Result;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TCP apps ({@code stream}, {@code rr}, {@code burst}) to an IPv6 {@code to:}: parsed as ping's is, run in virtual
 * time over IPv6 beside IPv4 ones to the same server, their report lines in IPv6's {@code [ADDR]:PORT} form.
 */
class TcpAppsIpv6Test {
    /** Two dual-stack namespaces on one veth pair with a delay (so TCP moves virtual time); a's apps follow. */
    private static final String TWO = """
            version: 1
            name: tcp6
            namespaces:
              b: {}
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24, 2001:db8::1/64 nodad]
                    netem: {delay: 1ms}
                    peer:
                      namespace: b
                      name: eth0
                      addresses: [198.18.0.2/24, 2001:db8::2/64 nodad]
                apps:
            """;

    @Test
    void anIpv6ToParsesAndALinkLocalOneIsRefused() {
        TopologySpec spec = TopologyFile.parse("t.yaml", TWO + """
                      - {kind: stream, server: b, to: 2001:db8::2, bytes: 1m}
                      - {kind: rr, server: b, to: "2001:db8::2", port: 5002}
                      - {kind: burst, server: b, to: 198.18.0.2, port: 5003, burst_size: 1k}
                """);
        List<TopologySpec.App> apps = spec.namespace("a").apps();
        var stream = (TopologySpec.TcpStream) apps.get(0);
        assertNull(stream.common().to());
        assertEquals(Ipv6Addr.parse("2001:db8::2"), stream.common().to6().address());
        assertEquals(Ipv6Addr.parse("2001:db8::2"), ((TopologySpec.TcpRr) apps.get(1)).common().to6().address());
        var burst = (TopologySpec.TcpBurst) apps.get(2);
        assertNull(burst.common().to6());
        assertEquals(dev.usnet.core.wire.Ipv4Addr.parse("198.18.0.2"), burst.common().to());
        assertEquals("t.yaml:16: namespaces.a.apps[0].to: a TCP app cannot connect to a link-local address"
                + " (fe80::2%eth0): give a global or unique local one",
                onlyError(TWO + "      - {kind: stream, server: b, to: \"fe80::2%eth0\"}\n"));
        String e = onlyError(TWO + "      - {kind: rr, server: b, to: \"2001:db8:9::2\"}\n");
        assertTrue(e.startsWith("t.yaml:16: namespaces.a.apps[0].to: rr app: namespace a has no IPv6 route to"
                + " 2001:db8:9::2"), e);
        assertTrue(onlyError(TWO + "      - {kind: rr, server: b, to: \"2001:db8::zz\"}\n")
                .startsWith("t.yaml:16: namespaces.a.apps[0].to: expected an IPv4 address like 198.18.0.2 or an IPv6"));
    }

    @Test
    void streamRrAndBurstRunOverIpv6BesideIpv4InVirtualTime(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("t.yaml");
        Files.writeString(f, TWO + """
                      - {kind: stream, server: b, to: 2001:db8::2, port: 5001, bytes: 1m}
                      - {kind: stream, server: b, port: 5002, bytes: 1m}
                      - {kind: rr, server: b, to: 2001:db8::2, port: 5003, request_size: 100, response_size: 1k, duration: 200ms}
                      - {kind: burst, server: b, to: 2001:db8::2, port: 5004, burst_size: 32k, count: 5}
                """);
        Path out = tmp.resolve("out");
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "2", "--seed", "1", "--out",
                out.toString(), f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        String o = r.out() + r.err();
        assertTrue(o.matches("(?s).*a: stream client \\[2001:db8::1]:[0-9]+->\\[2001:db8::2]:5001: [0-9.]+ s,"
                + " 1048576 bytes.*; ok.*"), o);
        assertTrue(o.matches("(?s).*b: stream server \\[2001:db8::2]:5001->\\[2001:db8::1]:[0-9]+: [0-9.]+ s,"
                + " 1048576 bytes.*; ok.*"), o);
        // The IPv4 stream beside it, to a port the server listens on over IPv4.
        assertTrue(o.matches("(?s).*a: stream client 198\\.18\\.0\\.1:[0-9]+->198\\.18\\.0\\.2:5002: [0-9.]+ s,"
                + " 1048576 bytes.*; ok.*"), o);
        assertTrue(o.matches("(?s).*a: rr client \\[2001:db8::1]:[0-9]+->\\[2001:db8::2]:5003: .* [1-9][0-9]* ops .*; ok.*"), o);
        assertTrue(o.matches("(?s).*a: burst client \\[2001:db8::1]:[0-9]+->\\[2001:db8::2]:5004: .* 5 ops .*; ok.*"), o);
        assertTrue(Files.readString(out.resolve("a.rr-2001_db8__2-5003.hgrm")).contains("Percentile"));
        assertTrue(Files.readString(out.resolve("a.burst-2001_db8__2-5004.hgrm")).contains("Percentile"));
    }

    /**
     * The dual-stack example: its stream and rr over IPv6 complete beside the IPv4 ones, in either clock. Its WAN
     * link is slowed from 1 Gbit/s to 20 Mbit/s here: the leak detector's records of every buffer access would
     * make a gigabit of streams take minutes.
     */
    @Test
    void theDualStackExampleRunsTcpOverBothFamiliesInBothClocks(@TempDir Path tmp) throws Exception {
        String yaml = Files.readString(RunCommandTest.examples().resolve("dual-stack.yaml"));
        assertTrue(yaml.contains("rate: 1gbit"), "the example's WAN rate");
        String example = tmp.resolve("dual-stack.yaml").toString();
        Files.writeString(tmp.resolve("dual-stack.yaml"), yaml.replace("rate: 1gbit", "rate: 20mbit"));
        for (String clock : List.of("virtual", "real")) {
            Result r = RunCommandTest.run("run", "--clock", clock, "--duration", "6", "--out",
                    tmp.resolve(clock).toString(), example);
            String o = r.out() + r.err();
            assertEquals(0, r.code(), clock + ": " + o);
            assertTrue(o.matches("(?s).*ctr1: stream client \\[2001:db8:0:1::11]:[0-9]+->\\[2001:db8:0:2::2]:5002: .*; ok.*"),
                    clock + ": " + o);
            assertTrue(o.matches("(?s).*server: stream server \\[2001:db8:0:2::2]:5002->\\[2001:db8:0:1::11]:[0-9]+: .*; ok.*"),
                    clock + ": " + o);
            assertTrue(o.matches("(?s).*ctr2: rr client \\[2001:db8:0:1::12]:[0-9]+->\\[2001:db8:0:2::2]:5004: .* [1-9][0-9]* ops .*; ok.*"),
                    clock + ": " + o);
            assertTrue(o.matches("(?s).*ctr1: stream client 198\\.18\\.0\\.11:[0-9]+->198\\.18\\.1\\.2:5001: .*; ok.*"),
                    clock + ": " + o);
            assertTrue(o.matches("(?s).*ctr2: rr client 198\\.18\\.0\\.12:[0-9]+->198\\.18\\.1\\.2:5003: .*; ok.*"),
                    clock + ": " + o);
        }
    }
}
