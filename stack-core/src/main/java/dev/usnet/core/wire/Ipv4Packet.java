package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/** A view over an IPv4 header and its payload (RFC 791). */
public final class Ipv4Packet {
    public static final int MIN_HEADER_LEN = 20;
    public static final int MAX_HEADER_LEN = 60;
    public static final int VER_IHL = 0;
    public static final int TOS = 1;
    public static final int TOTAL_LEN = 2;
    public static final int ID = 4;
    public static final int FRAG = 6;
    public static final int TTL = 8;
    public static final int PROTOCOL = 9;
    public static final int CHECKSUM = 10;
    public static final int SRC = 12;
    public static final int DST = 16;

    public static final int FLAG_DF = 0x4000;
    public static final int FLAG_MF = 0x2000;
    public static final int OFFSET_MASK = 0x1fff;

    public static final int PROTO_ICMP = 1;
    public static final int PROTO_TCP = 6;
    public static final int PROTO_UDP = 17;

    private ByteBuf buf;
    private int off;

    /**
     * Validates as Linux's ip_rcv_core: length, version, IHL, header checksum, total length against the
     * bytes available. Null when valid.
     */
    public DropReason check(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        if (len < MIN_HEADER_LEN) {
            return DropReason.PKT_TOO_SMALL;
        }
        int vihl = buf.getUnsignedByte(off);
        if ((vihl >>> 4) != 4) {
            return DropReason.IP_VERSION;
        }
        int hl = (vihl & 0xf) * 4;
        if (hl < MIN_HEADER_LEN || hl > len) {
            return DropReason.IP_INHDR;
        }
        if (!Checksum.verify(buf, off, hl)) {
            return DropReason.IP_CSUM;
        }
        int tot = totalLength();
        if (tot > len) {
            return DropReason.IP_TRUNCATED;
        }
        if (tot < hl) {
            return DropReason.IP_INHDR;
        }
        return null;
    }

    /** Points the view without checking, for headers this stack wrote itself. */
    public Ipv4Packet wrap(ByteBuf buf, int off) {
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

    public int headerLength() {
        return (buf.getUnsignedByte(off) & 0xf) * 4;
    }

    public int tos() {
        return buf.getUnsignedByte(off + TOS);
    }

    public int totalLength() {
        return buf.getUnsignedShort(off + TOTAL_LEN);
    }

    public int id() {
        return buf.getUnsignedShort(off + ID);
    }

    public int fragField() {
        return buf.getUnsignedShort(off + FRAG);
    }

    public boolean dontFragment() {
        return (fragField() & FLAG_DF) != 0;
    }

    public boolean moreFragments() {
        return (fragField() & FLAG_MF) != 0;
    }

    /** Fragment offset in bytes. */
    public int fragOffset() {
        return (fragField() & OFFSET_MASK) * 8;
    }

    public boolean isFragment() {
        return (fragField() & (FLAG_MF | OFFSET_MASK)) != 0;
    }

    public int ttl() {
        return buf.getUnsignedByte(off + TTL);
    }

    public int protocol() {
        return buf.getUnsignedByte(off + PROTOCOL);
    }

    public int checksum() {
        return buf.getUnsignedShort(off + CHECKSUM);
    }

    public int src() {
        return buf.getInt(off + SRC);
    }

    public int dst() {
        return buf.getInt(off + DST);
    }

    public int payloadOffset() {
        return off + headerLength();
    }

    public int payloadLength() {
        return totalLength() - headerLength();
    }

    public void setTotalLength(int v) {
        buf.setShort(off + TOTAL_LEN, v);
    }

    public void setFragField(int v) {
        buf.setShort(off + FRAG, v);
    }

    public void setTtl(int v) {
        buf.setByte(off + TTL, v);
    }

    public void setChecksum(int v) {
        buf.setShort(off + CHECKSUM, v);
    }

    public void setSrc(int a) {
        buf.setInt(off + SRC, a);
    }

    public void setDst(int a) {
        buf.setInt(off + DST, a);
    }

    /** Recomputes the header checksum from scratch (ip_send_check). */
    public void fillChecksum() {
        setChecksum(0);
        setChecksum(Checksum.compute(buf, off, headerLength()));
    }

    /**
     * TTL minus one with the checksum patched incrementally (RFC 1624), as ip_decrease_ttl: the TTL is
     * the high byte of the 16-bit word it shares with the protocol.
     */
    public void decrementTtl() {
        int word = buf.getUnsignedShort(off + TTL);
        int newWord = word - 0x0100;
        buf.setShort(off + TTL, newWord);
        setChecksum(Checksum.update16(checksum(), word, newWord));
    }

    /** Writes a 20-byte header without options and fills its checksum. */
    public static void writeHeader(ByteBuf buf, int off, int tos, int totalLen, int id, int frag, int ttl,
                                   int protocol, int src, int dst) {
        writeHeader(buf, off, MIN_HEADER_LEN, tos, totalLen, id, frag, ttl, protocol, src, dst);
    }

    /**
     * Writes the fixed part of a header of {@code headerLen} bytes (options already in place after it) and
     * fills the checksum over the whole header.
     */
    public static void writeHeader(ByteBuf buf, int off, int headerLen, int tos, int totalLen, int id, int frag,
                                   int ttl, int protocol, int src, int dst) {
        buf.setByte(off + VER_IHL, 0x40 | (headerLen / 4));
        buf.setByte(off + TOS, tos);
        buf.setShort(off + TOTAL_LEN, totalLen);
        buf.setShort(off + ID, id);
        buf.setShort(off + FRAG, frag);
        buf.setByte(off + TTL, ttl);
        buf.setByte(off + PROTOCOL, protocol);
        buf.setShort(off + CHECKSUM, 0);
        buf.setInt(off + SRC, src);
        buf.setInt(off + DST, dst);
        buf.setShort(off + CHECKSUM, Checksum.compute(buf, off, headerLen));
    }
}
