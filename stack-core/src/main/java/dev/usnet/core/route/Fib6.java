package dev.usnet.core.route;

import dev.usnet.core.device.Device;
import dev.usnet.core.wire.Ipv6Addr;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * An IPv6 routing table (the main fib6 table) with longest-prefix match. Linux walks a radix tree; this keeps, for
 * each prefix length in use, an open-addressing table of the masked prefixes, and a lookup probes the lengths from
 * the longest down: a host has three or four lengths (/128 for its own addresses, /64, the default), so a lookup is a
 * handful of probes, with no allocation. The tables are rebuilt lazily after changes and published as an immutable
 * snapshot, so lookups need no lock.
 */
public final class Fib6 {
    private final Map<Ipv6Addr, Route6>[] byLength = newByLength();
    private final Map<Device, LinkedHashSet<Route6>> routesByDevice = new IdentityHashMap<>(4);
    private int size;
    private volatile Snapshot snapshot = Snapshot.EMPTY;
    private volatile boolean dirty;
    private volatile Route6Listener listener;

    @SuppressWarnings("unchecked")
    private static Map<Ipv6Addr, Route6>[] newByLength() {
        return new Map[129];
    }

    /**
     * The flat form: the lengths in use, longest first, and for each an open-addressing table (power-of-two size,
     * linear probing, at most half full) of its masked prefixes as two longs, with the routes beside them.
     */
    private record Snapshot(int[] lengths, long[][] keyHi, long[][] keyLo, Route6[][] routes) {
        static final Snapshot EMPTY = new Snapshot(new int[0], new long[0][], new long[0][], new Route6[0][]);
    }

    /** Who is told of route changes (the namespace's monitor), or null. */
    public void setListener(Route6Listener l) {
        this.listener = l;
    }

    private void notify(Route6 r, boolean added) {
        Route6Listener l = listener;
        if (l != null && r != null) {
            l.route6Changed(r, added);
        }
    }

    /** Adds the route, or replaces the one its prefix has when the new metric is not higher or the device is the same. */
    public synchronized void add(Route6 r) {
        Route6 old = get(r.prefix(), r.prefixLen());
        if (old == null || r.metric() <= old.metric() || old.dev() == r.dev()) {
            put(r);
            notify(old, false);
            notify(r, true);
        }
    }

    /** Like {@code ip -6 route add}: fails when the prefix already has a route. */
    public synchronized void addNew(Route6 r) {
        if (get(r.prefix(), r.prefixLen()) != null) {
            throw new IllegalArgumentException("route " + r.prefix() + "/" + r.prefixLen() + " exists (RTNETLINK: File exists)");
        }
        put(r);
        notify(r, true);
    }

    /** {@code ip -6 route replace}: puts {@code r} in place of whatever route its prefix has. */
    public synchronized Route6 replace(Route6 r) {
        Route6 old = put(r);
        notify(old, false);
        notify(r, true);
        return old;
    }

    /** The route for exactly this prefix, or null. */
    public synchronized Route6 get(Ipv6Addr prefix, int len) {
        Map<Ipv6Addr, Route6> m = byLength[len];
        return m == null ? null : m.get(prefix.prefix(len));
    }

    public synchronized boolean remove(Ipv6Addr prefix, int len) {
        Map<Ipv6Addr, Route6> m = byLength[len];
        Route6 old = m == null ? null : m.remove(prefix.prefix(len));
        if (old != null) {
            unindex(old);
            size--;
            dirty = true;
            notify(old, false);
        }
        return old != null;
    }

    /** Removes the connected route a deleted address had created, if it is still the one there. */
    public synchronized void removeConnected(Ipv6Addr prefix, int len, Device dev) {
        Route6 r = get(prefix, len);
        if (r != null && r.connected() && r.dev() == dev) {
            remove(prefix, len);
        }
    }

    /** Removes every route through {@code dev} (the device went away), in the order they were added. */
    public synchronized int removeDevice(Device dev) {
        LinkedHashSet<Route6> routes = routesByDevice.remove(dev);
        if (routes == null) {
            return 0;
        }
        for (Route6 r : routes) {
            byLength[r.prefixLen()].remove(r.prefix());
            size--;
            notify(r, false);
        }
        dirty = true;
        return routes.size();
    }

