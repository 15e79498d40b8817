package dev.usnet.core.nat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.testing.TwoPortRouter;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** NAT at the hooks of a router: masquerade out, the answers back, a clash moved, DNAT in, chains registered. */
class NatCoreTest {
    static final long R1 = TwoPortRouter.R1;
    static final long R2 = TwoPortRouter.R2;
    static final long H1 = TwoPortRouter.H1;
    static final long H2 = TwoPortRouter.H2;

    /** r1 inside 198.18.1.1/24 (hosts .2 and .3), r2 outside 198.19.2.1/24 (host .2). */
    private static final class Router extends TwoPortRouter {
        final TestNet.Wire inside = w1;
        final TestNet.Wire outside = w2;
        final NatCore nat = NatCore.of(r.ipv4());
        final ConntrackCore ct = ConntrackCore.of(r.ipv4());

        Router() {
            super("198.18.1.1/24", List.of("198.18.1.2", "198.18.1.3"), "198.19.2.1/24", List.of("198.19.2.2"));
        }
    }

    private static int u16(byte[] f, int off) {
        return (f[off] & 0xff) << 8 | (f[off + 1] & 0xff);
    }

    private static int addr(byte[] f, int off) {
        return Unpooled.wrappedBuffer(f).getInt(off);
    }

    private static void assertChecksumsRight(byte[] f) {
        ByteBuf b = Unpooled.wrappedBuffer(f);
        assertTrue(Checksum.verify(b, 14, 20), "IP header checksum");
        int len = u16(f, 16) - 20;
        if (u16(f, 40) == 0) {
            return; // sent without a UDP checksum, and NAT leaves it so
        }
        assertEquals(0, Checksum.finish(Checksum.add(b, 34, len, Checksum.pseudoHeader(b.getInt(26), b.getInt(30), 17, len))),
                "UDP checksum");
    }

