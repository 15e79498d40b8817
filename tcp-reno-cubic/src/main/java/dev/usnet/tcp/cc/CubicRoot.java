package dev.usnet.tcp.cc;

/**
 * cubic_root of tcp_cubic: an integer cube root from a 64-entry table of scaled roots and one Newton-Raphson
 * step. It is deliberately the kernel's approximation, not an exact root, because K — the time CUBIC takes to
 * climb back to Wmax — is computed with it, and a root off by one unit shifts every cnt that follows.
 */
public final class CubicRoot {
    private CubicRoot() {}

    /**
     * 64 × the cube root of each index, adjusted by hand in the kernel so that the single Newton step below
     * lands on the same values Linux gets.
     */
    private static final int[] V = {
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
        157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
        200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
        231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254};

    private static final long U32 = 0xffff_ffffL;

    /**
     * The approximate cube root of {@code a}, read as an unsigned 64-bit value; the result is what the kernel's
     * u32 would hold.
     */
    public static long of(long a) {
        int bits = 64 - Long.numberOfLeadingZeros(a); // fls64
        if (bits < 7) {
            // a < 64: the table alone, rounded (v is 64 × the root).
            return (V[(int) a] + 35) >> 6;
        }
        // b ≈ bits / 3 - 1: after shifting a right by 3b, what is left indexes the table and the table entry
        // shifted back by b is a first guess at the root (still scaled by 64).
        int b = ((bits * 84) >> 8) - 1;
        int index = (int) (a >>> (b * 3));
        long x = ((((long) V[index] + 10) << b) & U32) >> 6;
        // One Newton step for x^3 = a: x' = (2x + a / x^2) / 3, with x(x - 1) for x^2 as the kernel has it and
        // the division by 3 done as * 341 / 1024. The sum and product wrap at 32 bits like the kernel's u32.
        x = (2 * x + (Long.divideUnsigned(a, x * (x - 1)) & U32)) & U32;
        return ((x * 341) & U32) >> 10;
    }
}
