package dev.usnet.core.wire;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;

/** The Internet checksum (RFC 1071) in full and incrementally (RFC 1624), over absolute ByteBuf indices. */
public final class Checksum {
    private static final boolean UNSAFE_READS = PlatformDependent.hasUnsafe()
            && java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN;

    private Checksum() {}

    /** Adds {@code len} bytes at {@code off} to a running one's-complement sum (not yet folded). */
    public static long add(ByteBuf buf, int off, int len, long sum) {
        int i = off;
        int end = off + len;
        if (UNSAFE_READS && len >= 64 && buf.hasMemoryAddress()) {
            // Native-order (little-endian) words sum to the byte-swapped checksum (RFC 1071 §2(B)): fold, swap
            // back, and go on in network order for the tail. No bounds or reference checks per word.
            long base = buf.memoryAddress();
            long le = 0;
            int stop = end - 8;
            while (i <= stop) {
                long v = PlatformDependent.getLong(base + i);
                le += (v >>> 32) + (v & 0xffff_ffffL);
                i += 8;
            }
            while ((le >>> 16) != 0) {
                le = (le & 0xffff) + (le >>> 16);
            }
            sum += ((le & 0xff) << 8) | (le >>> 8);
        }
        // Eight bytes at a time as two 32-bit halves: the one's-complement sum of 32-bit words folds to the
        // same 16-bit result, and a long accumulator cannot overflow below 2^31 words.
        while (end - i >= 8) {
            long v = buf.getLong(i);
            sum += (v >>> 32) + (v & 0xffff_ffffL);
            i += 8;
        }
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
