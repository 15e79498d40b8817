package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.NdOption;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A host taking router advertisements: solicitations, default routes, SLAAC, the router flag. */
class RouterDiscoveryTest {
    private static final long DUT_MAC = 0x02_00_00_00_90_01L;
    private static final long RT_MAC = 0x02_00_00_00_90_feL;
    private static final Ipv6Addr RT_LL = Ipv6Addr.parse("fe80::ff:fe00:90fe");
    private static final Ipv6Addr PREFIX = Ipv6Addr.parse("2001:db8:1::");
    private static final Ipv6Addr SLAAC = Ipv6Addr.parse("2001:db8:1::ff:fe00:9001");
    private static final Ipv6Addr FAR = Ipv6Addr.parse("2001:db8:99::5");
    private static final long SEC = 1_000_000_000L;
    private static final long ALL_NODES_MAC = 0x3333_0000_0001L;

    /** A host: IPv6 on, not forwarding, taking RAs; DAD as {@code dad}; no delay before DAD; no nonce. */
    private static NetStack host(TestNet net, boolean dad) {
        NetStack s = net.ns("dut");
        s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.accept_dad", dad ? "1" : "0");
        s.knobs().set("net.ipv6.conf.default.router_solicitation_delay", "0");
        s.knobs().set("net.ipv6.conf.all.enhanced_dad", "0");
        s.knobs().set("net.ipv6.conf.default.enhanced_dad", "0");
        return s;
    }

    /** An RA from the router's link-local address to all nodes, with its MAC, an MTU and one prefix option. */
    static byte[] ra(int hopLimit, int lifetime, long retransMs, long mtu, Ipv6Addr prefix, int pflags, long valid,
                     long preferred) {
        int len = 16 + 8 + (mtu != 0 ? 8 : 0) + (prefix != null ? 32 : 0);
        ByteBuf m = Unpooled.buffer(len);
        m.writerIndex(len);
        m.setByte(0, Icmpv6Packet.ROUTER_ADVERTISEMENT);
        m.setByte(4, hopLimit);
        m.setShort(6, lifetime);
        m.setInt(12, (int) retransMs);
        int o = 16;
        NdOption.writeLinkAddress(m, o, NdOption.SOURCE_LL_ADDR, RT_MAC);
        o += 8;
        if (mtu != 0) {
            m.setByte(o, NdOption.MTU);
            m.setByte(o + 1, 1);
            m.setInt(o + 4, (int) mtu);
            o += 8;
        }
        if (prefix != null) {
            m.setByte(o, NdOption.PREFIX_INFO);
            m.setByte(o + 1, 4);
            m.setByte(o + 2, 64);
            m.setByte(o + 3, pflags);
            m.setInt(o + 4, (int) valid);
            m.setInt(o + 8, (int) preferred);
            prefix.write(m, o + 16);
        }
        byte[] body = new byte[len];
        m.getBytes(0, body);
        return Ip6Frames.icmp(ALL_NODES_MAC, RT_MAC, RT_LL, Ipv6Addr.ALL_NODES, 255, body);
    }

    private static byte[] ra(int lifetime) {
        return ra(32, lifetime, 0, 1400, PREFIX, NdOption.PREFIX_ON_LINK | NdOption.PREFIX_AUTONOMOUS, 3600, 1800);
    }

    private static List<byte[]> ofType(TestNet.Wire w, int type) {
        return w.frames().stream().filter(f -> Ip6Frames.icmpType(f) == type).toList();
    }

    private static Route6 defaultRoute(NetStack s) {
        return s.ipv6().fib().get(Ipv6Addr.parse("::"), 0);
    }

    private static Inet6Ifaddr slaac(NetStack s) {
        return s.ipv6().addrconf().local(SLAAC.hi(), SLAAC.lo());
    }

