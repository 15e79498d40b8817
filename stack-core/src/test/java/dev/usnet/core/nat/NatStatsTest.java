package dev.usnet.core.nat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.conntrack.ConntrackEntry;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.testing.TwoPortRouter;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** NAT's counters at a router: what each binding and rewrite adds, and the failures. */
class NatStatsTest {
    static final long R1 = TwoPortRouter.R1;
    static final long R2 = TwoPortRouter.R2;
    static final long H1 = TwoPortRouter.H1;
    static final long H2 = TwoPortRouter.H2;
    static final int INSIDE = Ipv4Addr.parse("198.18.1.0");

    /** r1 inside 198.18.1.1/24 (hosts .2 and .3), r2 outside 198.19.2.1/24 (host .2). */
    private static final class Router extends TwoPortRouter {
        final TestNet.Wire inside = w1;
        final TestNet.Wire outside = w2;
        final NatCore nat = NatCore.of(r.ipv4());

        Router() {
            super("198.18.1.1/24", List.of("198.18.1.2", "198.18.1.3"), "198.19.2.1/24", List.of("198.19.2.2"));
        }

        /** Masquerades what the inside network sends (within {@code range}), nothing else. */
        void masqueradeInside(NfNatRange range) {
            nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC, (p, st) -> {
                ConntrackEntry ct = p.nfct();
                boolean fromInside = ct != null && (ct.tuple(ConntrackEntry.ORIGINAL).src() & 0xffff_ff00) == INSIDE;
                return fromInside ? nat.masquerade(p, range, st.out()) : NfVerdict.ACCEPT;
            });
        }
    }

    private static int u16(byte[] f, int off) {
        return (f[off] & 0xff) << 8 | (f[off + 1] & 0xff);
    }

    @Test
    void aMasqueradedConnectionAndItsAnswerCountOneBindingAndTwoRewrites() {
        try (Router t = new Router()) {
            t.masqueradeInside(NfNatRange.NONE);
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 1, false));
            t.net.settle();
            byte[] answer = Frames.udp(H2, R2, "198.19.2.2", "198.19.2.1", 64, 20, 2, false);
            ByteBuf a = Unpooled.wrappedBuffer(answer);
            a.setShort(34, 2000);
            a.setShort(36, 1000);
            a.setShort(40, 0);
            t.outside.send(answer);
            t.net.settle();
            assertEquals(1, t.inside.received.size(), "the answer came back");
            NatStats s = t.nat.stats();
            assertEquals(1, s.sourceBindings());
            assertEquals(0, s.destinationBindings());
            assertEquals(0, s.nullBindingsMoved(), "the destination's null binding changed nothing");
            assertEquals(2, s.packetsRewritten(), "the source out, the destination back");
            assertEquals(0, s.icmpErrorsTranslated());
        }
    }

    /** An ICMP echo request from {@code src} to {@code dst} with {@code id}, as the inside host sends it. */
    private static byte[] echo(String src, String dst, int id) {
        int len = EthernetFrame.HEADER_LEN + 20 + IcmpPacket.HEADER_LEN;
        ByteBuf b = Unpooled.buffer(len).writerIndex(len);
        EthernetFrame.write(b, 0, R1, H1, EthernetFrame.ETH_P_IP);
        int s = Ipv4Addr.parse(src);
        int d = Ipv4Addr.parse(dst);
        Ipv4Packet.writeHeader(b, 14, 0, 20 + IcmpPacket.HEADER_LEN, 1, 0, 64, Ipv4Packet.PROTO_ICMP, s, d);
        b.setByte(34 + IcmpPacket.TYPE, IcmpPacket.ECHO);
        b.setShort(34 + IcmpPacket.REST, id);
        b.setShort(34 + IcmpPacket.REST + 2, 1);
        b.setShort(34 + IcmpPacket.CHECKSUM, Checksum.finish(Checksum.add(b, 34, IcmpPacket.HEADER_LEN, 0)));
        byte[] a = new byte[len];
        b.getBytes(0, a);
        return a;
    }

    @Test
    void theRoutersOwnEchoWithAMasqueradedIdGetsAnotherIdFromTheNullBinding() {
        try (Router t = new Router()) {
            t.masqueradeInside(NfNatRange.NONE);
            // The inside host's echo keeps its id: 198.19.2.1 id 77 -> 198.19.2.2 is taken.
            t.inside.send(echo("198.18.1.2", "198.19.2.2", 77));
            t.net.settle();
            // The router's own echo from that address with that id: no rule binds it, so the null binding of its
            // destination (the first it meets, at output) moves the id, as Linux moves an ICMP id for either kind.
            assertTrue(t.r.icmp().sendEcho(Ipv4Addr.parse("198.19.2.2"), 77, 1, Unpooled.EMPTY_BUFFER, 0, 0, 64));
            t.net.settle();
            assertEquals(2, t.outside.received.size(), () -> t.r.drops().snapshot().toString());
            byte[] own = t.outside.received.get(1).data();
            assertEquals(Ipv4Addr.parse("198.19.2.1"), Unpooled.wrappedBuffer(own).getInt(26));
            assertNotEquals(77, u16(own, 34 + IcmpPacket.REST), "the clashing id moved");
            NatStats s = t.nat.stats();
            assertEquals(1, s.sourceBindings());
            assertEquals(0, s.destinationBindings());
            assertEquals(1, s.nullBindingsMoved());
            assertEquals(2, s.packetsRewritten(), "the inside host's echo and the router's own");
        }
    }

    @Test
    void aRangeWithNoFreePortCountsTheFailure() {
        try (Router t = new Router()) {
            t.masqueradeInside(new NfNatRange(NfNatRange.PROTO_SPECIFIED, 0, 0, 1000, 1000));
            t.inside.send(Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 20, 1, false));
            t.inside.send(Frames.udp(H1, R1, "198.18.1.3", "198.19.2.2", 64, 20, 2, false));
            t.net.settle();
            assertEquals(1, t.outside.received.size(), "the second host's datagram found no free port");
            NatStats s = t.nat.stats();
            assertEquals(1, s.sourceBindings());
            assertEquals(1, s.noFreeTupleFailures());
            assertEquals(1, s.packetsRewritten());
        }
    }
}
