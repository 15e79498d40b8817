package dev.usnet.core.nat;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;

/**
 * nf_nat_icmp_reply_translation: an ICMP error RELATED to a NATed connection quotes a packet of that connection
 * as it looked on the wire where the error arose, so both the quote and the error's own header must be mapped
 * back with the connection's NAT, or the host the error is for would not recognise it (and a router behind the
 * NAT would leak the translated addresses).
 *
 * <p>At a hook whose NAT kind ({@code source}: postrouting and input rewrite the source, prerouting and output the
 * destination) applies to the error's direction:
 * <ol>
 * <li>the quoted header and the first 8 bytes of its transport header get the opposite manip (the quote travels
 * the other way), to the connection's tuple of the other direction as it stands: its source when that manip is a
 * source manip, else its destination, and for a quoted ICMP query that tuple's id; the quote's IP header
 * checksum, and its TCP or UDP checksum when the quote reaches that far, are updated incrementally;</li>
 * <li>the ICMP checksum is summed anew over the whole message (unless the device is to fill it in);</li>
 * <li>the error's own header gets the hook's manip, to the inverse of that tuple: the destination becomes its
 * source, the source its destination.</li>
 * </ol>
 * A redirect for a connection with NAT in it is dropped (Linux will not translate one), as is an error whose
 * checksum is wrong or whose quote is cut short.
 */
public final class NatIcmpError {
    private static final int NAT_MASK = IpConntrackStatus.SRC_NAT | IpConntrackStatus.DST_NAT;
    private static final int NAT_DONE_MASK = IpConntrackStatus.SRC_NAT_DONE | IpConntrackStatus.DST_NAT_DONE;

    private final NatManip manip;

    public NatIcmpError(NatManip manip) {
        this.manip = manip;
    }

    /**
     * Translates the ICMP error {@code p} (ctinfo RELATED or RELATED_REPLY) of a connection with {@code status}
     * (its {@link IpConntrackStatus} bits), travelling in the connection's reply direction when {@code reply}. The
     * {@code other*} values are the connection's tuple of the other direction (ct->tuplehash[!dir]), its ports
     * for TCP and UDP, for ICMP its id as {@code otherSrcPort}. Returns false when the packet must be dropped
     * ({@code NAT_REWRITE_FAILED}); true when it goes on, translated or not needing it.
     */
    public boolean translate(Packet p, boolean source, int status, boolean reply,
                             int otherSrc, int otherSrcPort, int otherDst, int otherDstPort) {
        ByteBuf b = p.buf();
        int ip = p.network();
        int end = NatManip.datagramEnd(b, ip);
        int l4 = ip + ((b.getUnsignedByte(ip + Ipv4Packet.VER_IHL) & 0x0f) << 2);
        int inner = l4 + IcmpPacket.HEADER_LEN;
        if (end - inner < Ipv4Packet.MIN_HEADER_LEN) {
            return false;
        }
        if (p.csumState() == ChecksumState.NONE && !Checksum.verify(b, l4, end - l4)) {
            return false;
        }
        if (b.getUnsignedByte(l4 + IcmpPacket.TYPE) == IcmpPacket.REDIRECT
                && ((status & NAT_DONE_MASK) != NAT_DONE_MASK || (status & NAT_MASK) != 0)) {
            return false;
        }
        int statusBit = source ? IpConntrackStatus.SRC_NAT : IpConntrackStatus.DST_NAT;
        if (reply) {
            statusBit ^= NAT_MASK;
        }
        if ((status & statusBit) == 0) {
            return true;
        }
        int innerL4 = inner + ((b.getUnsignedByte(inner + Ipv4Packet.VER_IHL) & 0x0f) << 2);
        if (innerL4 > end) {
            return false;
        }
        int innerProto = b.getUnsignedByte(inner + Ipv4Packet.PROTOCOL);
        int innerDelta = inner - ip;
        int upTo = Math.min(end, innerL4 + NatManip.transportBytesToEdit(innerProto, innerL4, end));
        manip.makeWritable(p, upTo);
        // Offsets again from the (possibly new) head: a copy moves the network header.
        int shift = p.network() - ip;
        l4 += shift;
        end += shift;
        b = p.buf();
        boolean innerSource = !source;
        int innerAddr = innerSource ? otherSrc : otherDst;
        int innerPort = innerProto == Ipv4Packet.PROTO_ICMP || innerSource ? otherSrcPort : otherDstPort;
        if (!manip.manipAt(p, innerDelta, end, innerSource, innerAddr, innerPort)) {
            return false;
        }
        if (p.csumState() != ChecksumState.PARTIAL) {
            b.setShort(l4 + IcmpPacket.CHECKSUM, 0);
            b.setShort(l4 + IcmpPacket.CHECKSUM, Checksum.compute(b, l4, end - l4));
        }
        // The outer manip's id is never used: an error type has no identifier to map.
        return manip.manipAt(p, 0, end, source, source ? otherDst : otherSrc, otherDstPort);
    }
}