    @Test
    void aHostSolicitsOnceItsLinkLocalAddressIsUsableAndBacksOffUntilAnAdvertisement() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, true);
            s.knobs().set("net.ipv6.conf.default.router_solicitation_interval", "1");
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(SEC / 2);
            assertTrue(ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).isEmpty(), "not while the link-local is tentative");
            net.run(SEC / 2 + 1);
            List<byte[]> rs = ofType(w, Icmpv6Packet.ROUTER_SOLICITATION);
            assertEquals(1, rs.size(), "the first at the end of DAD");
            byte[] f = rs.getFirst();
            assertEquals(Ipv6Addr.parse("fe80::ff:fe00:9001"), Ip6Frames.addr(f, 22), "from the link-local address");
            assertEquals(Ipv6Addr.ALL_ROUTERS, Ip6Frames.addr(f, 38));
            assertEquals(255, f[21] & 0xff);
            assertEquals(14 + 40 + 8 + 8, f.length, "an RS and a source link-layer address option");
            assertEquals(NdOption.SOURCE_LL_ADDR, f[14 + 40 + 8] & 0xff);
            net.run(SEC + SEC / 5);
            assertEquals(2, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size(), "the next 0.9..1.1 s later");
            net.run(SEC + SEC / 2);
            assertEquals(2, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size(), "then about twice as long");
            net.run(SEC);
            assertEquals(3, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size());
            w.send(ra(1800));
            net.settle();
            assertFalse(s.ipv6().ndisc().routerDiscovery().soliciting(w.dutEnd), "an advertisement ends them");
            net.run(20 * SEC);
            assertEquals(3, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size());
        }
    }

    @Test
    void solicitationsStopWhileTheLinkIsDownAndStartAgainWhenItIsUp() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(SEC);
            assertEquals(1, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size(), "at link up (no DAD)");
            w.dutEnd.setUp(false);
            net.run(30 * SEC);
            assertFalse(s.ipv6().ndisc().routerDiscovery().soliciting(w.dutEnd));
            assertEquals(1, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size(), "none while down");
            w.dutEnd.setUp(true);
            net.settle();
            assertEquals(2, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size(), "one at once when up again");
        }
    }

    @Test
    void routerSolicitationsLimitsTheirNumber() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            s.knobs().set("net.ipv6.conf.default.router_solicitations", "2");
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(120 * SEC);
            assertEquals(2, ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).size());
            assertFalse(s.ipv6().ndisc().routerDiscovery().soliciting(w.dutEnd));
        }
    }

    @Test
    void anAdvertisementFromAGlobalSourceIsDroppedAndItsReachableTimeIsTaken() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            byte[] f = ra(1800);
            // The source address (bytes 22..37) made global: 2001:db8::fe, checksum fixed again.
            byte[] g = Ip6Frames.icmp(ALL_NODES_MAC, RT_MAC, Ipv6Addr.parse("2001:db8::fe"), Ipv6Addr.ALL_NODES, 255,
                    java.util.Arrays.copyOfRange(f, 54, f.length));
            w.send(g);
            net.settle();
            assertNull(defaultRoute(s), "RFC 4861 6.1.2: the source must be link-local");
            assertEquals(1, s.drops().get(dev.usnet.core.stats.DropReason.IPV6_NDISC_BAD));
            byte[] body = java.util.Arrays.copyOfRange(f, 54, f.length);
            body[8] = 0;
            body[9] = 0;
            body[10] = (byte) 0x4e;
            body[11] = 0x20;
            w.send(Ip6Frames.icmp(ALL_NODES_MAC, RT_MAC, RT_LL, Ipv6Addr.ALL_NODES, 255, body));
            net.settle();
            assertNotNull(defaultRoute(s));
            assertEquals(20_000, s.conf(w.dutEnd).get(Ipv6Sysctl.NEIGH.baseReachableTimeMs), "reachable time 20 s");
        }
    }

    @Test
    void aForwardingNodeNeitherSolicitsNorTakesAdvertisementsUnlessAcceptRaIsTwo() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            s.knobs().set("net.ipv6.conf.default.forwarding", "1");
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(10 * SEC);
            assertTrue(ofType(w, Icmpv6Packet.ROUTER_SOLICITATION).isEmpty());
            w.send(ra(1800));
            net.settle();
            assertNull(defaultRoute(s));
            assertNull(slaac(s));
            s.knobs().set("net.ipv6.conf.eth0.accept_ra", "2");
            w.send(ra(1800));
            net.settle();
            assertNotNull(defaultRoute(s), "accept_ra 2: taken even while forwarding");
        }
    }

    @Test
    void anAdvertisementGivesADefaultRouteForItsLifetimeTheHopLimitMtuAndARouterEntry() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            w.send(ra(32, 4, 500, 1400, null, 0, 0, 0));
            net.settle();
            Route6 r = defaultRoute(s);
            assertNotNull(r);
            assertEquals(RT_LL, r.gateway());
            assertEquals(1024, r.metric());
            assertEquals(32, s.conf(w.dutEnd).get(Ipv6Sysctl.HOP_LIMIT), "the RA's cur hop limit");
            assertEquals(1400, s.conf(w.dutEnd).get(Ipv6Sysctl.MTU), "the MTU option");
            assertEquals(500, s.conf(w.dutEnd).get(Ipv6Sysctl.NEIGH.retransTimeMs), "the retrans timer");
            Neighbour n = s.ipv6().neigh().lookup(w.dutEnd, RT_LL.hi(), RT_LL.lo());
            assertNotNull(n, "the source link-layer option made an entry");
            assertTrue(n.router());
            assertEquals(RT_MAC, n.mac());
            net.run(3 * SEC);
            assertNotNull(defaultRoute(s));
            w.send(ra(32, 4, 0, 0, null, 0, 0, 0));
            net.run(3 * SEC);
            assertNotNull(defaultRoute(s), "a second RA renews the lifetime");
            net.run(SEC + 1);
            assertNull(defaultRoute(s), "expired 4 s after the last RA");
            w.send(ra(32, 4, 0, 0, null, 0, 0, 0));
            net.settle();
            assertNotNull(defaultRoute(s));
            w.send(ra(32, 0, 0, 0, null, 0, 0, 0));
            net.settle();
            assertNull(defaultRoute(s), "router lifetime 0: no longer a default router");
        }
    }

    @Test
    void accept_ra_knobsTurnEachPartOff() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            s.knobs().set("net.ipv6.conf.default.accept_ra_defrtr", "0");
            s.knobs().set("net.ipv6.conf.default.accept_ra_pinfo", "0");
            s.knobs().set("net.ipv6.conf.default.accept_ra_mtu", "0");
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            w.send(ra(1800));
            net.settle();
            assertNull(defaultRoute(s));
            assertEquals(64, s.conf(w.dutEnd).get(Ipv6Sysctl.HOP_LIMIT), "hop limit goes with accept_ra_defrtr");
            assertNull(slaac(s));
            assertNull(s.ipv6().fib().get(PREFIX, 64));
            assertEquals(1280, s.conf(w.dutEnd).get(Ipv6Sysctl.MTU), "unchanged");
        }
    }

    @Test
    void aPrefixOptionMakesAnOnLinkRouteAndASlaacAddressThatGoesThroughDadAndExpires() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, true);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(2 * SEC);
            w.clear();
            w.send(ra(32, 1800, 0, 0, PREFIX, NdOption.PREFIX_ON_LINK | NdOption.PREFIX_AUTONOMOUS, 5, 3));
            net.settle();
            Route6 onLink = s.ipv6().fib().get(PREFIX, 64);
            assertNotNull(onLink);
            assertNull(onLink.gateway());
            Inet6Ifaddr a = slaac(s);
            assertNotNull(a, "prefix + EUI-64 of the MAC");
            assertEquals(Inet6Ifaddr.Origin.AUTOCONF, a.origin());
            assertEquals(Inet6Ifaddr.DadState.TENTATIVE, a.state());
            List<byte[]> ns = ofType(w, Icmpv6Packet.NEIGHBOUR_SOLICITATION);
            assertEquals(1, ns.size(), "its DAD probe at once (router_solicitation_delay 0)");
            assertEquals(Ipv6Addr.ANY, Ip6Frames.addr(ns.getFirst(), 22));
            assertEquals(SLAAC, Ip6Frames.addr(ns.getFirst(), 62));
            assertEquals(14 + 40 + 24, ns.getFirst().length, "enhanced_dad 0: no nonce option");
            net.run(SEC + 1);
            assertEquals(Inet6Ifaddr.DadState.PREFERRED, a.state());
            net.run(4 * SEC);
            assertNull(slaac(s), "valid lifetime 5 s: deleted");
            assertNull(s.ipv6().fib().get(PREFIX, 64), "and the on-link route expired with it");
        }
    }

    @Test
    void pastItsPreferredLifetimeASlaacAddressIsDeprecatedAndAvoidedAsASource() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            Ipv6Addr fixed = Ipv6Addr.parse("2001:db8:1::77");
            s.ipv6().addAddress(w.dutEnd, fixed, 64, false);
            w.send(ra(32, 1800, 0, 0, PREFIX, NdOption.PREFIX_AUTONOMOUS, 100, 10));
            net.settle();
            Ipv6Addr dst = Ipv6Addr.parse("2001:db8:1::ff:fe00:9002");
            assertEquals(SLAAC, s.ipv6().addrconf().selectSource(w.dutEnd, dst.hi(), dst.lo()).address(),
                    "the longer shared prefix while both are preferred");
            net.run(10 * SEC + 1);
            assertTrue(slaac(s).deprecated());
            assertEquals(fixed, s.ipv6().addrconf().selectSource(w.dutEnd, dst.hi(), dst.lo()).address(),
                    "rule 3 before rule 8: the deprecated one is avoided");
            assertTrue(slaac(s).toString().contains("dynamic deprecated"));
            w.send(ra(32, 1800, 0, 0, PREFIX, NdOption.PREFIX_AUTONOMOUS, 100, 50));
            net.settle();
            assertFalse(slaac(s).deprecated(), "a new preferred lifetime makes it preferred again");
        }
    }

    @Test
    void aShortValidLifetimeCannotCutAnAddressBelowTwoHours() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            w.send(ra(32, 1800, 0, 0, PREFIX, NdOption.PREFIX_AUTONOMOUS, 86_400, 3600));
            net.settle();
            assertEquals(86_400, slaac(s).validLft());
            w.send(ra(32, 1800, 0, 0, PREFIX, NdOption.PREFIX_AUTONOMOUS, 60, 30));
            net.settle();
            assertEquals(7200, slaac(s).validLft(), "RFC 4862 5.5.3 e: two hours, not 60 s");
            assertNull(s.ipv6().fib().get(PREFIX, 64), "no on-link flag: no prefix route, and SLAAC makes none");
        }
    }

    @Test
    void slaacStopsAtMaxAddresses() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            s.knobs().set("net.ipv6.conf.default.max_addresses", "3");
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            for (int i = 1; i <= 5; i++) {
                w.send(ra(32, 1800, 0, 0, Ipv6Addr.parse("2001:db8:" + i + "::"), NdOption.PREFIX_AUTONOMOUS, 3600,
                        1800));
            }
            net.settle();
            assertEquals(3, s.ipv6().addrconf().list(w.dutEnd).size(), "the link-local and two SLAAC addresses");
            assertNotNull(s.ipv6().addrconf().local(Ipv6Addr.parse("2001:db8:2::ff:fe00:9001").hi(),
                    Ipv6Addr.parse("2001:db8:2::ff:fe00:9001").lo()));
            assertNull(s.ipv6().addrconf().local(Ipv6Addr.parse("2001:db8:3::ff:fe00:9001").hi(),
                    Ipv6Addr.parse("2001:db8:3::ff:fe00:9001").lo()));
        }
    }

    @Test
    void aSlaacAddressWhoseDadFailsIsDeletedButAStaticOneStaysDadfailed() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, true);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(2 * SEC);
            Inet6Ifaddr fixed = s.ipv6().addAddress(w.dutEnd, Ipv6Addr.parse("fd00:1::1"), 64, false);
            w.send(ra(1800));
            net.settle();
            assertNotNull(slaac(s));
            long peer = 0x02_00_00_00_90_0bL;
            w.send(Ip6Frames.na(ALL_NODES_MAC, peer, SLAAC, Ipv6Addr.ALL_NODES, SLAAC, 0x2000_0000, peer));
            Ipv6Addr f = fixed.address();
            w.send(Ip6Frames.na(ALL_NODES_MAC, peer, f, Ipv6Addr.ALL_NODES, f, 0x2000_0000, peer));
            net.settle();
            assertNull(slaac(s), "SLAAC, not permanent: deleted");
            assertEquals(Inet6Ifaddr.DadState.FAILED, fixed.state(), "given by hand: kept as dadfailed");
            w.send(ra(1800));
            net.settle();
            assertEquals(Inet6Ifaddr.DadState.TENTATIVE, slaac(s).state(), "the next RA makes it again");
        }
    }

    @Test
    void anAdvertisementWithoutTheRouterFlagFromARouterRemovesItsDefaultRoute() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.settle();
            w.send(ra(1800));
            net.settle();
            assertNotNull(defaultRoute(s));
            w.send(Ip6Frames.na(ALL_NODES_MAC, RT_MAC, RT_LL, Ipv6Addr.ALL_NODES, RT_LL, 0x8000_0000 | 0x2000_0000,
                    RT_MAC));
            net.settle();
            assertNotNull(defaultRoute(s), "R set: still a router");
            w.send(Ip6Frames.na(ALL_NODES_MAC, RT_MAC, RT_LL, Ipv6Addr.ALL_NODES, RT_LL, 0x2000_0000, RT_MAC));
            net.settle();
            assertNull(defaultRoute(s), "R clear: became a host, its default route goes");
            assertFalse(s.ipv6().neigh().lookup(w.dutEnd, RT_LL.hi(), RT_LL.lo()).router());
        }
    }

    @Test
    void ndiscNotifyAdvertisesEachAddressThatBecomesUsable() {
        try (TestNet net = new TestNet()) {
            NetStack s = host(net, true);
            s.knobs().set("net.ipv6.conf.default.ndisc_notify", "1");
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            net.run(2 * SEC);
            List<byte[]> na = ofType(w, Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT);
            assertEquals(1, na.size(), "the link-local address after its DAD");
            byte[] f = na.getFirst();
            assertEquals(Ipv6Addr.ALL_NODES, Ip6Frames.addr(f, 38));
            assertEquals(Ipv6Addr.parse("fe80::ff:fe00:9001"), Ip6Frames.addr(f, 62));
            assertEquals(0x20, f[58] & 0xff, "override only");
        }
    }
}
