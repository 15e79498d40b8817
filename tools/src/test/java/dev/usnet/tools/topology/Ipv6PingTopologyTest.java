package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Pinger;
import dev.usnet.tools.app.UdpSender;
import dev.usnet.tools.app.UdpSink;
import dev.usnet.tools.run.VirtualRun;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The apps over IPv6 in virtual time: ping (ICMPv6 echo) on a veth, across a router, and to a link-local address
 * through its device; udp-send to a sink across the router.
 */
class Ipv6PingTopologyTest {
    /**
     * a -- r -- c, r forwarding; a pings b's side of r on the link, c across r, and r's link-local address through
     * eth0. The pings start at 3 s, when duplicate address detection (up to 2 s) has ended everywhere.
     */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [2001:db8:1::a/64]
                    peer: {namespace: r, name: eth0, addresses: [2001:db8:1::1/64, fe80::1/64]}
                routes:
                  - default via 2001:db8:1::1
                apps:
                  - {kind: ping, to: "2001:db8:1::1", interval: 0.1, start: 3s}
                  - {kind: ping, to: "2001:db8:2::c", interval: 0.1, start: 3s}
                  - {kind: ping, to: "fe80::1%eth0", interval: 0.1, start: 3s}
                  - {kind: udp-send, to: "2001:db8:2::c", port: 7000, rate: 100, size: 1000, start: 3s}
              r:
                knobs: {net.ipv6.conf.all.forwarding: 1}
                devices:
                  - name: eth1
                    kind: veth
                    addresses: [2001:db8:2::1/64]
                    netem: {delay: 1ms}
                    peer: {namespace: c, name: eth0, addresses: [2001:db8:2::c/64]}
              c:
                routes:
                  - default via 2001:db8:2::1
                apps:
                  - {kind: udp-sink, port: 7000}
            """;

    @Test
    void echoesOnTheLinkAcrossTheRouterAndToALinkLocalAddressAreAnswered() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", FILE),
                new VirtualRun.Options(5_000_000_000L, null, null));
        List<App> apps = r.apps();
        Pinger link = (Pinger) apps.get(0);
        Pinger routed = (Pinger) apps.get(1);
        Pinger linkLocal = (Pinger) apps.get(2);
        assertEquals(21, link.sent());
        assertEquals(21, link.received(), link.summary());
        assertEquals(64, link.lastHopLimit(), "the neighbour's reply, not forwarded");
        assertEquals(21, routed.sent());
        assertEquals(20, routed.received(), routed.summary());
        assertEquals(1, routed.unansweredAtEnd(), "the last echo, 1 ms from its reply when the run stops");
        assertEquals(63, routed.lastHopLimit(), "one router on the way back");
        long rtt = routed.histogram().getValueAtPercentile(50);
        assertTrue(rtt >= 1_000_000 && rtt < 1_100_000, "1 ms on r's way to c (netem delays what a device sends): " + rtt);
        assertEquals(21, linkLocal.received(), linkLocal.summary());
        assertEquals(64, linkLocal.lastHopLimit());
        assertTrue(routed.summary().startsWith("a: ping 2001:db8:2::c: 21 sent, 20 received"), routed.summary());
        assertEquals("a: ping fe80::1%eth0", linkLocal.label());
        UdpSender send = (UdpSender) apps.get(3);
        UdpSink sink = (UdpSink) apps.get(4);
        assertEquals(201, send.sent(), send.summary());
        assertEquals("a: udp-send [2001:db8:2::c]:7000: 201 sent", send.summary());
        assertEquals(201, sink.received(), "every datagram, checksums good: " + sink.summary());
        assertEquals(201_000, sink.bytes());
    }
}
