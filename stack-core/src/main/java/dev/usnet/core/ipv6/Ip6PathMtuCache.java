package dev.usnet.core.ipv6;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.wire.Ipv6Packet;
import io.netty.util.collection.LongObjectHashMap;

/**
 * IPv6 path MTUs learned from packet too big, per destination (Linux keeps them in cached routes, rt6_info's
 * exceptions with their own MTU and expiry; __ip6_rt_update_pmtu). A learned MTU only lowers the route's, never
 * raises it; nothing below the IPv6 minimum of 1280 is believed (RFC 8201: the path MTU becomes 1280); it lapses
 * after net.ipv6.route.mtu_expires seconds (600) and the device's MTU applies again.
 *
 * <p>Destinations are keyed by a hash of their 128 bits; entries whose hashes meet are chained and told apart by
 * the full address, so a lookup allocates nothing.
 */
final class Ip6PathMtuCache {
    /** One learned path MTU. Mutable in place: a refresh allocates nothing. */
    private static final class Entry {
        final long hi;
        final long lo;
        int mtu;
        long expiresNanos;
        Entry next;

        Entry(long hi, long lo) {
            this.hi = hi;
            this.lo = lo;
        }
    }

    // Made by the first learned MTU; most namespaces never learn one.
    private LongObjectHashMap<Entry> byDst;

    /** Whether no path MTU was ever learned (the common case, checked before reading the clock). */
    boolean isEmpty() {
        return byDst == null || byDst.isEmpty();
    }

    /** The path MTU to {@code dh}/{@code dl} over a device of {@code devMtu}: a learned one while it is valid. */
    int mtu(long dh, long dl, int devMtu, long now) {
        Entry e = valid(dh, dl, now);
        return e != null ? Math.min(e.mtu, devMtu) : devMtu;
    }

    /**
     * A router reported {@code reported} as the next-hop MTU towards {@code dh}/{@code dl}, whose path MTU is
     * {@code current} now. Returns the path MTU afterwards.
     */
    int update(long dh, long dl, int reported, int current, long expiresNanos, long now) {
        int mtu = Math.max(reported, Ipv6Packet.MIN_MTU);
        if (mtu >= current) {
            return current;
        }
        Entry e = valid(dh, dl, now);
        if (e == null) {
            if (byDst == null) {
                byDst = new LongObjectHashMap<>(4);
            }
            long k = key(dh, dl);
            e = new Entry(dh, dl);
            e.next = byDst.get(k);
            byDst.put(k, e);
        }
        e.mtu = mtu;
        e.expiresNanos = now + expiresNanos;
        return mtu;
    }

    private static long key(long hi, long lo) {
        return spread(hi * 0x9e37_79b9_7f4a_7c15L ^ lo);
    }

    /** The entry for the destination, unless it lapsed (then it is forgotten). */
    private Entry valid(long hi, long lo, long now) {
        if (byDst == null) {
            return null;
        }
        long k = key(hi, lo);
        Entry prev = null;
        for (Entry e = byDst.get(k); e != null; prev = e, e = e.next) {
            if (e.hi != hi || e.lo != lo) {
                continue;
            }
            if (now - e.expiresNanos < 0) {
                return e;
            }
            if (prev != null) {
                prev.next = e.next;
            } else if (e.next != null) {
                byDst.put(k, e.next);
            } else {
                byDst.remove(k);
            }
            return null;
        }
        return null;
    }
}
