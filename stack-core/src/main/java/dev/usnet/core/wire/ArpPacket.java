package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/** A view over an Ethernet/IPv4 ARP packet (RFC 826). */
public final class ArpPacket {
    public static final int LEN = 28;
    public static final int HTYPE = 0;
    public static final int PTYPE = 2;
    public static final int HLEN = 4;
    public static final int PLEN = 5;
    public static final int OP = 6;
    public static final int SHA = 8;
    public static final int SPA = 14;
    public static final int THA = 18;
    public static final int TPA = 24;

    public static final int HTYPE_ETHER = 1;
    public static final int HTYPE_IEEE802 = 6;
    public static final int OP_REQUEST = 1;
    public static final int OP_REPLY = 2;

    private ByteBuf buf;
    private int off;

    /** Validates as Linux's arp_rcv/arp_process do for Ethernet: sizes, types, lengths. */
    public DropReason check(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        if (len < LEN) {
            return DropReason.PKT_TOO_SMALL;
        }
        int htype = buf.getUnsignedShort(off + HTYPE);
        if ((htype != HTYPE_ETHER && htype != HTYPE_IEEE802)
                || buf.getUnsignedShort(off + PTYPE) != EthernetFrame.ETH_P_IP
                || buf.getUnsignedByte(off + HLEN) != 6 || buf.getUnsignedByte(off + PLEN) != 4) {
            return DropReason.ARP_MALFORMED;
        }
        int op = op();
        if (op != OP_REQUEST && op != OP_REPLY) {
            return DropReason.ARP_MALFORMED;
        }
        return null;
    }

    public int op() {
        return buf.getUnsignedShort(off + OP);
    }

    public long sha() {
        return MacAddr.get(buf, off + SHA);
    }

    public int spa() {
        return buf.getInt(off + SPA);
    }

    public long tha() {
        return MacAddr.get(buf, off + THA);
    }

    public int tpa() {
        return buf.getInt(off + TPA);
    }

    /** Writes a complete Ethernet/IPv4 ARP body at {@code off}. */
    public static void write(ByteBuf buf, int off, int op, long sha, int spa, long tha, int tpa) {
        buf.setShort(off + HTYPE, HTYPE_ETHER);
        buf.setShort(off + PTYPE, EthernetFrame.ETH_P_IP);
        buf.setByte(off + HLEN, 6);
        buf.setByte(off + PLEN, 4);
        buf.setShort(off + OP, op);
        MacAddr.set(buf, off + SHA, sha);
        buf.setInt(off + SPA, spa);
        MacAddr.set(buf, off + THA, tha);
        buf.setInt(off + TPA, tpa);
    }
}
