package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** cubic_root against the public K vectors and against the exact root. */
class CubicRootTest {
    private static final long CUBE_FACTOR = (1L << 40) / 410;

    @Test
    void cubeFactorIsTwoToTheFortyOverFourHundredTen() {
        assertEquals(2_681_735_677L, CUBE_FACTOR);
    }

    @Test
    void publicKVectors() {
        long[] d = {1, 10, 100, 1000, 30};
        long[] k = {1388, 2991, 6451, 13897, 4316};
        for (int i = 0; i < d.length; i++) {
            assertEquals(k[i], CubicRoot.of(CUBE_FACTOR * d[i]), "Wmax - cwnd = " + d[i]);
        }
    }

    @Test
    void smallArgumentsComeFromTheTableAlone() {
        assertEquals(0, CubicRoot.of(0));
        assertEquals(1, CubicRoot.of(1)); // (54 + 35) >> 6
        assertEquals(2, CubicRoot.of(8)); // (123 + 35) >> 6
        assertEquals(4, CubicRoot.of(63)); // (254 + 35) >> 6
    }

    @Test
    void closeToTheExactRootOverTheWholeRange() {
        // One Newton step from a good table guess: within 2% of the real root (or 1 unit for small roots), checked at
        // powers of two and their neighbours up to 2^62.
        for (int bits = 7; bits < 62; bits++) {
            for (long a : new long[] {1L << bits, (1L << bits) + 1, (1L << bits) * 3 / 2, (1L << (bits + 1)) - 1}) {
                double exact = Math.cbrt((double) a);
                long got = CubicRoot.of(a);
                assertTrue(Math.abs(got - exact) <= Math.max(1, exact * 0.02),
                        "cubic_root(" + a + ") = " + got + ", exact " + exact);
            }
        }
    }

    @Test
    void unsignedInputAboveLongMaxDoesNotThrow() {
        // a is a u64 in the kernel; the top bit set is a valid (if absurd) input.
        long got = CubicRoot.of(-1L);
        assertTrue(got > 2_000_000 && got < 3_000_000, "cube root of 2^64 - 1 is ~2642245, got " + got);
    }
}
