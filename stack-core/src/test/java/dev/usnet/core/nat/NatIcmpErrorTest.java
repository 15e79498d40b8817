package dev.usnet.core.nat;

import static dev.usnet.core.nat.NatFrames.a;
import static dev.usnet.core.nat.NatFrames.datagram;
import static dev.usnet.core.nat.NatFrames.icmp;
import static dev.usnet.core.nat.NatFrames.ip;
import static dev.usnet.core.nat.NatFrames.packet;
import static dev.usnet.core.nat.NatFrames.payload;
import static dev.usnet.core.nat.NatFrames.tcp;
import static dev.usnet.core.nat.NatFrames.udp;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.CowStats;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * ICMP errors about NATed connections: the quote and the error's header are mapped back, and the result is
 * compared byte for byte with the error the host behind the NAT would have got without NAT.
 */
class NatIcmpErrorTest {
    static final int INSIDE = a("10.0.0.1");
    static final int SERVER = a("198.19.1.1");
    static final int OUTSIDE = a("198.18.0.1");
    static final int BACKEND = a("10.0.0.2");
    static final int ROUTER = a("198.19.0.254");

    static final int SNAT_STATUS = IpConntrackStatus.CONFIRMED | IpConntrackStatus.SRC_NAT
            | IpConntrackStatus.SRC_NAT_DONE | IpConntrackStatus.DST_NAT_DONE;
    static final int DNAT_STATUS = IpConntrackStatus.CONFIRMED | IpConntrackStatus.DST_NAT
            | IpConntrackStatus.SRC_NAT_DONE | IpConntrackStatus.DST_NAT_DONE;

    private final NatIcmpError translation = new NatIcmpError(new NatManip(null));

    private byte[] translate(byte[] error, boolean source, int status, boolean reply, int oSrc, int oSport, int oDst,
                             int oDport, boolean expectAccepted) {
        Packet p = packet(error);
        try {
            boolean ok = translation.translate(p, source, status, reply, oSrc, oSport, oDst, oDport);
            if (expectAccepted) {
                assertTrue(ok);
            } else {
                assertFalse(ok);
            }
            return datagram(p);
        } finally {
            p.release();
        }
    }

