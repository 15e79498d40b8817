package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.wire.Checksum;
import io.netty.buffer.ByteBuf;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The Internet checksum: {@code Checksum.compute} over a pooled direct buffer (where packets live) of 20
 * (an IPv4 header), 1500 and 65536 bytes; {@link Incremental}: the RFC 1624 {@code update16} that patches the
 * header checksum on the TTL decrement.
 */
@State(Scope.Thread)
public class ChecksumBench extends UsnetBench {
    @Param({"20", "1500", "65536"})
    int len;

    private ByteBuf buf;
    private int off;

    @Setup(Level.Trial)
    public void setup() {
        SplittableRandom rnd = new SplittableRandom(1071);
        // Where an IPv4 header sits in a received packet: after the headroom and a 14-byte Ethernet header.
        off = Buffers.HEADROOM + 14;
        buf = Buffers.alloc().directBuffer(off + len);
        buf.writerIndex(off + len);
        for (int k = 0; k < off + len; k++) {
            buf.setByte(k, rnd.nextInt(256));
        }
        // Sanity: a region with its checksum written in sums to zero, and update16 agrees with recomputing.
        int c = Checksum.compute(buf, off, len);
        check(c == reference(buf, off, len), "compute disagrees with a byte-wise RFC 1071 sum");
        if (len >= 20) {
            buf.setShort(off + 10, 0);
            buf.setShort(off + 10, Checksum.compute(buf, off, len));
            check(Checksum.verify(buf, off, len), "compute/verify disagree");
            int word = buf.getUnsignedShort(off + 8);
            int newWord = (word - 0x100) & 0xffff;
            int inc = Checksum.update16(buf.getUnsignedShort(off + 10), word, newWord);
            buf.setShort(off + 8, newWord);
            buf.setShort(off + 10, inc);
            check(Checksum.verify(buf, off, len), "update16 disagrees with a full recompute");
        }
    }

    /** RFC 1071 the slow way: big-endian 16-bit words, end-around carry, complement. */
    private static int reference(ByteBuf b, int off, int len) {
        long sum = 0;
        for (int k = 0; k < len; k += 2) {
            int hi = b.getUnsignedByte(off + k);
            int lo = k + 1 < len ? b.getUnsignedByte(off + k + 1) : 0;
            sum += (hi << 8) | lo;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (int) (~sum & 0xffff);
    }

    @Benchmark
    public int compute() {
        return Checksum.compute(buf, off, len);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        buf.release();
    }

    /** The RFC 1624 incremental update alone (no size parameter). */
    @State(Scope.Thread)
    public static class Incremental extends UsnetBench {
        private static final int WORDS = 1024;
        private final int[] oldWords = new int[WORDS];
        private final int[] newWords = new int[WORDS];
        private int checksum;
        private int i;

        @Setup(Level.Trial)
        public void setup() {
            SplittableRandom rnd = new SplittableRandom(1624);
            for (int k = 0; k < WORDS; k++) {
                oldWords[k] = rnd.nextInt(0x10000);
                newWords[k] = rnd.nextInt(0x10000);
            }
            checksum = rnd.nextInt(0x10000);
        }

        /** One update16 per call over fresh operands from a precomputed table, chained through the checksum. */
        @Benchmark
        public void update16(Blackhole bh) {
            int k = i++ & (WORDS - 1);
            checksum = Checksum.update16(checksum, oldWords[k], newWords[k]);
            bh.consume(checksum);
        }
    }
}
