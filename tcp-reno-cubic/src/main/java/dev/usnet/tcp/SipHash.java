package dev.usnet.tcp;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012), the keyed hash Linux uses for SYN cookies and timestamp offsets
 * (siphash_4u32, siphash_2u32): a 128-bit key, 64-bit output. One instance is one hashing in progress: it never
 * escapes the call that makes it, so the JIT keeps its four words in registers and the SYN path does not allocate.
 */
final class SipHash {
    private static final long C0 = 0x736f6d6570736575L;
    private static final long C1 = 0x646f72616e646f6dL;
    private static final long C2 = 0x6c7967656e657261L;
    private static final long C3 = 0x7465646279746573L;

    private long v0;
    private long v1;
    private long v2;
    private long v3;

    private SipHash(long k0, long k1) {
        v0 = C0 ^ k0;
        v1 = C1 ^ k1;
        v2 = C2 ^ k0;
        v3 = C3 ^ k1;
    }

    /** The hash of four 32-bit words, laid out little-endian as siphash_4u32 does (16 bytes). */
    static long hash4(long k0, long k1, int a, int b, int c, int d) {
        SipHash s = new SipHash(k0, k1);
        s.word((a & 0xffff_ffffL) | (long) b << 32);
        s.word((c & 0xffff_ffffL) | (long) d << 32);
        return s.finish(16);
    }

    /** The hash of two 32-bit words (siphash_2u32, 8 bytes). */
    static long hash2(long k0, long k1, int a, int b) {
        SipHash s = new SipHash(k0, k1);
        s.word((a & 0xffff_ffffL) | (long) b << 32);
        return s.finish(8);
    }

    /** The hash of {@code msg} of any length: the general form, which the published test vectors check. */
    static long hash(long k0, long k1, byte[] msg) {
        SipHash s = new SipHash(k0, k1);
        int words = msg.length / 8;
        for (int w = 0; w < words; w++) {
            s.word(littleEndian(msg, 8 * w, 8));
        }
        return s.finish(msg.length, littleEndian(msg, 8 * words, msg.length - 8 * words));
    }

    private static long littleEndian(byte[] b, int off, int n) {
        long m = 0;
        for (int i = 0; i < n; i++) {
            m |= (b[off + i] & 0xffL) << (8 * i);
        }
        return m;
    }

    /** One 8-byte message word: two compression rounds. */
    private void word(long m) {
        v3 ^= m;
        rounds(2);
        v0 ^= m;
    }

    /** A message of whole words: the last block holds only the length. */
    private long finish(int length) {
        return finish(length, 0);
    }

    /** The last block ({@code tail}: the bytes after the last whole word, and the length in its top byte), then
     *  four finalization rounds. */
    private long finish(int length, long tail) {
        word(tail | (long) (length & 0xff) << 56);
        v2 ^= 0xff;
        rounds(4);
        return v0 ^ v1 ^ v2 ^ v3;
    }

    private void rounds(int n) {
        for (int r = 0; r < n; r++) {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
    }
}
