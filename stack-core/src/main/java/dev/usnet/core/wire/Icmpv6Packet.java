package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/**
 * A view over an ICMPv6 message (RFC 4443), including the neighbour discovery (RFC 4861) and MLD (RFC 2710,
 * RFC 3810) types that travel in it. Its checksum covers the IPv6 pseudo-header, so checking needs the IPv6 header.
 */
public final class Icmpv6Packet {
    public static final int HEADER_LEN = 8;
    public static final int TYPE = 0;
    public static final int CODE = 1;
    public static final int CHECKSUM = 2;
    /** The 32 bits after the checksum: MTU, pointer, echo identifier and sequence, or reserved. */
    public static final int REST = 4;

    // Errors (type < 128).
    public static final int DEST_UNREACH = 1;
    public static final int PKT_TOOBIG = 2;
    public static final int TIME_EXCEED = 3;
    public static final int PARAMPROB = 4;
    // Informational.
    public static final int ECHO_REQUEST = 128;
    public static final int ECHO_REPLY = 129;
    public static final int MLD_QUERY = 130;
    public static final int MLD_REPORT = 131;
    public static final int MLD_DONE = 132;
    public static final int ROUTER_SOLICITATION = 133;
    public static final int ROUTER_ADVERTISEMENT = 134;
    public static final int NEIGHBOUR_SOLICITATION = 135;
    public static final int NEIGHBOUR_ADVERTISEMENT = 136;
    public static final int REDIRECT = 137;
    public static final int MLD2_REPORT = 143;

    // Destination unreachable codes.
    public static final int CODE_NOROUTE = 0;
    public static final int CODE_ADM_PROHIBITED = 1;
    public static final int CODE_NOT_NEIGHBOUR = 2;
    public static final int CODE_ADDR_UNREACH = 3;
    public static final int CODE_PORT_UNREACH = 4;
    public static final int CODE_POLICY_FAIL = 5;
    public static final int CODE_REJECT_ROUTE = 6;
    // Time exceeded codes.
    public static final int CODE_EXC_HOPLIMIT = 0;
    public static final int CODE_EXC_FRAGTIME = 1;
    // Parameter problem codes.
    public static final int CODE_HDR_FIELD = 0;
    public static final int CODE_UNK_NEXTHDR = 1;
    public static final int CODE_UNK_OPTION = 2;

    private ByteBuf buf;
    private int off;
    private int len;

    /**
     * Validates as icmpv6_rcv: the checksum over the pseudo-header of the IPv6 header at {@code ipOff} and the
     * {@code len} bytes of the message at {@code off}, then at least the 8-byte header. Null when valid.
     */
    public DropReason check(ByteBuf buf, int ipOff, int off, int len) {
        this.buf = buf;
        this.off = off;
        this.len = len;
        long sum = Ipv6Packet.pseudoHeaderSum(buf, ipOff, len, Ipv6Packet.NEXTHDR_ICMPV6);
        if (Checksum.finish(Checksum.add(buf, off, len, sum)) != 0) {
            return DropReason.ICMP_CSUM;
        }
        if (len < HEADER_LEN) {
            return DropReason.ICMP_MALFORMED;
        }
        return null;
    }

    /** Points the view without checking. */
    public Icmpv6Packet wrap(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        this.len = len;
        return this;
    }

    public int type() {
        return buf.getUnsignedByte(off + TYPE);
    }

    public int code() {
        return buf.getUnsignedByte(off + CODE);
    }

    public int offset() {
        return off;
    }

    public int length() {
        return len;
    }

    /** The MTU of a packet too big, the pointer of a parameter problem: the 32 bits after the checksum. */
    public long restWord() {
        return buf.getUnsignedInt(off + REST);
    }

    public int echoId() {
        return buf.getUnsignedShort(off + REST);
    }

    public int echoSeq() {
        return buf.getUnsignedShort(off + REST + 2);
    }

    /**
     * Fills the checksum of the message at {@code off} ({@code len} bytes) inside the IPv6 packet at {@code ipOff},
     * whose addresses must already be in place.
     */
    public static void fillChecksum(ByteBuf buf, int ipOff, int off, int len) {
        buf.setShort(off + CHECKSUM, 0);
        long sum = Ipv6Packet.pseudoHeaderSum(buf, ipOff, len, Ipv6Packet.NEXTHDR_ICMPV6);
        buf.setShort(off + CHECKSUM, Checksum.finish(Checksum.add(buf, off, len, sum)));
    }

    /** Error messages have types 0–127 (RFC 4443 §2.1); no error is sent about one. */
    public static boolean isError(int type) {
        return type < 128;
    }

    /** Neighbour discovery's types (133–137), which must arrive with hop limit 255 and code 0 (RFC 4861 §6.1, §7.1). */
    public static boolean isNeighbourDiscovery(int type) {
        return type >= ROUTER_SOLICITATION && type <= REDIRECT;
    }
}