    // Every change goes through these two, which keep routesByDevice.
    private Route6 put(Route6 r) {
        Map<Ipv6Addr, Route6> m = byLength[r.prefixLen()];
        if (m == null) {
            m = byLength[r.prefixLen()] = new HashMap<>(4);
        }
        Route6 old = m.put(r.prefix(), r);
        if (old != null) {
            unindex(old);
        } else {
            size++;
        }
        if (r.dev() != null) {
            routesByDevice.computeIfAbsent(r.dev(), d -> new LinkedHashSet<>(2)).add(r);
        }
        dirty = true;
        return old;
    }

    private void unindex(Route6 r) {
        LinkedHashSet<Route6> routes = r.dev() == null ? null : routesByDevice.get(r.dev());
        if (routes != null && routes.remove(r) && routes.isEmpty()) {
            routesByDevice.remove(r.dev());
        }
    }

    /** Every route, longest prefix first, then by address, as {@code ip -6 route} lists them. */
    public synchronized List<Route6> list() {
        List<Route6> l = new ArrayList<>(size);
        for (int len = 128; len >= 0; len--) {
            if (byLength[len] != null) {
                List<Route6> part = new ArrayList<>(byLength[len].values());
                part.sort(Comparator.comparing(Route6::prefix));
                l.addAll(part);
            }
        }
        return l;
    }

    public synchronized int size() {
        return size;
    }

    /** The longest-prefix match for {@code dstHi}/{@code dstLo}, or null when no route covers it. */
    public Route6 lookup(long dstHi, long dstLo) {
        if (dirty) {
            rebuild();
        }
        Snapshot s = snapshot;
        int[] lengths = s.lengths;
        for (int i = 0; i < lengths.length; i++) {
            int len = lengths[i];
            long h = dstHi & Ipv6Addr.maskHi(len);
            long l = dstLo & Ipv6Addr.maskLo(len);
            long[] kh = s.keyHi[i];
            long[] kl = s.keyLo[i];
            Route6[] rs = s.routes[i];
            int mask = kh.length - 1;
            for (int slot = hash(h, l) & mask; rs[slot] != null; slot = (slot + 1) & mask) {
                if (kh[slot] == h && kl[slot] == l) {
                    return rs[slot];
                }
            }
        }
        return null;
    }

    /** Longest-prefix match by scanning every route: the reference the fast path is tested against. */
    public synchronized Route6 lookupSlow(long dstHi, long dstLo) {
        Route6 best = null;
        for (int len = 0; len <= 128; len++) {
            if (byLength[len] == null) {
                continue;
            }
            for (Route6 r : byLength[len].values()) {
                if (r.prefix().prefixMatches(len, dstHi, dstLo) && (best == null || len > best.prefixLen())) {
                    best = r;
                }
            }
        }
        return best;
    }

    private static int hash(long hi, long lo) {
        long x = (hi * 0x9E3779B97F4A7C15L) ^ (lo * 0xC2B2AE3D27D4EB4FL);
        return (int) (x ^ (x >>> 29) ^ (x >>> 41));
    }

    private synchronized void rebuild() {
        if (!dirty) {
            return;
        }
        int count = 0;
        for (int len = 128; len >= 0; len--) {
            if (byLength[len] != null && !byLength[len].isEmpty()) {
                count++;
            }
        }
        int[] lengths = new int[count];
        long[][] keyHi = new long[count][];
        long[][] keyLo = new long[count][];
        Route6[][] routes = new Route6[count][];
        int i = 0;
        for (int len = 128; len >= 0; len--) {
            Map<Ipv6Addr, Route6> m = byLength[len];
            if (m == null || m.isEmpty()) {
                continue;
            }
            int cap = Integer.highestOneBit(Math.max(2, m.size() * 2 - 1)) << 1;
            long[] kh = new long[cap];
            long[] kl = new long[cap];
            Route6[] rs = new Route6[cap];
            for (Route6 r : m.values()) {
                long h = r.prefix().hi();
                long l = r.prefix().lo();
                int slot = hash(h, l) & (cap - 1);
                while (rs[slot] != null) {
                    slot = (slot + 1) & (cap - 1);
                }
                kh[slot] = h;
                kl[slot] = l;
                rs[slot] = r;
            }
            lengths[i] = len;
            keyHi[i] = kh;
            keyLo[i] = kl;
            routes[i] = rs;
            i++;
        }
        snapshot = new Snapshot(lengths, keyHi, keyLo, routes);
        dirty = false;
    }
}
