package dev.usnet.core.wire;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;

/**
 * A view over an Ethernet II frame (with an optional 802.1Q tag) at an absolute index of a ByteBuf.
 * Reusable: {@link #check} re-points it without allocating.
 */
public final class EthernetFrame {
    public static final int HEADER_LEN = 14;
    public static final int DST = 0;
    public static final int SRC = 6;
    public static final int TYPE = 12;
    public static final int VLAN_TAG_LEN = 4;
    public static final int MIN_FRAME_LEN = 60;

    public static final int ETH_P_IP = 0x0800;
    public static final int ETH_P_ARP = 0x0806;
    public static final int ETH_P_IPV6 = 0x86DD;
    public static final int ETH_P_8021Q = 0x8100;
    public static final int ETH_P_8021AD = 0x88a8;
    /** Values below this in the type field are 802.3 lengths (LLC/SNAP follows). */
    public static final int ETH_P_802_3_MIN = 0x0600;

    private ByteBuf buf;
    private int off;
    private int len;

    /** Points the view at {@code len} bytes from {@code off}; null when valid, else why not. */
    public DropReason check(ByteBuf buf, int off, int len) {
        this.buf = buf;
        this.off = off;
        this.len = len;
        return len < HEADER_LEN ? DropReason.PKT_TOO_SMALL : null;
    }

    public ByteBuf buf() {
        return buf;
    }

    public int offset() {
        return off;
    }

    public int length() {
        return len;
    }

    public long dst() {
        return MacAddr.get(buf, off + DST);
    }

    public long src() {
        return MacAddr.get(buf, off + SRC);
    }

    /** The type field right after the addresses: an ethertype, a TPID, or an 802.3 length. */
    public int outerType() {
        return buf.getUnsignedShort(off + TYPE);
    }

    public boolean isVlanTagged() {
        int t = outerType();
        return (t == ETH_P_8021Q || t == ETH_P_8021AD) && len >= HEADER_LEN + VLAN_TAG_LEN;
    }

    public void setDst(long mac) {
        MacAddr.set(buf, off + DST, mac);
    }

    public void setSrc(long mac) {
        MacAddr.set(buf, off + SRC, mac);
    }

    public void setType(int type) {
        buf.setShort(off + TYPE, type);
    }

    /** Writes a whole untagged header at {@code off}. */
    public static void write(ByteBuf buf, int off, long dst, long src, int type) {
        MacAddr.set(buf, off + DST, dst);
        MacAddr.set(buf, off + SRC, src);
        buf.setShort(off + TYPE, type);
    }
}
