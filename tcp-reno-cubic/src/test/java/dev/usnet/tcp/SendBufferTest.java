package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import io.netty.buffer.ByteBuf;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SendBufferTest {
    private static final int MIB4 = 4 << 20;

    @Test
    void holdsNoMemoryUntilTheFirstWriteAndThenOnlyWhatTheBytesNeed() {
        SendBuffer b = new SendBuffer(MIB4);
        ByteBuf src = pattern(100, 0);
        try {
            assertEquals(0, b.allocated());
            assertEquals(MIB4, b.free());
            assertEquals(100, b.write(src, 0, 100));
            assertEquals(SendBuffer.FIRST_RING, b.allocated());
            assertEquals(MIB4 - 100, b.free());
        } finally {
            src.release();
            b.release();
        }
    }

    @Test
    void growsByDoublingUpToTheLimitAndNoFurther() {
        int limit = 3 * SendBuffer.FIRST_RING + 100;
        SendBuffer b = new SendBuffer(limit);
        ByteBuf src = pattern(limit + 500, 7);
        try {
            assertEquals(SendBuffer.FIRST_RING, b.write(src, 0, SendBuffer.FIRST_RING));
            assertEquals(SendBuffer.FIRST_RING, b.allocated());
            assertEquals(1, b.write(src, SendBuffer.FIRST_RING, 1));
            assertEquals(2 * SendBuffer.FIRST_RING, b.allocated());
            int rest = b.write(src, SendBuffer.FIRST_RING + 1, limit + 500 - SendBuffer.FIRST_RING - 1);
            assertEquals(limit - SendBuffer.FIRST_RING - 1, rest, "a write past SO_SNDBUF takes only what fits");
            assertEquals(limit, b.allocated(), "the ring stops at the limit, not at the next power of two");
            assertEquals(0, b.free());
            assertEquals(0, b.write(src, 0, 1));
            assertArrayEquals(bytes(src, 0, limit), drain(b, limit));
        } finally {
            src.release();
            b.release();
        }
    }

    /** Writes and takes of random sizes, against a plain copy of the same bytes: order kept across growth and wrap. */
    @Test
    void keepsTheBytesInOrderThroughGrowthWrapAndResize() {
        SplittableRandom rnd = new SplittableRandom(13);
        int start = 64 * 1024;
        int limit = start;
        int srcLen = 2 * start + 4096;
        SendBuffer b = new SendBuffer(limit);
        byte[] srcBytes = patternBytes(srcLen, 3);
        ByteBuf src = Buffers.alloc().directBuffer(srcLen, srcLen).writeBytes(srcBytes);
        ByteBuf dst = Buffers.alloc().directBuffer(srcLen, srcLen);
        // Every byte written, in order; the buffer holds [taken, written).
        byte[] stream = new byte[1 << 24];
        int written = 0;
        int taken = 0;
        try {
            for (int step = 0; step < 2000; step++) {
                int op = rnd.nextInt(10);
                int held = written - taken;
                if (op < 5) {
                    int len = 1 + rnd.nextInt(op == 0 ? limit : 3000);
                    int off = rnd.nextInt(srcLen - len + 1);
                    int n = b.write(src, off, len);
                    assertEquals(Math.min(len, limit - held), n);
                    System.arraycopy(srcBytes, off, stream, written, n);
                    written += n;
                } else if (op < 9) {
                    int len = Math.min(held, rnd.nextInt(4000));
                    b.take(dst, 0, len);
                    byte[] got = new byte[len];
                    dst.getBytes(0, got);
                    assertArrayEquals(java.util.Arrays.copyOfRange(stream, taken, taken + len), got, "bytes from " + taken);
                    taken += len;
                } else {
                    // SO_SNDBUF changes: below what is held it keeps what is held.
                    int newLimit = 4096 + rnd.nextInt(2 * start);
                    b.resize(newLimit);
                    limit = Math.max(newLimit, held);
                }
                assertEquals(written - taken, b.size());
                assertEquals(limit - (written - taken), b.free());
                assertTrue(b.allocated() <= b.capacity(), "ring " + b.allocated() + " > limit " + b.capacity());
            }
            assertTrue(written > 1_000_000, "the steps moved " + written + " bytes");
        } finally {
            src.release();
            dst.release();
            b.release();
        }
    }

    @Test
    void aReleasedBufferTakesNoMoreBytes() {
        SendBuffer b = new SendBuffer(MIB4);
        ByteBuf src = pattern(10, 0);
        try {
            b.write(src, 0, 10);
            b.release();
            assertEquals(0, b.free());
            assertEquals(0, b.write(src, 0, 10));
            b.resize(8192);
            assertEquals(0, b.allocated());
        } finally {
            src.release();
        }
    }

    private static byte[] patternBytes(int len, int seed) {
        byte[] out = new byte[len];
        for (int i = 0; i < len; i++) {
            out[i] = (byte) ((i * 31 + seed) ^ (i >>> 8));
        }
        return out;
    }

    private static ByteBuf pattern(int len, int seed) {
        return Buffers.alloc().directBuffer(len, len).writeBytes(patternBytes(len, seed));
    }

    private static byte[] bytes(ByteBuf b, int off, int len) {
        byte[] out = new byte[len];
        b.getBytes(off, out);
        return out;
    }

    private static byte[] drain(SendBuffer b, int len) {
        ByteBuf dst = Buffers.alloc().directBuffer(len, len);
        try {
            b.take(dst, 0, len);
            return bytes(dst, 0, len);
        } finally {
            dst.release();
        }
    }
}