    @Test
    void masqueradeKeepsAFreeSourcePortAndTranslatesTheAnswerBack() {
        try (Router t = new Router()) {
            NfHookOps chain = (p, st) -> t.nat.masquerade(p, NfNatRange.NONE, st.out());
            t.nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC, chain);
            assertTrue(t.ct.active(), "a nat chain brings connection tracking");
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 1, false));
            t.net.settle();
            byte[] out = t.outside.received.get(0).data();
            assertEquals(Ipv4Addr.parse("198.19.2.1"), addr(out, 26), "source is the outgoing device's address");
            assertEquals(1000, u16(out, 34), "a free source port is kept");
            assertChecksumsRight(out);
            // The answer, to the router's address and the kept port, goes back to the inside host.
            byte[] answer = Frames.udp(H2, R2, "198.19.2.2", "198.19.2.1", 64, 20, 2, false);
            ByteBuf a = Unpooled.wrappedBuffer(answer);
            a.setShort(34, 2000);
            a.setShort(36, 1000);
            a.setShort(40, 0);
            t.outside.send(answer);
            t.net.settle();
            assertEquals(0, t.r.drops().total(), t.r.drops().snapshot().toString());
            byte[] back = t.inside.received.get(0).data();
            assertEquals(Ipv4Addr.parse("198.18.1.2"), addr(back, 30));
            assertChecksumsRight(back);
            var e = t.ct.table().entries().get(0);
            assertTrue(e.hasStatus(IpConntrackStatus.SRC_NAT), e.describe(0));
            assertTrue(e.hasStatus(IpConntrackStatus.SEEN_REPLY), e.describe(0));
            t.nat.unregisterChain(NfHook.POST_ROUTING, chain);
            assertEquals(false, t.ct.active());
        }
    }

    @Test
    void aSecondInsideHostWithTheSamePortGetsAnotherPort() {
        try (Router t = new Router()) {
            t.nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC,
                    (p, st) -> t.nat.masquerade(p, new NfNatRange(NfNatRange.PROTO_SPECIFIED, 0, 0, 1000, 1001), st.out()));
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 1, false));
            t.inside.send(Frames.udp(H1, R1, "198.18.1.3", "198.19.2.2", 64, 20, 2, false));
            t.net.settle();
            assertEquals(2, t.outside.received.size());
            assertEquals(1000, u16(t.outside.received.get(0).data(), 34));
            assertEquals(1001, u16(t.outside.received.get(1).data(), 34), "the clash moves into the range's other port");
            assertChecksumsRight(t.outside.received.get(1).data());
            // The answer to 1001 reaches the second host.
            byte[] answer = Frames.udp(H2, R2, "198.19.2.2", "198.19.2.1", 64, 20, 3, false);
            ByteBuf b = Unpooled.wrappedBuffer(answer);
            b.setShort(34, 2000);
            b.setShort(36, 1001);
            b.setShort(40, 0);
            t.outside.send(answer);
            t.net.settle();
            assertEquals(Ipv4Addr.parse("198.18.1.3"), addr(t.inside.received.get(0).data(), 30));
            assertEquals(1000, u16(t.inside.received.get(0).data(), 36));
        }
    }

    @Test
    void dnatPublishesAnInsidePortAndTheAnswerLeavesFromThePublishedOne() {
        try (Router t = new Router()) {
            int inner = Ipv4Addr.parse("198.18.1.2");
            t.nat.registerChain(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, (p, st) -> t.nat.setup(p,
                    new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED, inner, inner, 5000, 5000), false));
            t.outside.send(Frames.udp(H2, R2, "198.19.2.2", "198.19.2.1", 64, 20, 1, false));
            t.net.settle();
            byte[] in = t.inside.received.get(0).data();
            assertEquals(inner, addr(in, 30));
            assertEquals(5000, u16(in, 36));
            assertChecksumsRight(in);
            byte[] answer = Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 2, false);
            ByteBuf b = Unpooled.wrappedBuffer(answer);
            b.setShort(34, 5000);
            b.setShort(36, 1000);
            b.setShort(40, 0);
            t.inside.send(answer);
            t.net.settle();
            byte[] out = t.outside.received.get(0).data();
            assertEquals(Ipv4Addr.parse("198.19.2.1"), addr(out, 26));
            assertEquals(2000, u16(out, 34), "the answer leaves from the published port");
            assertChecksumsRight(out);
        }
    }

    @Test
    void anOutputDnatIsRoutedToItsNewDestination() {
        try (Router t = new Router()) {
            int inner = Ipv4Addr.parse("198.18.1.2");
            int own = Ipv4Addr.parse("198.19.2.1");
            t.nat.registerChain(NfHook.LOCAL_OUT, NfIpPriority.NAT_DST, (p, st) -> t.nat.setup(p,
                    new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED, inner, inner, 5000, 5000), false));
            dev.usnet.core.ipv4.UdpSocket s = t.r.udp().bind(0, 0);
            ByteBuf data = Unpooled.buffer(8).writeZero(8);
            try {
                // To the router's own address: routed to lo, until the output DNAT sends it to the inside host.
                s.sendTo(own, 2000, data, 0, 8);
                t.net.settle();
            } finally {
                data.release();
                s.close();
            }
            assertEquals(1, t.inside.received.size(), "rerouted out of r1 (ip_route_me_harder)");
            byte[] out = t.inside.received.get(0).data();
            assertEquals(inner, addr(out, 30));
            assertEquals(5000, u16(out, 36));
            assertEquals(own, addr(out, 26), "the source stays the address the socket sent from");
            assertChecksumsRight(out);
        }
    }

    @Test
    void connectionsMasqueradedOutOfADeviceAreForgottenWhenItGoesDown() {
        try (Router t = new Router()) {
            // oifname "r2" masquerade
            t.nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC, (p, st) -> st.out() == t.outside.dutEnd
                    ? t.nat.masquerade(p, NfNatRange.NONE, st.out()) : NfVerdict.ACCEPT);
            // A DNATed connection in beside it, which is not masqueraded and stays.
            int inner = Ipv4Addr.parse("198.18.1.2");
            t.nat.registerChain(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, (p, st) -> {
                int dst = p.buf().getInt(p.network() + 16);
                return dst == Ipv4Addr.parse("198.19.2.1") ? t.nat.setup(p,
                        new NfNatRange(NfNatRange.MAP_IPS, inner, inner, 0, 0), false) : NfVerdict.ACCEPT;
            });
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 1, false));
            t.outside.send(Frames.udp(H2, R2, "198.19.2.2", "198.19.2.1", 64, 20, 2, false));
            t.net.settle();
            assertEquals(2, t.ct.table().count());
            // masq_device_event: the outgoing device goes down, its masqueraded connection goes with it.
            t.outside.dutEnd.setUp(false);
            assertEquals(1, t.ct.table().count());
            assertTrue(t.ct.table().entries().get(0).hasStatus(IpConntrackStatus.DST_NAT));
            // Another device going down forgets nothing.
            t.inside.dutEnd.setUp(false);
            assertEquals(1, t.ct.table().count());
        }
    }

    @Test
    void connectionsMasqueradedToAnAddressAreForgottenWhenTheAddressGoes() {
        try (Router t = new Router()) {
            TestNet.addr(t.r, t.outside.dutEnd, "198.19.3.1/24");
            t.r.neigh().addPermanent(t.outside.dutEnd, Ipv4Addr.parse("198.19.3.2"), H2);
            t.nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC,
                    (p, st) -> t.nat.masquerade(p, NfNatRange.NONE, st.out()));
            // Two connections out of r2, masqueraded to each of its addresses (the one on the next hop's subnet).
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 1, false));
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.3.2", 64, 20, 2, false));
            t.net.settle();
            assertEquals(2, t.ct.table().count());
            // masq_inet_event: 198.19.3.1 leaves r2; only the connection masqueraded to it goes.
            assertTrue(t.r.devinet().remove(t.outside.dutEnd, Ipv4Addr.parse("198.19.3.1")));
            assertEquals(1, t.ct.table().count());
            assertEquals(Ipv4Addr.parse("198.19.2.1"),
                    t.ct.table().entries().get(0).tuple(dev.usnet.core.conntrack.ConntrackEntry.REPLY).dst());
        }
    }
}
