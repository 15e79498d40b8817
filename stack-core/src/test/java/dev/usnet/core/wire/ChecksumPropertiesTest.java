package dev.usnet.core.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Laws of the Internet checksum, checked on many seeded random inputs. */
class ChecksumPropertiesTest {
    private static final int TRIES = 5000;

    /** A random IPv4-like header (version/IHL set, so it never sums to zero) with a correct checksum. */
    private static ByteBuf header(Random rnd) {
        byte[] bytes = new byte[20];
        rnd.nextBytes(bytes);
        bytes[0] = 0x45;
        ByteBuf b = Unpooled.wrappedBuffer(bytes);
        b.setShort(10, 0);
        b.setShort(10, Checksum.compute(b, 0, 20));
        return b;
    }

    @Test
    void incrementalUpdateOfOneWordEqualsFullRecompute() {
        Random rnd = new Random(1624);
        for (int i = 0; i < TRIES; i++) {
            ByteBuf b = header(rnd);
            int off = 2 * (1 + rnd.nextInt(9));
            if (off == 10) {
                off = 8;
            }
            int newWord = rnd.nextInt(1 << 16);
            int incremental = Checksum.update16(b.getUnsignedShort(10), b.getUnsignedShort(off), newWord);
            b.setShort(off, newWord);
            b.setShort(10, 0);
            int full = Checksum.compute(b, 0, 20);
            assertEquals(full, incremental, "try " + i);
            b.setShort(10, incremental);
            assertTrue(Checksum.verify(b, 0, 20));
        }
    }

    @Test
    void incrementalUpdateOfAnAddressEqualsFullRecompute() {
        Random rnd = new Random(791);
        for (int i = 0; i < TRIES; i++) {
            ByteBuf b = header(rnd);
            int addrOff = rnd.nextBoolean() ? 12 : 16;
            int newAddr = rnd.nextInt();
            int incremental = Checksum.update32(b.getUnsignedShort(10), b.getInt(addrOff), newAddr);
            b.setInt(addrOff, newAddr);
            b.setShort(10, incremental);
            assertTrue(Checksum.verify(b, 0, 20), "try " + i);
        }
    }

    @Test
    void ttlDecrementKeepsHeaderValid() {
        Random rnd = new Random(8);
        for (int i = 0; i < TRIES; i++) {
            ByteBuf b = header(rnd);
            int ttl = 2 + rnd.nextInt(254);
            b.setByte(8, ttl);
            b.setShort(10, 0);
            b.setShort(10, Checksum.compute(b, 0, 20));
            Ipv4Packet ip = new Ipv4Packet().wrap(b, 0);
            ip.decrementTtl();
            assertEquals(ttl - 1, ip.ttl());
            assertTrue(Checksum.verify(b, 0, 20), "try " + i);
        }
    }

    @Test
    void wordSizedSumEqualsReferenceSixteenBitSumAtAnyLength() {
        Random rnd = new Random(1071);
        for (int i = 0; i < TRIES; i++) {
            byte[] bytes = new byte[rnd.nextInt(301)];
            rnd.nextBytes(bytes);
            long s = 0;
            for (int k = 0; k < bytes.length; k += 2) {
                int hi = bytes[k] & 0xff;
                int lo = k + 1 < bytes.length ? bytes[k + 1] & 0xff : 0;
                s += (hi << 8) | lo;
            }
            while ((s >>> 16) != 0) {
                s = (s & 0xffff) + (s >>> 16);
            }
            int off = rnd.nextInt(5);
            ByteBuf b = Unpooled.buffer(off + bytes.length);
            b.writeZero(off).writeBytes(bytes);
            assertEquals((int) (~s & 0xffff), Checksum.compute(b, off, bytes.length), "length " + bytes.length);
        }
    }

    /** Direct buffers take the native-order word path: it must agree with the reference at any offset. */
    @Test
    void directBuffersAgreeWithTheReferenceSum() {
        Random rnd = new Random(64);
        for (int i = 0; i < 2000; i++) {
            byte[] bytes = new byte[rnd.nextInt(3000)];
            rnd.nextBytes(bytes);
            if (i % 7 == 0) {
                java.util.Arrays.fill(bytes, (byte) 0xff);
            }
            int off = rnd.nextInt(9);
            ByteBuf heap = Unpooled.buffer(off + bytes.length).writeZero(off).writeBytes(bytes);
            ByteBuf direct = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(off + bytes.length)
                    .writeZero(off).writeBytes(bytes);
            try {
                assertTrue(direct.hasMemoryAddress());
                assertEquals(Checksum.compute(heap, off, bytes.length), Checksum.compute(direct, off, bytes.length),
                        "length " + bytes.length + " at offset " + off);
            } finally {
                direct.release();
            }
        }
    }
}
