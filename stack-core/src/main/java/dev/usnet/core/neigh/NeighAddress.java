package dev.usnet.core.neigh;

import dev.usnet.core.wire.Ipv4Addr;

/** Text forms of the protocol addresses a neighbour table is keyed by, as two longs (see {@link Neighbour}). */
public final class NeighAddress {
    private NeighAddress() {}

    /** A 4-byte address as a dotted quad, a 16-byte one as RFC 5952 text (lower case, longest zero run as ::). */
    public static String format(int length, long hi, long lo) {
        if (length == 4) {
            return Ipv4Addr.format((int) lo);
        }
        if (length != 16) {
            throw new IllegalArgumentException("neighbour address length " + length + " is neither 4 nor 16");
        }
        int[] g = new int[8];
        for (int i = 0; i < 4; i++) {
            g[i] = (int) (hi >>> (48 - 16 * i)) & 0xffff;
            g[4 + i] = (int) (lo >>> (48 - 16 * i)) & 0xffff;
        }
        // The longest run of two or more zero groups (the first of equal ones) is written as "::".
        int bestAt = -1;
        int bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestAt = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder b = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestAt) {
                b.append("::");
                i += bestLen - 1;
                continue;
            }
            if (i > 0 && i != bestAt + bestLen) {
                b.append(':');
            }
            b.append(Integer.toHexString(g[i]));
        }
        return b.toString();
    }
}
