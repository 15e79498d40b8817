package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/** A view over a UDP header and payload (RFC 768). */
public final class UdpDatagram {
    public static final int HEADER_LEN = 8;
    public static final int SRC_PORT = 0;
    public static final int DST_PORT = 2;
    public static final int LENGTH = 4;
    public static final int CHECKSUM = 6;

    private ByteBuf buf;
    private int off;

    /** Checks the length field against the IP payload and, when present, the checksum. */
    public DropReason check(ByteBuf buf, int off, int ipPayloadLen, int src, int dst) {
        this.buf = buf;
        this.off = off;
        if (ipPayloadLen < HEADER_LEN) {
            return DropReason.UDP_MALFORMED;
        }
        int ulen = length();
        if (ulen < HEADER_LEN || ulen > ipPayloadLen) {
            return DropReason.UDP_MALFORMED;
        }
        if (checksum() != 0) {
            long sum = Checksum.add(buf, off, ulen, Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_UDP, ulen));
            if (Checksum.finish(sum) != 0) {
                return DropReason.UDP_CSUM;
            }
        }
        return null;
    }

    public int srcPort() {
        return buf.getUnsignedShort(off + SRC_PORT);
    }

    public int dstPort() {
        return buf.getUnsignedShort(off + DST_PORT);
    }

    public int length() {
        return buf.getUnsignedShort(off + LENGTH);
    }

    public int checksum() {
        return buf.getUnsignedShort(off + CHECKSUM);
    }

    public int payloadOffset() {
        return off + HEADER_LEN;
    }

    public int payloadLength() {
        return length() - HEADER_LEN;
    }

    /** Writes the header and fills the checksum over the payload already in place. */
    public static void write(ByteBuf buf, int off, int srcPort, int dstPort, int payloadLen, int src, int dst) {
        int ulen = HEADER_LEN + payloadLen;
        buf.setShort(off + SRC_PORT, srcPort);
        buf.setShort(off + DST_PORT, dstPort);
        buf.setShort(off + LENGTH, ulen);
        buf.setShort(off + CHECKSUM, 0);
        int c = Checksum.finish(Checksum.add(buf, off, ulen, Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_UDP, ulen)));
        // RFC 768: a computed zero is sent as all ones, zero meaning "no checksum".
        buf.setShort(off + CHECKSUM, c == 0 ? 0xffff : c);
    }
}
