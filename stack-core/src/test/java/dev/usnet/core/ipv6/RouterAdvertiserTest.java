package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
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

/** usnet's router side of router discovery: the usnet.ipv6.ra.<dev>.* advertisements. */
class RouterAdvertiserTest {
    private static final long RT_MAC = 0x02_00_00_00_90_feL;
    private static final long HOST_MAC = 0x02_00_00_00_90_0bL;
    private static final Ipv6Addr RT_LL = Ipv6Addr.parse("fe80::ff:fe00:90fe");
    private static final Ipv6Addr HOST_LL = Ipv6Addr.parse("fe80::ff:fe00:900b");
    private static final long SEC = 1_000_000_000L;
    private static final int RA = 14 + 40;

    private static NetStack router(TestNet net) {
        NetStack s = net.ns("router");
        s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        s.knobs().set("net.ipv6.conf.default.forwarding", "1");
        s.knobs().set("usnet.ipv6.ra.default.send", "1");
        return s;
    }

    private static List<TestNet.Seen> advertisements(TestNet.Wire w) {
        return w.received.stream().filter(x -> Ip6Frames.icmpType(x.data()) == Icmpv6Packet.ROUTER_ADVERTISEMENT)
                .toList();
    }

    private static int u8(byte[] f, int off) {
        return f[off] & 0xff;
    }

    private static long u32(byte[] f, int off) {
        return ((long) u8(f, off) << 24) | (u8(f, off + 1) << 16) | (u8(f, off + 2) << 8) | u8(f, off + 3);
    }

    @Test
    void theFirstAdvertisementCarriesTheKnobsAndThePrefixesOfTheDevicesAddresses() {
        try (TestNet net = new TestNet()) {
            NetStack s = router(net);
            s.knobs().set("usnet.ipv6.ra.default.mtu", "1400");
            s.knobs().set("usnet.ipv6.ra.default.router_lifetime", "600");
            s.knobs().set("usnet.ipv6.ra.default.other_config", "1");
            TestNet.Wire w = net.wire(s, "eth0", RT_MAC);
            s.ipv6().addAddress(w.dutEnd, Ipv6Addr.parse("2001:db8:1::1"), 64, false);
            s.ipv6().addAddress(w.dutEnd, Ipv6Addr.parse("2001:db8:1::2"), 64, false);
            s.ipv6().addAddress(w.dutEnd, Ipv6Addr.parse("fd00:5::1"), 48, false);
            net.settle();
            List<TestNet.Seen> ra = advertisements(w);
            assertEquals(1, ra.size(), "the first as soon as the link-local address is usable");
            byte[] f = ra.getFirst().data();
            assertEquals(RT_LL, Ip6Frames.addr(f, 22), "from the link-local address");
            assertEquals(Ipv6Addr.ALL_NODES, Ip6Frames.addr(f, 38));
            assertEquals(255, u8(f, 21));
            assertEquals(64, u8(f, RA + 4), "cur hop limit");
            assertEquals(0x40, u8(f, RA + 5), "O flag only");
            assertEquals(600, (u8(f, RA + 6) << 8) | u8(f, RA + 7), "router lifetime");
            int o = RA + 16;
            assertEquals(NdOption.SOURCE_LL_ADDR, u8(f, o));
            o += 8;
            assertEquals(NdOption.MTU, u8(f, o));
            assertEquals(1400, u32(f, o + 4));
            o += 8;
            assertEquals(NdOption.PREFIX_INFO, u8(f, o), "one prefix option per prefix, not per address");
            assertEquals(64, u8(f, o + 2));
            assertEquals(NdOption.PREFIX_ON_LINK | NdOption.PREFIX_AUTONOMOUS, u8(f, o + 3));
            assertEquals(2_592_000, u32(f, o + 4));
            assertEquals(604_800, u32(f, o + 8));
            assertEquals(Ipv6Addr.parse("2001:db8:1::"), Ip6Frames.addr(f, o + 16));
            o += 32;
            assertEquals(48, u8(f, o + 2));
            assertEquals(Ipv6Addr.parse("fd00:5::"), Ip6Frames.addr(f, o + 16));
            assertEquals(o + 32, f.length);
        }
    }

    /** The advertisement tools/conformance/scenarios/host6_ra_usnet.py gives a Linux host, which takes it. */
    private static final String RA_IN_FIXTURE = "3333000000010200000096fe86dd6000000000403afffe80000000000000000000fffe0096feff0200000000000000000000000000018600c56c40000258000000000000000001010200000096fe0501000000000578030440c000278d0000093a800000000020010db8009600000000000000000000";

