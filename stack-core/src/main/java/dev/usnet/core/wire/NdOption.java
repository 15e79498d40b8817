package dev.usnet.core.wire;

import io.netty.buffer.ByteBuf;

/**
 * The options of a neighbour discovery message (RFC 4861 §4.6): type, a length in units of 8 bytes, and a body.
 * {@link #next} walks them allocation-free, refusing what ndisc_parse_options refuses: an option of length zero or
 * one running past the message.
 */
public final class NdOption {
    public static final int SOURCE_LL_ADDR = 1;
    public static final int TARGET_LL_ADDR = 2;
    public static final int PREFIX_INFO = 3;
    public static final int REDIRECTED_HEADER = 4;
    public static final int MTU = 5;
    /** Route information (RFC 4191) and the recursive DNS server option (RFC 8106), which Linux also parses. */
    public static final int ROUTE_INFO = 24;
    public static final int RDNSS = 25;

    /** The length of a prefix information option (RFC 4861 §4.6.2): 32 bytes. */
    public static final int PREFIX_INFO_LEN = 32;
    /** Flags of the prefix information option. */
    public static final int PREFIX_ON_LINK = 0x80;
    public static final int PREFIX_AUTONOMOUS = 0x40;

    private ByteBuf buf;
    private int end;
    private int at;
    private int type;
    private int length;

    /** Starts a walk over the options from {@code off} to {@code end} (absolute indices). */
    public NdOption start(ByteBuf buf, int off, int end) {
        this.buf = buf;
        this.at = off;
        this.end = end;
        this.length = 0;
        return this;
    }

    /**
     * Steps to the next option: true when there is one, false at the end. Throws nothing; a malformed option list
     * makes {@link #malformed} true and ends the walk, and the whole message must then be dropped.
     */
    public boolean next() {
        at += length;
        length = 0;
        if (at >= end) {
            return false;
        }
        if (end - at < 2) {
            at = -1;
            return false;
        }
        int units = buf.getUnsignedByte(at + 1);
        if (units == 0 || at + units * 8 > end) {
            at = -1;
            return false;
        }
        type = buf.getUnsignedByte(at);
        length = units * 8;
        return true;
    }

    /** Whether the walk stopped at an option of length zero or one running past the message. */
    public boolean malformed() {
        return at < 0;
    }

    public int type() {
        return type;
    }

    /** The option's whole length in bytes, type and length fields included. */
    public int length() {
        return length;
    }

    /** Where the option starts (its type byte). */
    public int offset() {
        return at;
    }

    /**
     * The link-layer address a source/target link-layer address option carries, for Ethernet (6 bytes), or -1 when the
     * option is too short for one.
     */
    public long linkAddress() {
        return length >= 8 ? MacAddr.get(buf, at + 2) : -1;
    }

    /** Writes a source or target link-layer address option for an Ethernet address at {@code off}: 8 bytes. */
    public static void writeLinkAddress(ByteBuf buf, int off, int type, long mac) {
        buf.setByte(off, type);
        buf.setByte(off + 1, 1);
        MacAddr.set(buf, off + 2, mac);
    }
}
