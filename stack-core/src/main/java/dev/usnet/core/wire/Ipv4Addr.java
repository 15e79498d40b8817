package dev.usnet.core.wire;

/** IPv4 addresses as ints (network order read as a big-endian int), with the classification Linux uses. */
public final class Ipv4Addr {
    public static final int ANY = 0;
    public static final int LIMITED_BROADCAST = 0xffff_ffff;

    private Ipv4Addr() {}

    public static int parse(String s) {
        String[] p = s.trim().split("\\.", -1);
        if (p.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: '" + s + "'");
        }
        int a = 0;
        for (String part : p) {
            int v;
            try {
                v = Integer.parseInt(part);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an IPv4 address: '" + s + "'");
            }
            if (v < 0 || v > 255 || part.isEmpty()) {
                throw new IllegalArgumentException("not an IPv4 address: '" + s + "'");
            }
            a = (a << 8) | v;
        }
        return a;
    }

    public static String format(int a) {
        return ((a >>> 24) & 0xff) + "." + ((a >>> 16) & 0xff) + "." + ((a >>> 8) & 0xff) + "." + (a & 0xff);
    }

    public static int mask(int prefixLen) {
        return prefixLen == 0 ? 0 : (int) (0xffff_ffffL << (32 - prefixLen));
    }

    public static boolean isMulticast(int a) {
        return (a & 0xf000_0000) == 0xe000_0000;
    }

    public static boolean isLoopback(int a) {
        return (a >>> 24) == 127;
    }

    /** 0.0.0.0/8: "this network", never a valid source or destination on the wire (ipv4_is_zeronet). */
    public static boolean isZeroNet(int a) {
        return (a >>> 24) == 0;
    }

    public static boolean isLimitedBroadcast(int a) {
        return a == LIMITED_BROADCAST;
    }

    /** 169.254.0.0/16 */
    public static boolean isLinkLocal(int a) {
        return (a & 0xffff_0000) == 0xa9fe_0000;
    }

    /** Unsigned comparison, for ordering addresses. */
    public static int compare(int a, int b) {
        return Integer.compareUnsigned(a, b);
    }
}
