package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import java.util.List;
import org.junit.jupiter.api.Test;

class Ipv6FamilyTest {
    private static List<String> addrs(NetStack s) {
        return s.ipv6().addrconf().list().stream().map(Inet6Ifaddr::toString).toList();
    }

    @Test
    void aNamespaceHasNoIpv6UntilItIsTurnedOn() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            p[0].setUp(true);
            p[1].setUp(true);
            assertEquals(List.of(), addrs(a), "disable_ipv6 starts at 1: no link-local address, nothing sent");
            assertEquals(0, a.ipv6().fib().size());
        }
    }

    @Test
    void linkUpWithIpv6OnMakesTheLinkLocalAddressAndItsRoute() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            for (NetStack s : List.of(a, b)) {
                s.knobs().set("net.ipv6.conf.all.disable_ipv6", "0");
                s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
                s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
            }
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            p[0].setUp(true);
            assertEquals(List.of(), addrs(a), "no carrier while the peer is down: no address yet");
            p[1].setUp(true);
            p[0].setUp(false);
            p[0].setUp(true);
            assertEquals(List.of("fe80::ff:fe00:1/64 scope link dev eth0"), addrs(a));
            assertEquals(List.of("fe80::ff:fe00:2/64 scope link dev eth0"), addrs(b));
            assertEquals("fe80::/64 dev eth0 proto kernel metric 256", a.ipv6().fib().list().getFirst().toString());
            a.unregister(p[0]);
            assertEquals(List.of(), addrs(a), "the device takes its addresses with it");
            assertEquals(0, a.ipv6().fib().size());
        }
    }

    @Test
    void dadMakesTheLinkLocalTentativeAndAddrGenModeOneMakesNone() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            a.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            VethEnd[] q = VethEnd.createPair(a, "eth1", 0x0200_0000_0003L, b, "eth1", 0x0200_0000_0004L);
            a.knobs().set("net.ipv6.conf.eth1.addr_gen_mode", "1");
            for (VethEnd[] x : List.of(p, q)) {
                x[1].setUp(true);
                x[0].setUp(true);
            }
            List<String> l = addrs(a);
            assertEquals(List.of("fe80::ff:fe00:1/64 scope link tentative dev eth0"), l);
            assertTrue(a.ipv6().runsDad(p[0]));
        }
    }
}
