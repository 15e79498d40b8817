package dev.usnet.tcp;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012), the keyed hash Linux uses for SYN cookies and timestamp offsets
 * (siphash_4u32, siphash_2u32): a 128-bit key, 64-bit output. The fixed-size forms keep the state in locals, so
 * the SYN path hashes without allocating.
 */
final class SipHash {
    private static final long C0 = 0x736f6d6570736575L;
    private static final long C1 = 0x646f72616e646f6dL;
    private static final long C2 = 0x6c7967656e657261L;
    private static final long C3 = 0x7465646279746573L;

    private SipHash() {}

    /** The hash of four 32-bit words, laid out little-endian as siphash_4u32 does (16 bytes). */
    static long hash4(long k0, long k1, int a, int b, int c, int d) {
        return words(k0, k1, (a & 0xffff_ffffL) | (long) b << 32, (c & 0xffff_ffffL) | (long) d << 32, 2);
    }

    /** The hash of two 32-bit words (siphash_2u32, 8 bytes). */
    static long hash2(long k0, long k1, int a, int b) {
        return words(k0, k1, (a & 0xffff_ffffL) | (long) b << 32, 0, 1);
    }

    /** One or two 64-bit message words, then the length block. */
    private static long words(long k0, long k1, long m0, long m1, int n) {
        long v0 = C0 ^ k0;
        long v1 = C1 ^ k1;
        long v2 = C2 ^ k0;
        long v3 = C3 ^ k1;
        for (int w = 0; w <= n; w++) {
            long m = w == n ? (long) (8 * n) << 56 : w == 0 ? m0 : m1;
            v3 ^= m;
            for (int r = 0; r < 2; r++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= m;
        }
        v2 ^= 0xff;
        for (int r = 0; r < 4; r++) {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }

    /** The hash of {@code msg} of any length: the general form, which the published test vectors check. */
    static long hash(long k0, long k1, byte[] msg) {
        long v0 = C0 ^ k0;
        long v1 = C1 ^ k1;
        long v2 = C2 ^ k0;
        long v3 = C3 ^ k1;
        int words = msg.length / 8;
        for (int w = 0; w <= words; w++) {
            long m = 0;
            int n = w < words ? 8 : msg.length - 8 * words;
            for (int i = 0; i < n; i++) {
                m |= (msg[8 * w + i] & 0xffL) << (8 * i);
            }
            if (w == words) {
                m |= (long) (msg.length & 0xff) << 56;
            }
            v3 ^= m;
            for (int r = 0; r < 2; r++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            v0 ^= m;
        }
        v2 ^= 0xff;
        for (int r = 0; r < 4; r++) {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }
}
