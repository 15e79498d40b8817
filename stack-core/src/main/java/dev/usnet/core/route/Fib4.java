package dev.usnet.core.route;

import dev.usnet.core.device.Device;
import dev.usnet.core.util.SpreadKeys;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * An IPv4 routing table (the main FIB) with longest-prefix match. Prefixes are flattened into sorted
 * disjoint address ranges, each naming its longest covering route, so a lookup is one binary search over
 * an int array: no allocation, O(log n), about 50 ns at 100k prefixes. The flat form is rebuilt lazily after
 * changes and published as an immutable snapshot, so lookups need no lock.
 */
public final class Fib4 {
    // Small to start: a container has two routes (lo's and eth0's connected ones).
    private final Map<Long, Route> routes = new HashMap<>(4);
    // The keys of each device's routes: a device that goes away takes its routes in time proportional to them,
    // not to the table (a router with a link per host deletes thousands of devices when its namespace closes).
    private final Map<Device, LinkedHashSet<Long>> keysByDevice = new IdentityHashMap<>(4);
    private volatile Snapshot snapshot = Snapshot.EMPTY;
    private volatile boolean dirty;
    // RTM_NEWROUTE/RTM_DELROUTE to whoever monitors the namespace; null when nobody does.
    private volatile RouteListener listener;

    /**
     * The flat form. {@code index}, present for large tables, maps the top 16 address bits to the last range
     * starting at or before that /16, so a lookup searches only the few ranges inside one /16.
     */
    private record Snapshot(int[] starts, Route[] routes, int[] index) {
        static final Snapshot EMPTY = new Snapshot(new int[] {Integer.MIN_VALUE}, new Route[] {null}, null);
    }

    /** Below this many ranges a plain binary search over the whole array is as fast as the index. */
    private static final int INDEX_THRESHOLD = 512;

    private static long key(int prefix, int len) {
        // Spread (a bijection): Long's hash of the plain key kept the length's constant low bits, so thousands of
        // /30s fell into a few HashMap bins and every add walked a tree.
        return SpreadKeys.spread(((long) (prefix & Ipv4Addr.mask(len)) << 8) | len);
    }

    /** Who is told of route changes (the namespace's monitor), or null. */
    public void setListener(RouteListener l) {
        this.listener = l;
    }

    private void notify(Route r, boolean added) {
        RouteListener l = listener;
        if (l != null && r != null) {
            l.routeChanged(r, added);
        }
    }

    /** Adds or replaces the route for its prefix (like {@code ip route replace}); the lower metric wins a tie. */
    public synchronized void add(Route r) {
        long k = key(r.prefix(), r.prefixLen());
        Route old = routes.get(k);
        if (old == null || r.metric() <= old.metric() || old.dev() == r.dev()) {
            put(k, r);
            notify(old, false);
            notify(r, true);
        }
        dirty = true;
    }

    /** The route for exactly this prefix, or null ({@code ip route show exact PREFIX}). */
    public synchronized Route get(int prefix, int len) {
        return routes.get(key(prefix, len));
    }

    /** {@code ip route replace}: puts {@code r} in place of whatever route its prefix has, whatever its metric. */
    public synchronized Route replace(Route r) {
        Route old = put(key(r.prefix(), r.prefixLen()), r);
        notify(old, false);
        notify(r, true);
        dirty = true;
        return old;
    }

    /** Like {@code ip route add}: fails when the prefix already has a route. */
    public synchronized void addNew(Route r) {
        long k = key(r.prefix(), r.prefixLen());
        if (routes.containsKey(k)) {
            throw new IllegalArgumentException("route " + Ipv4Addr.format(r.prefix()) + "/" + r.prefixLen() + " exists (RTNETLINK: File exists)");
        }
        put(k, r);
        notify(r, true);
        dirty = true;
    }

    public synchronized boolean remove(int prefix, int len) {
        Route old = removeKey(key(prefix, len));
        notify(old, false);
        dirty |= old != null;
        return old != null;
    }

    /** Removes every route through {@code dev} (the device went away or down). */
    public synchronized int removeDevice(Device dev) {
        LinkedHashSet<Long> keys = keysByDevice.remove(dev);
        if (keys == null) {
            return 0;
        }
        for (Long k : keys) {
            notify(routes.remove(k), false);
        }
        dirty = true;
        return keys.size();
    }

    // Every change to the routes goes through these two, which keep keysByDevice.
    private Route put(long k, Route r) {
        Route old = routes.put(k, r);
        if (old != null) {
            unindex(k, old);
        }
        keysByDevice.computeIfAbsent(r.dev(), d -> new LinkedHashSet<>(2)).add(k);
        return old;
    }

