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
 * the longest down: a host has three or four lengths (/128, /64, the default), so a lookup is a handful of probes,
 * with no allocation. One prefix can have several routes, lowest metric first, as a fib6 node's leaf list: every
 * device has its own {@code fe80::/64}. The tables are rebuilt lazily after changes and published as an immutable
 * snapshot, so lookups need no lock.
 */
public final class Fib6 {
    private static final Comparator<Route6> BY_METRIC = Comparator.comparingInt(Route6::metric);

    // Per prefix length, the masked prefix's routes, lowest metric first, then in the order added.
    private final Map<Ipv6Addr, List<Route6>>[] byLength = newByLength();
    private final Map<Device, LinkedHashSet<Route6>> routesByDevice = new IdentityHashMap<>(4);
    private int size;
    private volatile Snapshot snapshot = Snapshot.EMPTY;
    private volatile boolean dirty;
    private volatile Route6Listener listener;

    @SuppressWarnings("unchecked")
    private static Map<Ipv6Addr, List<Route6>>[] newByLength() {
        return new Map[129];
    }

    /**
     * The flat form: the lengths in use, longest first, and for each an open-addressing table (power-of-two size,
     * linear probing, at most half full) of its masked prefixes as two longs, with each prefix's routes beside them.
     */
    private record Snapshot(int[] lengths, long[][] keyHi, long[][] keyLo, Route6[][][] routes) {
        static final Snapshot EMPTY = new Snapshot(new int[0], new long[0][], new long[0][], new Route6[0][][]);
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

    /**
     * Adds the route; a route of the prefix with the same device, gateway and metric is replaced, as the kernel
     * replaces its own routes; a route of another device or metric stands beside it.
     */
    public synchronized void add(Route6 r) {
        Route6 old = same(r);
        if (old != null) {
            removeRoute(old);
        }
        insert(r);
        notify(old, false);
        notify(r, true);
    }

    /** Like {@code ip -6 route add}: fails when the prefix has a route of the same metric already. */
    public synchronized void addNew(Route6 r) {
        for (Route6 o : routes(r.prefix(), r.prefixLen())) {
            if (o.metric() == r.metric()) {
                throw new IllegalArgumentException("route " + r.prefix() + "/" + r.prefixLen() + " exists (RTNETLINK: File exists)");
            }
        }
        insert(r);
        notify(r, true);
    }

    /** {@code ip -6 route replace}: puts {@code r} in place of the prefix's route of the same metric, if any. */
    public synchronized Route6 replace(Route6 r) {
        Route6 old = null;
        for (Route6 o : routes(r.prefix(), r.prefixLen())) {
            if (o.metric() == r.metric()) {
                old = o;
                break;
            }
        }
        if (old != null) {
            removeRoute(old);
        }
        insert(r);
        notify(old, false);
        notify(r, true);
        return old;
    }

    private Route6 same(Route6 r) {
        for (Route6 o : routes(r.prefix(), r.prefixLen())) {
            if (o.dev() == r.dev() && o.metric() == r.metric() && java.util.Objects.equals(o.gateway(), r.gateway())) {
                return o;
            }
        }
        return null;
    }

    private List<Route6> routes(Ipv6Addr prefix, int len) {
        Map<Ipv6Addr, List<Route6>> m = byLength[len];
        List<Route6> l = m == null ? null : m.get(prefix.prefix(len));
        return l == null ? List.of() : l;
    }

    /** The first (lowest-metric) route for exactly this prefix, or null. */
    public synchronized Route6 get(Ipv6Addr prefix, int len) {
        List<Route6> l = routes(prefix, len);
        return l.isEmpty() ? null : l.getFirst();
    }

    /** Every route for exactly this prefix, lowest metric first. */
    public synchronized List<Route6> getAll(Ipv6Addr prefix, int len) {
        return List.copyOf(routes(prefix, len));
    }

    /** {@code ip -6 route del PREFIX [dev DEV]}: removes the prefix's first route, or its route through {@code dev}. */
    public synchronized boolean remove(Ipv6Addr prefix, int len, Device dev) {
        for (Route6 o : routes(prefix, len)) {
            if (dev == null || o.dev() == dev) {
                removeRoute(o);
                notify(o, false);
                return true;
            }
        }
        return false;
    }

    /** Removes exactly {@code r} (equal in every field), if present: a route that expired or was withdrawn. */
    public synchronized boolean removeExact(Route6 r) {
        for (Route6 o : routes(r.prefix(), r.prefixLen())) {
            if (o.equals(r)) {
                removeRoute(o);
                notify(o, false);
                return true;
            }
        }
        return false;
    }

    public boolean remove(Ipv6Addr prefix, int len) {
        return remove(prefix, len, null);
    }

    /** Removes the prefix route an address of {@code dev} had made, if it is still there. */
    public synchronized void removeConnected(Ipv6Addr prefix, int len, Device dev) {
        for (Route6 o : routes(prefix, len)) {
            if (o.connected() && o.dev() == dev) {
                removeRoute(o);
                notify(o, false);
                return;
            }
        }
    }

