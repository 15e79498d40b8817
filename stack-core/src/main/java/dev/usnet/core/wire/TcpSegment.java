package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/** A view over a TCP header (RFC 9293); options are read by offset, not parsed into objects. */
public final class TcpSegment {
    public static final int MIN_HEADER_LEN = 20;
    public static final int SRC_PORT = 0;
    public static final int DST_PORT = 2;
    public static final int SEQ = 4;
    public static final int ACK = 8;
    public static final int DATA_OFF = 12;
    public static final int FLAGS = 13;
    public static final int WINDOW = 14;
    public static final int CHECKSUM = 16;
    public static final int URGENT = 18;

    public static final int FIN = 0x01;
    public static final int SYN = 0x02;
    public static final int RST = 0x04;
    public static final int PSH = 0x08;
    public static final int ACK_FLAG = 0x10;
    public static final int URG = 0x20;
    public static final int ECE = 0x40;
    public static final int CWR = 0x80;

    private ByteBuf buf;
    private int off;
    private int len;

    /**
     * Writes a TCP header at {@code off}: ports, sequence and acknowledgment numbers, the data offset of a
     * {@code headerLen}-byte header, flags and window, with checksum and urgent pointer zero. Options, when
     * {@code headerLen} leaves room for them, are the caller's to write at the returned offset; the checksum is
     * filled once the whole segment is known.
     */
    public static int writeHeader(ByteBuf b, int off, int srcPort, int dstPort, long seq, long ack, int headerLen,
            int flags, int window) {
        b.setShort(off + SRC_PORT, srcPort);
        b.setShort(off + DST_PORT, dstPort);
        b.setInt(off + SEQ, (int) seq);
        b.setInt(off + ACK, (int) ack);
        b.setByte(off + DATA_OFF, (headerLen / 4) << 4);
        b.setByte(off + FLAGS, flags);
        b.setShort(off + WINDOW, window);
        b.setShort(off + CHECKSUM, 0);
        b.setShort(off + URGENT, 0);
        return off + MIN_HEADER_LEN;
    }

    public DropReason check(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        this.len = len;
        if (len < MIN_HEADER_LEN) {
            return DropReason.PKT_TOO_SMALL;
        }
        int hl = headerLength();
        if (hl < MIN_HEADER_LEN || hl > len) {
            return DropReason.PKT_TOO_SMALL;
        }
        return null;
    }

    /** Verifies the checksum with the IPv4 pseudo header. */
    public boolean checksumValid(int src, int dst) {
        long sum = Checksum.add(buf, off, len, Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_TCP, len));
        return Checksum.finish(sum) == 0;
    }

    public int srcPort() {
        return buf.getUnsignedShort(off + SRC_PORT);
    }

    public int dstPort() {
        return buf.getUnsignedShort(off + DST_PORT);
    }

    public long seq() {
        return buf.getUnsignedInt(off + SEQ);
    }

    public long ack() {
        return buf.getUnsignedInt(off + ACK);
    }

    public int headerLength() {
        return (buf.getUnsignedByte(off + DATA_OFF) >>> 4) * 4;
    }

    public int flags() {
        return buf.getUnsignedByte(off + FLAGS);
    }

    public int window() {
        return buf.getUnsignedShort(off + WINDOW);
    }

    public int checksum() {
        return buf.getUnsignedShort(off + CHECKSUM);
    }

    public int payloadOffset() {
        return off + headerLength();
    }

    public int payloadLength() {
        return len - headerLength();
    }
}