    private Route removeKey(long k) {
        Route old = routes.remove(k);
        if (old != null) {
            unindex(k, old);
        }
        return old;
    }

    private void unindex(long k, Route r) {
        LinkedHashSet<Long> keys = keysByDevice.get(r.dev());
        if (keys != null && keys.remove(k) && keys.isEmpty()) {
            keysByDevice.remove(r.dev());
        }
    }

    /** Removes the connected route a deleted address had created. */
    public synchronized void removeConnected(int prefix, int len, Device dev) {
        Route r = routes.get(key(prefix, len));
        if (r != null && r.connected() && r.dev() == dev) {
            removeKey(key(prefix, len));
            notify(r, false);
            dirty = true;
        }
    }

    public synchronized List<Route> list() {
        List<Route> l = new ArrayList<>(routes.values());
        l.sort(Comparator.comparingInt(Route::prefixLen).reversed()
                .thenComparing((a, b) -> Integer.compareUnsigned(a.prefix(), b.prefix())));
        return l;
    }

    public synchronized int size() {
        return routes.size();
    }

    /** The longest-prefix match for {@code dst}, or null when no route covers it. */
    public Route lookup(int dst) {
        if (dirty) {
            rebuild();
        }
        Snapshot s = snapshot;
        int[] starts = s.starts;
        int key = dst ^ Integer.MIN_VALUE;
        int lo;
        int hi;
        int[] index = s.index;
        if (index != null) {
            int bucket = dst >>> 16;
            lo = index[bucket];
            hi = index[bucket + 1];
        } else {
            lo = 0;
            hi = starts.length - 1;
        }
        // Largest i with starts[i] <= key; starts[0] is the minimum, so one always exists.
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= key) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return s.routes[lo];
    }

    /** Longest-prefix match by scanning every route: the reference the fast path is tested against. */
    public synchronized Route lookupSlow(int dst) {
        Route best = null;
        for (Route r : routes.values()) {
            if ((dst & Ipv4Addr.mask(r.prefixLen())) == r.prefix() && (best == null || r.prefixLen() > best.prefixLen())) {
                best = r;
            }
        }
        return best;
    }

    private synchronized void rebuild() {
        if (!dirty) {
            return;
        }
        Route[] sorted = routes.values().toArray(new Route[0]);
        // Start ascending, then wider first so a covering prefix is pushed before the ones it contains.
        Arrays.sort(sorted, (a, b) -> {
            int c = Integer.compareUnsigned(a.prefix(), b.prefix());
            return c != 0 ? c : Integer.compare(a.prefixLen(), b.prefixLen());
        });
        int cap = 2 * sorted.length + 1;
        long[] bStart = new long[cap];
        Route[] bRoute = new Route[cap];
        int n = 0;
        bStart[n] = 0;
        bRoute[n++] = null;
        Route[] stack = new Route[33];
        int sp = 0;
        for (Route r : sorted) {
            long start = r.prefix() & 0xffff_ffffL;
            while (sp > 0 && end(stack[sp - 1]) < start) {
                Route top = stack[--sp];
                n = emit(bStart, bRoute, n, end(top) + 1, sp > 0 ? stack[sp - 1] : null);
            }
            stack[sp++] = r;
            n = emit(bStart, bRoute, n, start, r);
        }
        while (sp > 0) {
            Route top = stack[--sp];
            long next = end(top) + 1;
            if (next <= 0xffff_ffffL) {
                n = emit(bStart, bRoute, n, next, sp > 0 ? stack[sp - 1] : null);
            }
        }
        int[] starts = new int[n];
        for (int i = 0; i < n; i++) {
            starts[i] = (int) bStart[i] ^ Integer.MIN_VALUE;
        }
        int[] index = null;
        if (n >= INDEX_THRESHOLD) {
            // index[b] = last range starting at or before b << 16; index[65536] = the last range.
            index = new int[65537];
            int r = 0;
            for (int b = 0; b < 65536; b++) {
                long at = (long) b << 16;
                while (r + 1 < n && bStart[r + 1] <= at) {
                    r++;
                }
                index[b] = r;
            }
            index[65536] = n - 1;
            // A bucket's answer lies between its own entry and the next bucket's.
        }
        snapshot = new Snapshot(starts, Arrays.copyOf(bRoute, n), index);
        dirty = false;
    }

    private static long end(Route r) {
        return (r.prefix() & 0xffff_ffffL) + (1L << (32 - r.prefixLen())) - 1;
    }

    private static int emit(long[] starts, Route[] routes, int n, long start, Route r) {
        if (n > 0 && starts[n - 1] == start) {
            routes[n - 1] = r;
            return n;
        }
        if (n > 0 && routes[n - 1] == r) {
            return n;
        }
        starts[n] = start;
        routes[n] = r;
        return n + 1;
    }
}
