package dev.usnet.core.wire;

import io.netty.buffer.ByteBuf;

/** The Internet checksum (RFC 1071) in full and incrementally (RFC 1624), over absolute ByteBuf indices. */
public final class Checksum {
    private Checksum() {}

    /** Adds {@code len} bytes at {@code off} to a running one's-complement sum (not yet folded). */
    public static long add(ByteBuf buf, int off, int len, long sum) {
        int i = off;
        int end = off + len;
        // Whole 32-bit words: the one's-complement sum is byte-order independent once folded.
        while (end - i >= 4) {
            sum += buf.getUnsignedInt(i);
            i += 4;
        }
        if (end - i >= 2) {
            sum += buf.getUnsignedShort(i);
            i += 2;
        }
        if (i < end) {
            sum += (buf.getUnsignedByte(i) << 8);
        }
        return sum;
    }

    /** Folds a running sum to 16 bits and complements it: the value that goes into a header. */
    public static int finish(long sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (int) (~sum & 0xffff);
    }

    /** The checksum of a region as it would be written into a header. */
    public static int compute(ByteBuf buf, int off, int len) {
        return finish(add(buf, off, len, 0));
    }

    /** True when a region that includes its checksum field sums to all ones. */
    public static boolean verify(ByteBuf buf, int off, int len) {
        return compute(buf, off, len) == 0;
    }

    /** The sum of the IPv4 pseudo header used by UDP and TCP. */
    public static long pseudoHeader(int src, int dst, int protocol, int l4Length) {
        return (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + protocol + l4Length;
    }

    /**
     * RFC 1624 eqn. 3: the new checksum after one 16-bit word of the covered data changes from
     * {@code oldWord} to {@code newWord}: HC' = ~(~HC + ~m + m').
     */
    public static int update16(int checksum, int oldWord, int newWord) {
        long sum = (~checksum & 0xffff) + (~oldWord & 0xffff) + (newWord & 0xffff);
        return finish(sum);
    }

    /** As {@link #update16} for a 32-bit field (an address), as two 16-bit words. */
    public static int update32(int checksum, int oldValue, int newValue) {
        long sum = (~checksum & 0xffff)
                + (~(oldValue >>> 16) & 0xffff) + (~oldValue & 0xffff)
                + ((newValue >>> 16) & 0xffff) + (newValue & 0xffff);
        return finish(sum);
    }
}
