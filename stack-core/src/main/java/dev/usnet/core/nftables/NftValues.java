package dev.usnet.core.nftables;

import java.util.function.IntFunction;

/**
 * The right-hand side of a match: one value, a range {@code a-b}, a prefix {@code a/n}, or an anonymous set
 * {@code { ... }} of these. Kept as unsigned ranges for the packet path and with each element's form for the
 * listing.
 */
final class NftValues {
    static final byte SINGLE = 0;
    static final byte RANGE = 1;
    static final byte PREFIX = 2;

    private final long[] lo;
    private final long[] hi;
    private final byte[] form;
    private final int[] prefixLen;
    private final boolean set;
    private final IntFunction<String> format;

    NftValues(long[] lo, long[] hi, byte[] form, int[] prefixLen, boolean set, IntFunction<String> format) {
        this.lo = lo;
        this.hi = hi;
        this.form = form;
        this.prefixLen = prefixLen;
        this.set = set;
        this.format = format;
    }

    boolean isSet() {
        return set;
    }

    /** One value and nothing else (what a protocol dependency is). */
    boolean isSingle() {
        return !set && form[0] == SINGLE;
    }

    int first() {
        return (int) lo[0];
    }

    boolean contains(int v) {
        long u = v & 0xffff_ffffL;
        for (int i = 0; i < lo.length; i++) {
            if (u >= lo[i] && u <= hi[i]) {
                return true;
            }
        }
        return false;
    }

    void print(StringBuilder sb) {
        if (set) {
            sb.append("{ ");
        }
        for (int i = 0; i < lo.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(format.apply((int) lo[i]));
            switch (form[i]) {
                case RANGE -> sb.append('-').append(format.apply((int) hi[i]));
                case PREFIX -> sb.append('/').append(prefixLen[i]);
                default -> { }
            }
        }
        if (set) {
            sb.append(" }");
        }
    }
}
