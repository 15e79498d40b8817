package dev.usnet.core.wire;

import io.netty.buffer.ByteBuf;

/** MAC addresses as the low 48 bits of a long: no objects on the packet path. */
public final class MacAddr {
    public static final long BROADCAST = 0xffff_ffff_ffffL;
    public static final long ZERO = 0L;

    private MacAddr() {}

    public static long get(ByteBuf buf, int off) {
        return ((long) buf.getUnsignedShort(off) << 32) | buf.getUnsignedInt(off + 2);
    }

    public static void set(ByteBuf buf, int off, long mac) {
        buf.setShort(off, (int) (mac >>> 32));
        buf.setInt(off + 2, (int) mac);
    }

    /** Group bit (I/G) set: multicast or broadcast. */
    public static boolean isMulticast(long mac) {
        return (mac & 0x0100_0000_0000L) != 0;
    }

    public static boolean isBroadcast(long mac) {
        return mac == BROADCAST;
    }

    /** Linux's is_valid_ether_addr: neither multicast nor all zeros. */
    public static boolean isValidUnicast(long mac) {
        return mac != 0 && !isMulticast(mac);
    }

    /** IEEE 802.1D reserved group 01:80:c2:00:00:0X; returns X or -1. */
    public static int linkLocalGroup(long mac) {
        return (mac & ~0xfL) == 0x0180_c200_0000L ? (int) (mac & 0xf) : -1;
    }

    public static long parse(String s) {
        String[] parts = s.trim().split("[:-]");
        if (parts.length != 6) {
            throw new IllegalArgumentException("not a MAC address: '" + s + "' (expected six hex bytes like 02:00:00:00:00:01)");
        }
        long mac = 0;
        for (String p : parts) {
            int b;
            try {
                b = Integer.parseInt(p, 16);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not a MAC address: '" + s + "'");
            }
            if (b < 0 || b > 255 || p.isEmpty() || p.length() > 2) {
                throw new IllegalArgumentException("not a MAC address: '" + s + "'");
            }
            mac = (mac << 8) | b;
        }
        return mac;
    }

    public static String format(long mac) {
        StringBuilder sb = new StringBuilder(17);
        for (int i = 5; i >= 0; i--) {
            int b = (int) (mac >>> (i * 8)) & 0xff;
            if (sb.length() > 0) {
                sb.append(':');
            }
            sb.append(Character.forDigit(b >>> 4, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }
}
