package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/** A view over an ICMP message (RFC 792). */
public final class IcmpPacket {
    public static final int HEADER_LEN = 8;
    public static final int TYPE = 0;
    public static final int CODE = 1;
    public static final int CHECKSUM = 2;
    public static final int REST = 4;

    public static final int ECHO_REPLY = 0;
    public static final int DEST_UNREACH = 3;
    public static final int SOURCE_QUENCH = 4;
    public static final int REDIRECT = 5;
    public static final int ECHO = 8;
    public static final int TIME_EXCEEDED = 11;
    public static final int PARAMETER_PROB = 12;
    public static final int TIMESTAMP = 13;
    public static final int TIMESTAMP_REPLY = 14;

    public static final int CODE_NET_UNREACH = 0;
    public static final int CODE_HOST_UNREACH = 1;
    public static final int CODE_PORT_UNREACH = 3;
    public static final int CODE_FRAG_NEEDED = 4;
    public static final int CODE_SR_FAILED = 5;
    public static final int CODE_REDIR_HOST = 1;
    public static final int CODE_EXC_TTL = 0;
    public static final int CODE_EXC_FRAGTIME = 1;

    private ByteBuf buf;
    private int off;
    private int len;

    public DropReason check(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        this.len = len;
        if (len < HEADER_LEN) {
            return DropReason.ICMP_MALFORMED;
        }
        if (!Checksum.verify(buf, off, len)) {
            return DropReason.ICMP_CSUM;
        }
        return null;
    }

    public int type() {
        return buf.getUnsignedByte(off + TYPE);
    }

    public int code() {
        return buf.getUnsignedByte(off + CODE);
    }

    public int length() {
        return len;
    }

    public int offset() {
        return off;
    }

    /** Echo identifier. */
    public int echoId() {
        return buf.getUnsignedShort(off + REST);
    }

    public int echoSeq() {
        return buf.getUnsignedShort(off + REST + 2);
    }

    /** True for the types Linux treats as errors (never answered with another error). */
    public static boolean isError(int type) {
        return type == DEST_UNREACH || type == SOURCE_QUENCH || type == REDIRECT || type == TIME_EXCEEDED
                || type == PARAMETER_PROB;
    }

    /** True for types Linux knows (0..18); unknown types are not answered with errors either. */
    public static boolean isKnown(int type) {
        return type >= 0 && type <= 18;
    }
}