    /**
     * Source NAT 10.0.0.1:5353 → 198.18.0.1:40000 for a datagram to 198.19.1.1:53; the server answers port
     * unreachable. At prerouting (a destination manip) in the reply direction, the other direction's tuple is the
     * original one, 10.0.0.1:5353 → 198.19.1.1:53.
     */
    @Test
    void aPortUnreachableForASourceNatedUdpDatagramIsMappedBackWhole() {
        byte[] data = payload(12, 1);
        byte[] sentOutside = ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 40000, SERVER, 53, data, true));
        byte[] sentInside = ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 0, udp(INSIDE, 5353, SERVER, 53, data, true));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, sentOutside));
        byte[] after = translate(error, false, SNAT_STATUS, true, INSIDE, 5353, SERVER, 53, true);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, SERVER, INSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, sentInside)), after);
    }

    @Test
    void aTimeExceededQuotingAWholeTcpHeaderGetsTheQuotedChecksumUpdated() {
        byte[] data = payload(8, 2);
        byte[] outside = ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 40001, SERVER, 80, data));
        byte[] inside = ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, tcp(INSIDE, 34567, SERVER, 80, data));
        // A router on the way quotes the header and 28 bytes of TCP (RFC 1812 allows more than 8).
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, ROUTER, OUTSIDE, 0,
                icmp(IcmpPacket.TIME_EXCEEDED, IcmpPacket.CODE_EXC_TTL, 0, outside));
        byte[] after = translate(error, false, SNAT_STATUS, true, INSIDE, 34567, SERVER, 80, true);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, ROUTER, INSIDE, 0,
                icmp(IcmpPacket.TIME_EXCEEDED, IcmpPacket.CODE_EXC_TTL, 0, inside)), after);
    }

    @Test
    void aQuoteOfOnlyEightTcpBytesGetsItsPortsButNoChecksumToUpdate() {
        byte[] outside = ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 40001, SERVER, 80, new byte[0]));
        byte[] inside = ip(Ipv4Packet.PROTO_TCP, INSIDE, SERVER, 0, tcp(INSIDE, 34567, SERVER, 80, new byte[0]));
        byte[] quotedOutside = Arrays.copyOf(outside, 28);
        byte[] quotedInside = Arrays.copyOf(inside, 28);
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_HOST_UNREACH, 0, quotedOutside));
        byte[] after = translate(error, false, SNAT_STATUS, true, INSIDE, 34567, SERVER, 80, true);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, SERVER, INSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_HOST_UNREACH, 0, quotedInside)), after);
    }

    /**
     * Destination NAT 198.18.0.1:80 → 10.0.0.2:8080. The backend's answer left as 198.18.0.1:80 → client; a router
     * past the client's side sends an error about it back, in the original direction; at prerouting the other
     * direction's tuple is the reply one, 10.0.0.2:8080 → 198.19.1.1:5555.
     */
    @Test
    void anErrorAboutADestinationNatedAnswerReachesTheBackendAsIfItHadNoNat() {
        byte[] data = payload(20, 3);
        byte[] answerOutside = ip(Ipv4Packet.PROTO_TCP, OUTSIDE, SERVER, 0, tcp(OUTSIDE, 80, SERVER, 5555, data));
        byte[] answerInside = ip(Ipv4Packet.PROTO_TCP, BACKEND, SERVER, 0, tcp(BACKEND, 8080, SERVER, 5555, data));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, ROUTER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_FRAG_NEEDED, 1280, answerOutside));
        byte[] after = translate(error, false, DNAT_STATUS, false, BACKEND, 8080, SERVER, 5555, true);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, ROUTER, BACKEND, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_FRAG_NEEDED, 1280, answerInside)), after);
    }

    /**
     * The same source NAT seen at postrouting (a source manip): an error the inside host sends about a datagram
     * from the server (reply direction of the connection, so the error travels the original direction) leaves with
     * the outside address, quoting the datagram as the server sent it.
     */
    @Test
    void anErrorFromBehindASourceNatLeavesWithTheOutsideAddress() {
        byte[] data = payload(10, 4);
        byte[] reachedInside = ip(Ipv4Packet.PROTO_UDP, SERVER, INSIDE, 0, udp(SERVER, 53, INSIDE, 5353, data, true));
        byte[] sentByServer = ip(Ipv4Packet.PROTO_UDP, SERVER, OUTSIDE, 0, udp(SERVER, 53, OUTSIDE, 40000, data, true));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, INSIDE, SERVER, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, reachedInside));
        // Original direction; the other tuple is the reply one: 198.19.1.1:53 → 198.18.0.1:40000.
        byte[] after = translate(error, true, SNAT_STATUS, false, SERVER, 53, OUTSIDE, 40000, true);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, OUTSIDE, SERVER, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, sentByServer)), after);
    }

    @Test
    void aQuotedEchoRequestGetsBackItsOriginalId() {
        byte[] data = payload(16, 5);
        byte[] outside = ip(Ipv4Packet.PROTO_ICMP, OUTSIDE, SERVER, 0, icmp(IcmpPacket.ECHO, 0, 0x2222_0003, data));
        byte[] inside = ip(Ipv4Packet.PROTO_ICMP, INSIDE, SERVER, 0, icmp(IcmpPacket.ECHO, 0, 0x0777_0003, data));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, ROUTER, OUTSIDE, 0,
                icmp(IcmpPacket.TIME_EXCEEDED, IcmpPacket.CODE_EXC_TTL, 0, outside));
        byte[] after = translate(error, false, SNAT_STATUS, true, INSIDE, 0x0777, SERVER, 0x0800, true);
        assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, ROUTER, INSIDE, 0,
                icmp(IcmpPacket.TIME_EXCEEDED, IcmpPacket.CODE_EXC_TTL, 0, inside)), after);
    }

    @Test
    void aSharedErrorIsTranslatedInAPrivateHeadWhileTheOtherHolderKeepsTheOriginal() {
        // A long quote: the head copy ends inside it, so the new ICMP checksum is summed across head and shared rest.
        byte[] data = payload(400, 6);
        byte[] sentOutside = ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 40000, SERVER, 53, data, true));
        byte[] sentInside = ip(Ipv4Packet.PROTO_UDP, INSIDE, SERVER, 0, udp(INSIDE, 5353, SERVER, 53, data, true));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, sentOutside));
        CowStats cow = new CowStats();
        NatIcmpError counted = new NatIcmpError(new NatManip(cow));
        Packet p = packet(error);
        Packet other = p.cloneShared();
        try {
            assertTrue(counted.translate(p, false, SNAT_STATUS, true, INSIDE, 5353, SERVER, 53));
            assertArrayEquals(ip(Ipv4Packet.PROTO_ICMP, SERVER, INSIDE, 0,
                    icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, sentInside)), datagram(p));
            assertArrayEquals(error, datagram(other));
            assertEquals(1, cow.copies());
            assertTrue(cow.bytesCopied() < error.length,
                    "only the headers were copied: " + cow.bytesCopied());
        } finally {
            p.release();
            other.release();
        }
    }

    @Test
    void anErrorAtAHookWhoseNatKindTheConnectionLacksIsLeftAlone() {
        byte[] quote = ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 40000, SERVER, 53, new byte[4], true));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, quote));
        // Source NAT only; at postrouting in the reply direction the bit asked for is DST_NAT.
        assertArrayEquals(error, translate(error, true, SNAT_STATUS, true, INSIDE, 5353, SERVER, 53, true));
    }

    @Test
    void anErrorWithAWrongChecksumIsDropped() {
        byte[] quote = ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 40000, SERVER, 53, new byte[4], true));
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, quote));
        error[20 + 2] ^= 0x01;
        translate(error, false, SNAT_STATUS, true, INSIDE, 5353, SERVER, 53, false);
    }

    @Test
    void aRedirectForANatedConnectionIsDropped() {
        byte[] quote = ip(Ipv4Packet.PROTO_UDP, OUTSIDE, SERVER, 0, udp(OUTSIDE, 40000, SERVER, 53, new byte[4], true));
        byte[] redirect = ip(Ipv4Packet.PROTO_ICMP, ROUTER, OUTSIDE, 0,
                icmp(IcmpPacket.REDIRECT, IcmpPacket.CODE_REDIR_HOST, a("198.19.0.253"), quote));
        translate(redirect, false, SNAT_STATUS, true, INSIDE, 5353, SERVER, 53, false);
    }

    @Test
    void aQuoteTooShortForAnIpHeaderIsDropped() {
        byte[] error = ip(Ipv4Packet.PROTO_ICMP, SERVER, OUTSIDE, 0,
                icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, new byte[12]));
        translate(error, false, SNAT_STATUS, true, INSIDE, 5353, SERVER, 53, false);
    }
}
