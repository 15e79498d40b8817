package dev.usnet.core.nat;

import static dev.usnet.core.nat.NatFrames.a;
import static dev.usnet.core.nat.NatFrames.datagram;
import static dev.usnet.core.nat.NatFrames.icmp;
import static dev.usnet.core.nat.NatFrames.ip;
import static dev.usnet.core.nat.NatFrames.ipHeaderVerifies;
import static dev.usnet.core.nat.NatFrames.l4Verifies;
import static dev.usnet.core.nat.NatFrames.packet;
import static dev.usnet.core.nat.NatFrames.payload;
import static dev.usnet.core.nat.NatFrames.tcp;
import static dev.usnet.core.nat.NatFrames.u16;
import static dev.usnet.core.nat.NatFrames.u32;
import static dev.usnet.core.nat.NatFrames.udp;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.CowStats;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Rewriting a packet's source or destination: each result is compared byte for byte with the same datagram built
 * from scratch with the new address and port (every checksum summed anew), or its checksums are summed again.
 */
class NatManipTest {
    static final int INSIDE = a("10.0.0.1");
    static final int SERVER = a("198.19.1.1");
    static final int OUTSIDE = a("198.18.0.1");
    static final int BACKEND = a("10.0.0.2");

    private final CowStats cow = new CowStats();
    private final NatManip manip = new NatManip(cow);

    private static byte[] rewrite(NatManip m, byte[] datagram, boolean source, int addr, int port) {
        Packet p = packet(datagram);
        try {
            assertTrue(m.manip(p, source, addr, port));
            return datagram(p);
        } finally {
            p.release();
        }
    }