    @Test
    void theAdvertisementALinuxHostWasGivenInFixtureHost6RaUsnetIsWhatUsnetSends() {
        try (TestNet net = new TestNet()) {
            NetStack s = router(net);
            s.knobs().set("usnet.ipv6.ra.default.mtu", "1400");
            s.knobs().set("usnet.ipv6.ra.default.router_lifetime", "600");
            TestNet.Wire w = net.wire(s, "eth0", 0x02_00_00_00_96_feL);
            s.ipv6().addAddress(w.dutEnd, Ipv6Addr.parse("2001:db8:96::1"), 64, false);
            net.settle();
            assertEquals(RA_IN_FIXTURE, java.util.HexFormat.of().formatHex(advertisements(w).getFirst().data()));
        }
    }

    @Test
    void unsolicitedAdvertisementsFollowEachOtherWithinTheIntervalsAndStopWithTheKnob() {
        try (TestNet net = new TestNet()) {
            NetStack s = router(net);
            s.knobs().set("usnet.ipv6.ra.default.max_interval", "30");
            s.knobs().set("usnet.ipv6.ra.default.min_interval", "20");
            TestNet.Wire w = net.wire(s, "eth0", RT_MAC);
            net.run(200 * SEC);
            List<TestNet.Seen> ra = advertisements(w);
            for (int i = 1; i < ra.size(); i++) {
                long gap = ra.get(i).at() - ra.get(i - 1).at();
                long max = i < 3 ? 16 * SEC : 30 * SEC;
                assertTrue(gap <= max && (i < 3 || gap >= 20 * SEC), "gap " + i + ": " + gap);
            }
            assertTrue(ra.size() >= 8 && ra.size() <= 10, "about 200 s / 25 s: " + ra.size());
            s.knobs().set("usnet.ipv6.ra.eth0.send", "0");
            net.run(100 * SEC);
            assertEquals(ra.size(), advertisements(w).size(), "send 0 stops them");
        }
    }

    @Test
    void aSolicitationIsAnsweredWithinHalfASecondButNotSoonerThanThreeSecondsAfterTheLast() {
        try (TestNet net = new TestNet()) {
            NetStack s = router(net);
            TestNet.Wire w = net.wire(s, "eth0", RT_MAC);
            net.run(SEC / 10);
            long first = advertisements(w).getFirst().at();
            w.send(rs());
            net.run(2 * SEC);
            assertEquals(1, advertisements(w).size(), "3 s between multicast advertisements");
            net.run(SEC + 1);
            assertEquals(2, advertisements(w).size());
            assertEquals(first + 3 * SEC, advertisements(w).get(1).at());
            assertNotNull(s.ipv6().neigh().lookup(w.dutEnd, HOST_LL.hi(), HOST_LL.lo()),
                    "the solicitation's link-layer option made an entry (a forwarding node)");
            net.run(10 * SEC);
            int before = advertisements(w).size();
            long sent = net.sched.nanoTime();
            w.send(rs());
            net.run(SEC / 2 + 1);
            assertEquals(before + 1, advertisements(w).size(), "answered within MAX_RA_DELAY_TIME");
            assertTrue(advertisements(w).getLast().at() - sent <= SEC / 2);
        }
    }

    @Test
    void aUsnetHostConfiguresItselfFromAUsnetRouter() {
        try (TestNet net = new TestNet()) {
            NetStack r = router(net);
            NetStack h = net.ns("host");
            h.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            VethEnd[] pair = net.link(r, "eth0", null, h, "eth0", null);
            r.ipv6().addAddress(pair[0], Ipv6Addr.parse("2001:db8:7::1"), 64, false);
            net.run(5 * SEC);
            Ipv6Addr slaac = new Ipv6Addr(Ipv6Addr.parse("2001:db8:7::").hi(),
                    Ipv6Addr.linkLocalFromMac(pair[1].mac()).lo());
            Inet6Ifaddr a = h.ipv6().addrconf().local(slaac.hi(), slaac.lo());
            assertNotNull(a, "SLAAC from the advertised prefix");
            assertEquals(Inet6Ifaddr.DadState.PREFERRED, a.state());
            Route6 dflt = h.ipv6().fib().get(Ipv6Addr.ANY, 0);
            assertNotNull(dflt);
            assertEquals(Ipv6Addr.linkLocalFromMac(pair[0].mac()), dflt.gateway());
        }
    }

    /** A router solicitation from the host's link-local address with its link-layer address. */
    private static byte[] rs() {
        ByteBuf m = Unpooled.buffer(16);
        m.writerIndex(16);
        m.setByte(0, Icmpv6Packet.ROUTER_SOLICITATION);
        NdOption.writeLinkAddress(m, 8, NdOption.SOURCE_LL_ADDR, HOST_MAC);
        byte[] body = new byte[16];
        m.getBytes(0, body);
        return Ip6Frames.icmp(0x3333_0000_0002L, HOST_MAC, HOST_LL, Ipv6Addr.ALL_ROUTERS, 255, body);
    }
}
