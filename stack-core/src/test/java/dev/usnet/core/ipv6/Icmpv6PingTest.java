package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv6Addr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** ICMPv6 ping sockets: echo requests from a selected source, replies to the listener by identifier. */
class Icmpv6PingTest {
    private static final long MS = 1_000_000L;

    private record Reply(Ipv6Addr from, int seq, int hopLimit, int len, byte first) {}

    private static void ipv6On(NetStack s) {
        s.knobs().set("net.ipv6.conf.all.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
    }

    private static List<Reply> listen(NetStack s, int id) {
        List<Reply> got = new ArrayList<>();
        s.ipv6().icmp().openPing(id, (hi, lo, seq, hop, data, off, len) ->
                got.add(new Reply(new Ipv6Addr(hi, lo), seq, hop, len, len > 0 ? data.getByte(off) : 0)));
        return got;
    }

    @Test
    void echoAcrossAVethIsAnsweredFromThePingedAddress() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            ipv6On(a);
            ipv6On(b);
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            p[0].setUp(true);
            p[1].setUp(true);
            a.ipv6().addAddress(p[0], Ipv6Addr.parse("2001:db8::1"), 64, true);
            b.ipv6().addAddress(p[1], Ipv6Addr.parse("2001:db8::2"), 64, true);
            List<Reply> got = listen(a, 7);
            ByteBuf payload = Unpooled.buffer(16).writeZero(16).setByte(0, 0x5a);
            Ipv6Addr dst = Ipv6Addr.parse("2001:db8::2");
            for (int seq = 0; seq < 3; seq++) {
                assertEquals(Icmpv6.ECHO_SENT,
                        a.ipv6().icmp().sendEcho(dst.hi(), dst.lo(), null, 7, seq, payload, 0, 16, 0));
                net.run(10 * MS);
            }
            payload.release();
            assertEquals(3, got.size(), "every echo answered (the first after neighbour discovery)");
            for (int seq = 0; seq < 3; seq++) {
                assertEquals(new Reply(dst, seq, 64, 16, (byte) 0x5a), got.get(seq));
            }
            assertEquals(3, b.mib().get(Mib.Icmp6InEchos));
            assertEquals(3, a.mib().get(Mib.Icmp6OutEchos));
            a.ipv6().icmp().closePing(7);
            assertEquals(Icmpv6.ECHO_SENT,
                    a.ipv6().icmp().sendEcho(dst.hi(), dst.lo(), null, 7, 9, Unpooled.EMPTY_BUFFER, 0, 0, 0));
            net.run(10 * MS);
            assertEquals(3, got.size(), "a closed socket hears nothing");
            assertEquals(4, a.mib().get(Mib.Icmp6InEchoReplies));
        }
    }

    @Test
    void echoAcrossARouterSeesTheHopLimitLessOneAndTheRoutedSource() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack r = net.ns("r");
            NetStack c = net.ns("c");
            for (NetStack s : List.of(a, r, c)) {
                ipv6On(s);
            }
            r.knobs().set("net.ipv6.conf.all.forwarding", "1");
            VethEnd[] ar = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, r, "eth0", 0x0200_0000_0002L);
            VethEnd[] rc = VethEnd.createPair(r, "eth1", 0x0200_0000_0003L, c, "eth0", 0x0200_0000_0004L);
            for (VethEnd[] x : List.of(ar, rc)) {
                x[0].setUp(true);
                x[1].setUp(true);
            }
            a.ipv6().addAddress(ar[0], Ipv6Addr.parse("2001:db8:1::a"), 64, true);
            r.ipv6().addAddress(ar[1], Ipv6Addr.parse("2001:db8:1::1"), 64, true);
            r.ipv6().addAddress(rc[0], Ipv6Addr.parse("2001:db8:2::1"), 64, true);
            c.ipv6().addAddress(rc[1], Ipv6Addr.parse("2001:db8:2::c"), 64, true);
            a.ipv6().fib().addNew(new Route6(Ipv6Addr.ANY, 0, RouteType.UNICAST, Ipv6Addr.parse("2001:db8:1::1"),
                    ar[0], 1024, false));
            c.ipv6().fib().addNew(new Route6(Ipv6Addr.ANY, 0, RouteType.UNICAST, Ipv6Addr.parse("2001:db8:2::1"),
                    rc[1], 1024, false));
            List<Reply> got = listen(a, 0x1234);
            Ipv6Addr dst = Ipv6Addr.parse("2001:db8:2::c");
            for (int seq = 0; seq < 2; seq++) {
                assertEquals(Icmpv6.ECHO_SENT, a.ipv6().icmp().sendEcho(dst.hi(), dst.lo(), null, 0x1234, seq,
                        Unpooled.EMPTY_BUFFER, 0, 0, 0));
                net.run(10 * MS);
            }
            assertEquals(2, got.size());
            assertEquals(new Reply(dst, 1, 63, 0, (byte) 0), got.get(1), "one router on the way back: 64 - 1");
            assertEquals(4, r.mib().get(Mib.Ip6OutForwDatagrams), "two requests and two replies forwarded");
            assertEquals(2, c.mib().get(Mib.Icmp6InEchos));
            Ipv6Addr nowhere = Ipv6Addr.parse("fd00::9");
            assertEquals(Icmpv6.ECHO_NO_ROUTE, r.ipv6().icmp().sendEcho(nowhere.hi(), nowhere.lo(), null, 1, 0,
                    Unpooled.EMPTY_BUFFER, 0, 0, 0), "no route: ENETUNREACH");
            Ipv6Addr linkLocal = Ipv6Addr.parse("fe80::1");
            assertEquals(Icmpv6.ECHO_NO_ROUTE, a.ipv6().icmp().sendEcho(linkLocal.hi(), linkLocal.lo(), null, 1, 0,
                    Unpooled.EMPTY_BUFFER, 0, 0, 0), "a link-local destination needs a device");
            Ipv6Addr routerLinkLocal = r.ipv6().addrconf().linkLocal(ar[1]).address();
            assertEquals(Icmpv6.ECHO_SENT, a.ipv6().icmp().sendEcho(routerLinkLocal.hi(), routerLinkLocal.lo(),
                    ar[0], 0x1234, 5, Unpooled.EMPTY_BUFFER, 0, 0, 0));
            net.run(10 * MS);
            assertEquals(new Reply(routerLinkLocal, 5, 64, 0, (byte) 0), got.getLast(),
                    "through the named device, from the link-local address");
        }
    }

    @Test
    void aTentativeSourceIsNoSourceUntilDuplicateAddressDetectionEnds() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            ipv6On(a);
            ipv6On(b);
            a.knobs().set("net.ipv6.conf.default.accept_dad", "1");
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            p[1].setUp(true);
            p[0].setUp(true);
            a.ipv6().addAddress(p[0], Ipv6Addr.parse("2001:db8::1"), 64, false);
            b.ipv6().addAddress(p[1], Ipv6Addr.parse("2001:db8::2"), 64, true);
            List<Reply> got = listen(a, 3);
            Ipv6Addr dst = Ipv6Addr.parse("2001:db8::2");
            assertEquals(Icmpv6.ECHO_NO_SOURCE, a.ipv6().icmp().sendEcho(dst.hi(), dst.lo(), null, 3, 0,
                    Unpooled.EMPTY_BUFFER, 0, 0, 0), "only a tentative global address: EADDRNOTAVAIL");
            net.run(5_000 * MS);
            assertEquals(Icmpv6.ECHO_SENT, a.ipv6().icmp().sendEcho(dst.hi(), dst.lo(), null, 3, 1,
                    Unpooled.EMPTY_BUFFER, 0, 0, 0));
            net.run(10 * MS);
            assertEquals(1, got.size());
        }
    }
}
