package dev.usnet.core.ipv4;

import static dev.usnet.core.util.SpreadKeys.spread;

import io.netty.util.collection.IntObjectHashMap;

/**
 * Path MTUs learned from "fragmentation needed" errors, per destination (Linux keeps them as next-hop exceptions,
 * fib_nh_exception's fnhe_pmtu, fnhe_mtu_locked and fnhe_expires). A learned MTU only ever lowers the route's:
 * an ICMP message never raises it; it lapses after net.ipv4.route.mtu_expires seconds (600) and the device's MTU
 * applies again. A report below net.ipv4.route.min_pmtu (552) is not believed: the path MTU becomes that floor
 * (or stays lower if it already was) and is <em>locked</em>, which makes sockets that only want path MTU
 * discovery (TCP's IP_PMTUDISC_WANT) send without DF, so the routers fragment instead (ip_dont_fragment).
 */
final class PathMtuCache {
    /** One learned path MTU. Mutable in place: a refresh allocates nothing. */
    private static final class Entry {
        int mtu;
        boolean locked;
        long expiresNanos;
    }

    // Made by the first learned MTU; most namespaces never learn one.
    private IntObjectHashMap<Entry> byDst;

    /** Whether no path MTU was ever learned (the common case, checked before reading the clock). */
    boolean isEmpty() {
        return byDst == null || byDst.isEmpty();
    }

    /** The path MTU to {@code dst} over a device of {@code devMtu} (ipv4_mtu): a learned one if still valid. */
    int mtu(int dst, int devMtu, long now) {
        Entry e = valid(dst, now);
        return e != null ? Math.min(e.mtu, devMtu) : devMtu;
    }

    /** Whether the learned MTU to {@code dst} is locked (a report below the floor): send without DF. */
    boolean locked(int dst, long now) {
        Entry e = valid(dst, now);
        return e != null && e.locked;
    }

    /**
     * __ip_rt_update_pmtu: a router reported {@code reported} as the next-hop MTU towards {@code dst}, whose path
     * MTU is {@code current} now. Returns the path MTU afterwards.
     */
    int update(int dst, int reported, int current, int minPmtu, long expiresNanos, long now) {
        if (current < reported) {
            return current;
        }
        int mtu = reported;
        boolean lock = false;
        if (mtu < minPmtu) {
            lock = true;
            mtu = Math.min(current, minPmtu);
        }
        Entry e = valid(dst, now);
        if (e != null && e.mtu == mtu && !lock && now < e.expiresNanos - expiresNanos / 2) {
            // The same report again, well before it lapses: nothing to refresh.
            return mtu;
        }
        if (e == null) {
            if (byDst == null) {
                byDst = new IntObjectHashMap<>(4);
            }
            e = new Entry();
            byDst.put(spread(dst), e);
        }
        e.mtu = mtu;
        e.locked = lock;
        e.expiresNanos = now + expiresNanos;
        return mtu;
    }

    private Entry valid(int dst, long now) {
        if (byDst == null) {
            return null;
        }
        Entry e = byDst.get(spread(dst));
        if (e != null && now - e.expiresNanos >= 0) {
            byDst.remove(spread(dst));
            return null;
        }
        return e;
    }
}
