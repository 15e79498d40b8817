package dev.usnet.core.util;

/**
 * Keys for Netty's open-addressing primitive maps ({@code IntObjectHashMap}, {@code LongObjectHashMap}). Those place
 * a key at its own low bits (a long folded to {@code key ^ key >>> 32} first) and probe linearly, so keys that count
 * up — MACs of one vendor, addresses of one subnet, ports, ifindexes, nsids — fill one run of slots: a lookup that
 * lands inside the run walks to its end and a removal shifts along it. A bridge with 10 000 ports of consecutive MACs
 * forwarded a known unicast frame in 16 µs instead of 0.18 µs. Multiplying by an odd constant is a bijection (no two
 * keys collide that did not before) that turns consecutive keys into slots a constant stride apart.
 */
public final class SpreadKeys {
    private static final long LONG_ODD = 0x9E3779B97F4A7C15L;
    private static final int INT_ODD = 0x9E3779B9;

    private SpreadKeys() {}

    public static long spread(long key) {
        return key * LONG_ODD;
    }

    public static int spread(int key) {
        return key * INT_ODD;
    }
}
