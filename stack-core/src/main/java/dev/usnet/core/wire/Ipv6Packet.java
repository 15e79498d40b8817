package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/** A view over an IPv6 fixed header (RFC 8200 §3) and what follows it. Addresses are read as two longs each. */
public final class Ipv6Packet {
    public static final int HEADER_LEN = 40;
    /** Offsets in the fixed header. */
    public static final int VER_TC_FLOW = 0;
    public static final int PAYLOAD_LEN = 4;
    public static final int NEXT_HEADER = 6;
    public static final int HOP_LIMIT = 7;
    public static final int SRC = 8;
    public static final int DST = 24;

    /** The minimum link MTU every IPv6 link must carry (RFC 8200 §5). */
    public static final int MIN_MTU = 1280;

    /** Next-header values (IANA protocol numbers) an IPv6 stack meets. */
    public static final int NEXTHDR_HOP = 0;
    public static final int NEXTHDR_TCP = 6;
    public static final int NEXTHDR_UDP = 17;
    public static final int NEXTHDR_ROUTING = 43;
    public static final int NEXTHDR_FRAGMENT = 44;
    public static final int NEXTHDR_ESP = 50;
    public static final int NEXTHDR_AUTH = 51;
    public static final int NEXTHDR_ICMPV6 = 58;
    public static final int NEXTHDR_NONE = 59;
    public static final int NEXTHDR_DEST = 60;

    private ByteBuf buf;
    private int off;

    /**
     * Validates the fixed header as Linux's ip6_rcv_core does before looking at addresses: at least 40 bytes,
     * version 6, and a payload length the bytes cover. A zero payload length is a jumbogram's, only valid with a
     * hop-by-hop jumbo option; that check belongs to the extension-header walk. Null when valid.
     */
    public DropReason check(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        if (len < HEADER_LEN) {
            return DropReason.PKT_TOO_SMALL;
        }
        if ((buf.getUnsignedByte(off) >>> 4) != 6) {
            return DropReason.IP_VERSION;
        }
        if (HEADER_LEN + payloadLength() > len) {
            return DropReason.IP_TRUNCATED;
        }
        return null;
    }

    /** Points the view without checking, for headers this stack wrote itself. */
    public Ipv6Packet wrap(ByteBuf buf, int off) {
        this.buf = buf;
        this.off = off;
        return this;
    }

    public ByteBuf buf() {
        return buf;
    }

    public int offset() {
        return off;
    }

    /** The traffic class (DSCP and ECN), the eight bits after the version. */
    public int trafficClass() {
        return (buf.getInt(off) >>> 20) & 0xff;
    }

    public int flowLabel() {
        return buf.getInt(off) & 0xf_ffff;
    }

    public int payloadLength() {
        return buf.getUnsignedShort(off + PAYLOAD_LEN);
    }

    /** The fixed header plus the payload length: the IPv6 packet's length on the wire. */
    public int totalLength() {
        return HEADER_LEN + payloadLength();
    }

    public int nextHeader() {
        return buf.getUnsignedByte(off + NEXT_HEADER);
    }

    public int hopLimit() {
        return buf.getUnsignedByte(off + HOP_LIMIT);
    }

    public long srcHi() {
        return buf.getLong(off + SRC);
    }

    public long srcLo() {
        return buf.getLong(off + SRC + 8);
    }

    public long dstHi() {
        return buf.getLong(off + DST);
    }

    public long dstLo() {
        return buf.getLong(off + DST + 8);
    }

    public Ipv6Addr src() {
        return new Ipv6Addr(srcHi(), srcLo());
    }

    public Ipv6Addr dst() {
        return new Ipv6Addr(dstHi(), dstLo());
    }

    /** Where the first header after the fixed one starts. */
    public int payloadOffset() {
        return off + HEADER_LEN;
    }

    public void setPayloadLength(int v) {
        buf.setShort(off + PAYLOAD_LEN, v);
    }

    public void setNextHeader(int v) {
        buf.setByte(off + NEXT_HEADER, v);
    }

    /** Hop limit minus one; IPv6 has no header checksum to patch (ip6_forward's {@code hdr->hop_limit--}). */
    public void decrementHopLimit() {
        buf.setByte(off + HOP_LIMIT, hopLimit() - 1);
    }

    public void setSrc(long hi, long lo) {
        buf.setLong(off + SRC, hi);
        buf.setLong(off + SRC + 8, lo);
    }

    public void setDst(long hi, long lo) {
        buf.setLong(off + DST, hi);
        buf.setLong(off + DST + 8, lo);
    }

    /** Writes a fixed header: version 6, the traffic class and flow label, lengths, next header and addresses. */
    public static void writeHeader(ByteBuf buf, int off, int trafficClass, int flowLabel, int payloadLen,
                                   int nextHeader, int hopLimit, long srcHi, long srcLo, long dstHi, long dstLo) {
        buf.setInt(off + VER_TC_FLOW, (6 << 28) | ((trafficClass & 0xff) << 20) | (flowLabel & 0xf_ffff));
        buf.setShort(off + PAYLOAD_LEN, payloadLen);
        buf.setByte(off + NEXT_HEADER, nextHeader);
        buf.setByte(off + HOP_LIMIT, hopLimit);
        buf.setLong(off + SRC, srcHi);
        buf.setLong(off + SRC + 8, srcLo);
        buf.setLong(off + DST, dstHi);
        buf.setLong(off + DST + 8, dstLo);
    }

    /**
     * The running sum of the IPv6 pseudo-header (RFC 8200 §8.1) for upper-layer checksums: both addresses as they
     * stand in the header at {@code ipOff}, the upper-layer length and the next-header value.
     */
    public static long pseudoHeaderSum(ByteBuf buf, int ipOff, int upperLength, int nextHeader) {
        long sum = Checksum.add(buf, ipOff + SRC, 32, 0);
        return sum + (upperLength >>> 16) + (upperLength & 0xffff) + nextHeader;
    }

    /** The pseudo-header sum from addresses given as longs, for segments whose IPv6 header is not written yet. */
    public static long pseudoHeaderSum(long srcHi, long srcLo, long dstHi, long dstLo, int upperLength, int nextHeader) {
        return words(srcHi) + words(srcLo) + words(dstHi) + words(dstLo)
                + (upperLength >>> 16) + (upperLength & 0xffff) + nextHeader;
    }

    private static long words(long v) {
        return (v >>> 48) + ((v >>> 32) & 0xffff) + ((v >>> 16) & 0xffff) + (v & 0xffff);
    }
}
