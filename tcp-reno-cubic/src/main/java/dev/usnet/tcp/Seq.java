package dev.usnet.tcp;

/**
 * Sequence-number arithmetic modulo 2^32 (Linux's before()/after()): numbers are unsigned 32-bit values held
 * in longs, and a comparison is meaningful only within 2 GiB of each other.
 */
final class Seq {
    private Seq() {}

    static boolean before(long a, long b) {
        return (int) (a - b) < 0;
    }

    static boolean after(long a, long b) {
        return before(b, a);
    }

    static long add(long a, long n) {
        return a + n & 0xffff_ffffL;
    }

    /** a - b as a signed distance. */
    static long sub(long a, long b) {
        return (int) (a - b);
    }
}