    @Test
    void sourceNatOfATcpSegmentGivesTheSegmentTheNewSourceWouldHaveSent() {
        byte[] data = payload(37, 1);
        byte[] before = ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, tcp(INSIDE, 34567, SERVER, 80, data));
        byte[] after = rewrite(manip, before, true, OUTSIDE, 40001);
        byte[] expected = ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 40001, SERVER, 80, data));
        assertArrayEquals(expected, after);
        assertTrue(ipHeaderVerifies(after, 0));
        assertTrue(l4Verifies(after));
    }

    @Test
    void destinationNatOfATcpSegmentRewritesTheDestinationAddressAndPort() {
        byte[] data = payload(100, 2);
        byte[] before = ip(Ipv4Packet.PROTO_TCP, SERVER, OUTSIDE, 0, tcp(SERVER, 5555, OUTSIDE, 80, data));
        byte[] after = rewrite(manip, before, false, BACKEND, 8080);
        assertArrayEquals(ip(Ipv4Packet.PROTO_TCP, SERVER, BACKEND, 0, tcp(SERVER, 5555, BACKEND, 8080, data)), after);
    }

    @Test
    void udpWithAChecksumIsRewrittenAsIfSentAnew() {
        byte[] data = payload(21, 3);
        byte[] before = ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 0, udp(INSIDE, 5353, SERVER, 53, data, true));
        byte[] after = rewrite(manip, before, true, OUTSIDE, 1024);
        assertArrayEquals(ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 1024, SERVER, 53, data, true)), after);
        assertTrue(l4Verifies(after));
    }

    @Test
    void udpWithoutAChecksumKeepsNone() {
        byte[] data = payload(21, 4);
        byte[] before = ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 0, udp(INSIDE, 5353, SERVER, 53, data, false));
        byte[] after = rewrite(manip, before, true, OUTSIDE, 1024);
        assertEquals(0, u16(after, 20 + 6));
        assertEquals(1024, u16(after, 20));
        assertEquals(OUTSIDE, u32(after, 12));
        assertTrue(ipHeaderVerifies(after, 0));
    }

    @Test
    void aUdpChecksumThatComesOutZeroIsWrittenAsAllOnes() {
        // Choose a payload word so that the rewritten datagram's checksum is 0: sum the rewritten datagram with
        // the word 0, then the word that completes the sum to all ones.
        byte[] data = new byte[8];
        byte[] probe = udp(OUTSIDE, 1024, SERVER, 53, data, false);
        long s = Checksum.add(io.netty.buffer.Unpooled.wrappedBuffer(probe), 0, probe.length,
                Checksum.pseudoHeader(OUTSIDE, SERVER, Ipv4Packet.PROTO_UDP, probe.length));
        int folded = ~Checksum.finish(s) & 0xffff;
        int word = 0xffff - folded;
        NatFrames.put16(data, 0, word);
        assertEquals(0, NatFrames.l4Sum(udp(OUTSIDE, 1024, SERVER, 53, data, false), 0, 16, OUTSIDE, SERVER,
                Ipv4Packet.PROTO_UDP), "the chosen payload makes the checksum 0");
        byte[] before = ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 0, udp(INSIDE, 5353, SERVER, 53, data, true));
        byte[] after = rewrite(manip, before, true, OUTSIDE, 1024);
        assertEquals(0xffff, u16(after, 26));
        assertTrue(l4Verifies(after));
    }

    @Test
    void anEchoRequestGetsTheNewSourceAndIdentifier() {
        byte[] data = payload(56, 5);
        byte[] before = ip(Ipv4Packet.PROTO_ICMP, INSIDE, SERVER, 0, icmp(IcmpPacket.ECHO, 0, 0x0777_0001, data));
        byte[] after = rewrite(manip, before, true, OUTSIDE, 0x1234);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, OUTSIDE, SERVER, 0, icmp(IcmpPacket.ECHO, 0, 0x1234_0001, data)), after);
    }

    @Test
    void anEchoReplyGetsTheInsideDestinationAndTheOriginalIdentifier() {
        byte[] data = payload(56, 6);
        byte[] before = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0, icmp(IcmpPacket.ECHO_REPLY, 0, 0x1234_0009, data));
        byte[] after = rewrite(manip, before, false, INSIDE, 0x0777);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, SERVER, INSIDE, 0, icmp(IcmpPacket.ECHO_REPLY, 0, 0x0777_0009, data)), after);
    }

    @Test
    void anIcmpErrorsRestOfHeaderIsNotAnIdentifier() {
        byte[] quote = ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 1, SERVER, 2, new byte[0], true));
        byte[] before = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_FRAG_NEEDED, 1400, quote));
        byte[] after = rewrite(manip, before, false, INSIDE, 0x4444);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, SERVER, INSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_FRAG_NEEDED, 1400, quote)), after);
    }

    @Test
    void aProtocolWithoutPortsHasOnlyItsAddressRewritten() {
        byte[] gre = payload(24, 7);
        byte[] after = rewrite(manip, ip(47, INSIDE, SERVER, 0, gre), true, OUTSIDE, 999);
        assertArrayEquals(ip(47, OUTSIDE, SERVER, 0, gre), after);
    }

    static final int SNATTED = IpConntrackStatus.CONFIRMED | IpConntrackStatus.SRC_NAT;

    private byte[] natPacket(byte[] datagram, boolean source, int status, boolean reply, int oSrc, int oSport,
                             int oDst, int oDport) {
        Packet p = packet(datagram);
        try {
            assertTrue(manip.natPacket(p, source, status, reply, oSrc, oSport, oDst, oDport));
            return datagram(p);
        } finally {
            p.release();
        }
    }

    @Test
    void aSourceNatedConnectionsPacketsAreMappedOutAndTheirRepliesBack() {
        // Original 10.0.0.1:34567 -> 198.19.1.1:80, reply 198.19.1.1:80 -> 198.18.0.1:40001.
        byte[] data = payload(9, 13);
        byte[] out = natPacket(ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, tcp(INSIDE, 34567, SERVER, 80, data)),
                true, SNATTED, false, SERVER, 80, OUTSIDE, 40001);
        assertArrayEquals(ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 40001, SERVER, 80, data)), out);
        byte[] back = natPacket(ip(Ipv4Packet.PROTO_TCP, SERVER, OUTSIDE, 0, tcp(SERVER, 80, OUTSIDE, 40001, data)),
                false, SNATTED, true, INSIDE, 34567, SERVER, 80);
        assertArrayEquals(ip(Ipv4Packet.PROTO_TCP, SERVER, INSIDE, 0, tcp(SERVER, 80, INSIDE, 34567, data)), back);
        // At a hook of the other kind the packet is left alone.
        byte[] untouched = ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, tcp(INSIDE, 34567, SERVER, 80, data));
        assertArrayEquals(untouched, natPacket(untouched, false, SNATTED, false, SERVER, 80, OUTSIDE, 40001));
    }

    @Test
    void aSourceNatedPingKeepsItsMappedIdOutAndGetsItsOwnIdBack() {
        // Original 10.0.0.1 id 7 -> 198.19.1.1, reply 198.19.1.1 -> 198.18.0.1 id 0x1234.
        byte[] data = payload(8, 14);
        byte[] out = natPacket(ip(Ipv4Packet.PROTO_ICMP, INSIDE, SERVER, 0, icmp(IcmpPacket.ECHO, 0, 0x0007_0001, data)),
                true, SNATTED, false, SERVER, 0x1234, OUTSIDE, 0x0000);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, OUTSIDE, SERVER, 0, icmp(IcmpPacket.ECHO, 0, 0x1234_0001, data)), out);
        byte[] back = natPacket(ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.ECHO_REPLY, 0, 0x1234_0001, data)), false, SNATTED, true, INSIDE, 7, SERVER, 0x0800);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, SERVER, INSIDE, 0, icmp(IcmpPacket.ECHO_REPLY, 0, 0x0007_0001, data)),
                back);
    }

    /** A device completing a partial checksum: sum from csumStart to the end, field included, and store it. */
    private static void completePartial(Packet p) {
        ByteBuf b = p.buf();
        int start = p.csumStart();
        int field = start + p.csumOffset();
        int c = Checksum.compute(b, start, b.writerIndex() - start);
        b.setShort(field, c);
    }

    @Test
    void aPartialTcpChecksumGetsOnlyThePseudoHeaderChange() {
        byte[] data = payload(300, 8);
        byte[] seg = tcp(INSIDE, 34567, SERVER, 80, data);
        // Locally sent with checksum offload: the field holds the folded pseudo-header sum.
        int pseudo = ~Checksum.finish(Checksum.pseudoHeader(INSIDE, SERVER, Ipv4Packet.PROTO_TCP, seg.length)) & 0xffff;
        NatFrames.put16(seg, 16, pseudo);
        Packet p = packet(ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, seg));
        try {
            p.setChecksum(ChecksumState.PARTIAL, p.network() + 20, 16);
            assertTrue(manip.manip(p, true, OUTSIDE, 40001));
            int expectedPseudo = ~Checksum.finish(Checksum.pseudoHeader(OUTSIDE, SERVER, Ipv4Packet.PROTO_TCP,
                    seg.length)) & 0xffff;
            assertEquals(expectedPseudo, p.buf().getUnsignedShort(p.network() + 20 + 16),
                    "the field holds the new pseudo-header sum, untouched by the port");
            completePartial(p);
            byte[] after = datagram(p);
            assertArrayEquals(ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 40001, SERVER, 80, data)), after);
        } finally {
            p.release();
        }
    }

    @Test
    void aPartialUdpChecksumIsAdjustedEvenThoughTheFieldIsNotAFinalSum() {
        byte[] data = payload(40, 9);
        byte[] dg = udp(INSIDE, 5000, SERVER, 53, data, false);
        int pseudo = ~Checksum.finish(Checksum.pseudoHeader(INSIDE, SERVER, Ipv4Packet.PROTO_UDP, dg.length)) & 0xffff;
        NatFrames.put16(dg, 6, pseudo);
        Packet p = packet(ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 0, dg));
        try {
            p.setChecksum(ChecksumState.PARTIAL, p.network() + 20, 6);
            assertTrue(manip.manip(p, true, OUTSIDE, 2000));
            completePartial(p);
            byte[] after = datagram(p);
            assertTrue(l4Verifies(after));
            assertEquals(2000, u16(after, 20));
            assertEquals(OUTSIDE, u32(after, 12));
        } finally {
            p.release();
        }
    }

    @Test
    void theFirstFragmentCarriesThePortsAndTheWholeDatagramsChecksum() {
        byte[] data = payload(64, 10);
        byte[] whole = udp(INSIDE, 5000, SERVER, 53, data, true);
        byte[] wholeAfter = udp(OUTSIDE, 1500, SERVER, 53, data, true);
        byte[] first = Arrays.copyOf(whole, 32);
        byte[] after = rewrite(manip, ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, Ipv4Packet.FLAG_MF, first), true,
                OUTSIDE, 1500);
        assertArrayEquals(ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, Ipv4Packet.FLAG_MF, Arrays.copyOf(wholeAfter, 32)),
                after);
    }

    @Test
    void aLaterFragmentHasNoPortsSoOnlyItsAddressChanges() {
        byte[] rest = payload(40, 11);
        byte[] after = rewrite(manip, ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 4, rest), true, OUTSIDE, 1500);
        assertArrayEquals(ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 4, rest), after);
    }

    @Test
    void aTransportHeaderCutShortIsRefused() {
        byte[] shortTcp = Arrays.copyOf(tcp(INSIDE, 1, SERVER, 2, new byte[0]), 6);
        Packet p = packet(ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, shortTcp));
        try {
            byte[] before = datagram(p);
            assertFalse(manip.manip(p, true, OUTSIDE, 3));
            assertArrayEquals(before, datagram(p), "nothing was written");
        } finally {
            p.release();
        }
    }

    @Test
    void aSharedPacketIsCopiedBeforeItIsRewrittenAndTheOtherHolderSeesNoChange() {
        byte[] data = payload(500, 12);
        byte[] before = ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, tcp(INSIDE, 34567, SERVER, 80, data));
        Packet p = packet(before);
        Packet clone = p.cloneShared();
        try {
            assertTrue(manip.manip(p, true, OUTSIDE, 40001));
            assertArrayEquals(before, datagram(clone));
            assertArrayEquals(ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 40001, SERVER, 80, data)),
                    datagram(p));
            assertEquals(1, cow.copies());
        } finally {
            p.release();
            clone.release();
        }
    }
}