    /** Removes every route through {@code dev} (the device went away), in the order they were added. */
    public synchronized int removeDevice(Device dev) {
        LinkedHashSet<Route6> routes = routesByDevice.get(dev);
        if (routes == null) {
            return 0;
        }
        List<Route6> gone = new ArrayList<>(routes);
        for (Route6 r : gone) {
            removeRoute(r);
            notify(r, false);
        }
        return gone.size();
    }

    // Every change goes through these two, which keep routesByDevice and the size.
    private void insert(Route6 r) {
        Map<Ipv6Addr, List<Route6>> m = byLength[r.prefixLen()];
        if (m == null) {
            m = byLength[r.prefixLen()] = new HashMap<>(4);
        }
        List<Route6> l = m.computeIfAbsent(r.prefix(), k -> new ArrayList<>(1));
        int at = 0;
        while (at < l.size() && l.get(at).metric() <= r.metric()) {
            at++;
        }
        l.add(at, r);
        size++;
        if (r.dev() != null) {
            routesByDevice.computeIfAbsent(r.dev(), d -> new LinkedHashSet<>(2)).add(r);
        }
        dirty = true;
    }

    private void removeRoute(Route6 r) {
        Map<Ipv6Addr, List<Route6>> m = byLength[r.prefixLen()];
        List<Route6> l = m.get(r.prefix());
        for (int i = 0; i < l.size(); i++) {
            if (l.get(i) == r) {
                l.remove(i);
                break;
            }
        }
        if (l.isEmpty()) {
            m.remove(r.prefix());
        }
        size--;
        LinkedHashSet<Route6> own = r.dev() == null ? null : routesByDevice.get(r.dev());
        if (own != null && own.remove(r) && own.isEmpty()) {
            routesByDevice.remove(r.dev());
        }
        dirty = true;
    }

    /** Every route, longest prefix first, then by address and metric, as {@code ip -6 route} lists them. */
    public synchronized List<Route6> list() {
        List<Route6> out = new ArrayList<>(size);
        for (int len = 128; len >= 0; len--) {
            if (byLength[len] == null) {
                continue;
            }
            List<Ipv6Addr> prefixes = new ArrayList<>(byLength[len].keySet());
            prefixes.sort(null);
            for (Ipv6Addr p : prefixes) {
                out.addAll(byLength[len].get(p));
            }
        }
        return out;
    }

    public synchronized int size() {
        return size;
    }

    /** The longest-prefix match for {@code dstHi}/{@code dstLo} (its lowest-metric route), or null. */
    public Route6 lookup(long dstHi, long dstLo) {
        return lookup(dstHi, dstLo, null);
    }

    /**
     * The longest-prefix match, taking only routes through {@code oif} when it is not null (a destination whose scope
     * names the device, as a link-local one does: each device has its own fe80::/64), or null.
     */
    public Route6 lookup(long dstHi, long dstLo, Device oif) {
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
            Route6[][] rs = s.routes[i];
            int mask = kh.length - 1;
            for (int slot = hash(h, l) & mask; rs[slot] != null; slot = (slot + 1) & mask) {
                if (kh[slot] == h && kl[slot] == l) {
                    Route6[] leaf = rs[slot];
                    if (oif == null) {
                        return leaf[0];
                    }
                    for (Route6 r : leaf) {
                        if (r.dev() == oif) {
                            return r;
                        }
                    }
                    break;
                }
            }
        }
        return null;
    }

    /** Longest-prefix match by scanning every route: the reference the fast path is tested against. */
    public synchronized Route6 lookupSlow(long dstHi, long dstLo) {
        for (int len = 128; len >= 0; len--) {
            if (byLength[len] == null) {
                continue;
            }
            for (List<Route6> l : byLength[len].values()) {
                if (l.getFirst().prefix().prefixMatches(len, dstHi, dstLo)) {
                    return l.getFirst();
                }
            }
        }
        return null;
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
        Route6[][][] routes = new Route6[count][][];
        int i = 0;
        for (int len = 128; len >= 0; len--) {
            Map<Ipv6Addr, List<Route6>> m = byLength[len];
            if (m == null || m.isEmpty()) {
                continue;
            }
            int cap = Integer.highestOneBit(Math.max(2, m.size() * 2 - 1)) << 1;
            long[] kh = new long[cap];
            long[] kl = new long[cap];
            Route6[][] rs = new Route6[cap][];
            for (Map.Entry<Ipv6Addr, List<Route6>> e : m.entrySet()) {
                long h = e.getKey().hi();
                long l = e.getKey().lo();
                int slot = hash(h, l) & (cap - 1);
                while (rs[slot] != null) {
                    slot = (slot + 1) & (cap - 1);
                }
                kh[slot] = h;
                kl[slot] = l;
                rs[slot] = e.getValue().toArray(new Route6[0]);
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
