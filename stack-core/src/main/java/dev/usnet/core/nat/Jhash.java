package dev.usnet.core.nat;

/**
 * Bob Jenkins' lookup3 hash of 32-bit words (his public-domain {@code hashword}; Linux's jhash2), for the
 * one use NAT has: the address choice over a range, which Linux makes with it and which must match.
 */
final class Jhash {
    /** lookup3's starting constant. */
    static final int INITVAL = 0xdeadbeef;

    private Jhash() {}

    /** hashword over the four words {@code k0..k3} with {@code seed}: the final c. */
    static int jhash2Words4(int k0, int k1, int k2, int k3, int seed) {
        int a = INITVAL + (4 << 2) + seed;
        int b = a;
        int c = a;
        a += k0;
        b += k1;
        c += k2;
        // mix(a, b, c)
        a -= c; a ^= Integer.rotateLeft(c, 4); c += b;
        b -= a; b ^= Integer.rotateLeft(a, 6); a += c;
        c -= b; c ^= Integer.rotateLeft(b, 8); b += a;
        a -= c; a ^= Integer.rotateLeft(c, 16); c += b;
        b -= a; b ^= Integer.rotateLeft(a, 19); a += c;
        c -= b; c ^= Integer.rotateLeft(b, 4); b += a;
        a += k3;
        return fin(a, b, c);
    }

    /** lookup3's final(a, b, c), returning c. */
    static int fin(int a, int b, int c) {
        c ^= b; c -= Integer.rotateLeft(b, 14);
        a ^= c; a -= Integer.rotateLeft(c, 11);
        b ^= a; b -= Integer.rotateLeft(a, 25);
        c ^= b; c -= Integer.rotateLeft(b, 16);
        a ^= c; a -= Integer.rotateLeft(c, 4);
        b ^= a; b -= Integer.rotateLeft(a, 14);
        c ^= b; c -= Integer.rotateLeft(b, 24);
        return c;
    }

    /**
     * lookup3's mix step applied to {@code abc} in place (a, b, c): exposed so a test can run Jenkins' published
     * byte-string vectors through the same step this class uses.
     */
    static void mix(int[] abc) {
        int a = abc[0];
        int b = abc[1];
        int c = abc[2];
        a -= c; a ^= Integer.rotateLeft(c, 4); c += b;
        b -= a; b ^= Integer.rotateLeft(a, 6); a += c;
        c -= b; c ^= Integer.rotateLeft(b, 8); b += a;
        a -= c; a ^= Integer.rotateLeft(c, 16); c += b;
        b -= a; b ^= Integer.rotateLeft(a, 19); a += c;
        c -= b; c ^= Integer.rotateLeft(b, 4); b += a;
        abc[0] = a;
        abc[1] = b;
        abc[2] = c;
    }
}
