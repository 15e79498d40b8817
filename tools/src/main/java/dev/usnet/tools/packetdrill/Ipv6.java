package dev.usnet.tools.packetdrill;

import java.net.Inet6Address;
import java.net.InetAddress;

/** IPv6 addresses as 16 bytes in network order, to and from their text form. */
public final class Ipv6 {
    public static final int ADDRESS_LEN = 16;

    private Ipv6() {
    }

    /** An IPv6 literal ({@code fd00:198:18::1}); fails on anything else, IPv4 and IPv4-mapped forms included. */
    public static byte[] parse(String text) {
        InetAddress a;
        try {
            // A literal only: ofLiteral never asks a resolver.
            a = InetAddress.ofLiteral(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not an IPv6 address: " + text);
        }
        if (!(a instanceof Inet6Address) || text.indexOf(':') < 0) {
            throw new IllegalArgumentException("not an IPv6 address: " + text
                    + (text.indexOf(':') < 0 ? "" : " (an IPv4-mapped address stands for IPv4)"));
        }
        return a.getAddress();
    }

    /** The text form, zeros compressed as {@code ip -6} prints them ({@code fd00:198:18::1}). */
    public static String format(byte[] a) {
        if (a.length != ADDRESS_LEN) {
            throw new IllegalArgumentException("an IPv6 address has 16 bytes, not " + a.length);
        }
        int[] w = new int[8];
        for (int i = 0; i < 8; i++) {
            w[i] = (a[2 * i] & 255) << 8 | (a[2 * i + 1] & 255);
        }
        // RFC 5952: the longest run of two or more zero words (the first of equal runs) becomes "::".
        int bestAt = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && w[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestAt = i;
                bestLen = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestAt) {
                b.append("::");
                i += bestLen - 1;
                continue;
            }
            if (!b.isEmpty() && b.charAt(b.length() - 1) != ':') {
                b.append(':');
            }
            b.append(Integer.toHexString(w[i]));
        }
        return b.toString();
    }

    /** {@code ::ffff:a.b.c.d}: how an AF_INET6 socket names an IPv4 address. */
    public static byte[] mappedFromIpv4(int ipv4) {
        byte[] a = new byte[ADDRESS_LEN];
        a[10] = (byte) 0xff;
        a[11] = (byte) 0xff;
        a[12] = (byte) (ipv4 >>> 24);
        a[13] = (byte) (ipv4 >>> 16);
        a[14] = (byte) (ipv4 >>> 8);
        a[15] = (byte) ipv4;
        return a;
    }
}
