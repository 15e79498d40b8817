package dev.usnet.core.ipv4;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.device.Device;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.Fib4;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.util.collection.IntObjectHashMap;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The IPv4 addresses of one namespace (Linux devinet.c): per-device address lists, the local-address table
 * consulted before the main FIB, connected routes, and source address selection.
 */
public final class Devinet {
    private final Fib4 main;
    // Every address in the order added (the order source selection and the lookups see), and each device's: the
    // changes of one device cost its own addresses, not the namespace's (a router with a /30 per host has
    // thousands).
    private final LinkedHashSet<IfAddr> addrs = new LinkedHashSet<>();
    private final Map<Device, List<IfAddr>> byDevice = new IdentityHashMap<>();
    /** Up to this many addresses the lookups scan {@link #snapshot} (as fast as a hash, and nothing more to hold). */
    static final int SCAN_MAX = 8;
    private static final IfAddr[] NO_ADDRS = new IfAddr[0];
    // Replaced whole after a change, never changed in place; the maps only for more than SCAN_MAX addresses.
    // Made by the first lookup after a change, not by the change: a namespace given thousands of addresses in a
    // row (a router with a /30 per host) would otherwise rebuild them for each, quadratic in the addresses.
    private volatile IfAddr[] snapshot = NO_ADDRS;
    private volatile boolean stale;
    private volatile IntObjectHashMap<IfAddr> local;
    private volatile IntObjectHashMap<IfAddr> broadcasts;

    private final List<InetAddrListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    public Devinet(Fib4 main) {
        this.main = main;
    }

    /** register_inetaddr_notifier: {@code l} hears of every address removed from now on. */
    public void addListener(InetAddrListener l) {
        listeners.add(l);
    }

    private void removed(List<IfAddr> gone) {
        for (IfAddr a : gone) {
            for (InetAddrListener l : listeners) {
                l.addressRemoved(a.dev(), a.address());
            }
        }
    }

    /** {@code ip addr add ADDR/LEN dev DEV}: adds the address and, for LEN < 32, its connected route. */
    public synchronized IfAddr add(Device dev, int address, int prefixLen) {
        if (prefixLen < 0 || prefixLen > 32) {
            throw new IllegalArgumentException("prefix length " + prefixLen + " out of range 0..32");
        }
        List<IfAddr> own = byDevice.getOrDefault(dev, List.of());
        for (IfAddr a : own) {
            if (a.address() == address) {
                throw new IllegalArgumentException(Ipv4Addr.format(address) + " already on " + dev.name() + " (RTNETLINK: File exists)");
            }
        }
        int mask = Ipv4Addr.mask(prefixLen);
        boolean secondary = false;
        for (IfAddr a : own) {
            if (a.prefixLen() == prefixLen && a.network() == (address & mask)) {
                secondary = true;
            }
        }
        int brd = prefixLen >= 31 ? 0 : (address | ~mask);
        IfAddr ifa = new IfAddr(dev, address, prefixLen, brd, secondary);
        addrs.add(ifa);
        byDevice.computeIfAbsent(dev, d -> new ArrayList<>(1)).add(ifa);
        if (prefixLen < 32 && !secondary) {
            main.add(new Route(address, prefixLen, RouteType.UNICAST, 0, dev, address, 0, true));
        }
        stale = true;
        return ifa;
    }

    public synchronized boolean remove(Device dev, int address) {
        IfAddr found = null;
        for (IfAddr a : byDevice.getOrDefault(dev, List.of())) {
            if (a.address() == address) {
                found = a;
            }
        }
        if (found == null) {
            return false;
        }
        addrs.remove(found);
        List<IfAddr> own = byDevice.get(dev);
        own.remove(found);
        if (own.isEmpty()) {
            byDevice.remove(dev);
        }
        if (!found.secondary()) {
            main.removeConnected(found.network(), found.prefixLen(), dev);
        }
        stale = true;
        removed(List.of(found));
        return true;
    }

    /** Drops every address of {@code dev} (device moved to another namespace or deleted). */
    public synchronized void flush(Device dev) {
        // Only a change marks the lookups stale: a namespace deleting thousands of address-less bridge ports would
        // otherwise have them rebuilt after each.
        List<IfAddr> own = byDevice.remove(dev);
        if (own != null) {
            addrs.removeAll(own);
            stale = true;
        }
        main.removeDevice(dev);
        if (own != null) {
            removed(own);
        }
    }

    /** The addresses as of the last change: published first when a change since left them stale. */
    private IfAddr[] current() {
        if (stale) {
            publish();
        }
        return snapshot;
    }

    private synchronized void publish() {
        if (!stale) {
            return;
        }
        IntObjectHashMap<IfAddr> l = null;
        IntObjectHashMap<IfAddr> b = null;
        if (addrs.size() > SCAN_MAX) {
            l = new IntObjectHashMap<>(addrs.size());
            b = new IntObjectHashMap<>(addrs.size());
            for (IfAddr a : addrs) {
                l.putIfAbsent(spread(a.address()), a);
                if (a.broadcast() != 0) {
                    b.putIfAbsent(spread(a.broadcast()), a);
                }
            }
        }
        // The snapshot last: a reader that sees a short one finds no maps it should have used.
        local = l;
        broadcasts = b;
        snapshot = addrs.isEmpty() ? NO_ADDRS : addrs.toArray(new IfAddr[0]);
        stale = false;
    }

    /** The address entry when {@code a} is one of this namespace's own addresses (RTN_LOCAL); the first added wins. */
    public IfAddr local(int a) {
        IfAddr[] s = current();
        if (s.length > SCAN_MAX) {
            IntObjectHashMap<IfAddr> l = local;
            if (l != null) {
                return l.get(spread(a));
            }
        }
        for (IfAddr ifa : s) {
            if (ifa.address() == a) {
                return ifa;
            }
        }
        return null;
    }

    public boolean isLocal(int a) {
        return local(a) != null;
    }

    /** True when {@code a} is the broadcast address of a subnet on {@code dev} (a broadcast route there). */
    public boolean isBroadcastOn(Device dev, int a) {
        if (a == Ipv4Addr.LIMITED_BROADCAST) {
            return true;
        }
        IfAddr[] s = current();
        if (s.length > SCAN_MAX) {
            // Asked for every frame sent (is the next hop a broadcast?): with many addresses (a router with a link
            // per host) a scan of them all was the frame's largest cost. No address has it as broadcast: not one.
            IntObjectHashMap<IfAddr> b = broadcasts;
            if (b != null && !b.containsKey(spread(a))) {
                return false;
            }
        }
        for (IfAddr ifa : s) {
            if (ifa.dev() == dev && ifa.broadcast() == a) {
                return true;
            }
        }
        return false;
    }

    /** A subnet broadcast address of one of our addresses (RTN_BROADCAST). */
    public boolean isBroadcast(int a) {
        if (a == Ipv4Addr.LIMITED_BROADCAST) {
            return true;
        }
        IfAddr[] s = current();
        if (s.length > SCAN_MAX) {
            IntObjectHashMap<IfAddr> b = broadcasts;
            if (b != null) {
                return b.containsKey(spread(a));
            }
        }
        for (IfAddr ifa : s) {
            if (ifa.broadcast() == a && a != 0) {
                return true;
            }
        }
        return false;
    }

    public synchronized List<IfAddr> list() {
        return List.copyOf(addrs);
    }

    public synchronized List<IfAddr> list(Device dev) {
        return new ArrayList<>(byDevice.getOrDefault(dev, List.of()));
    }

    /**
     * inet_select_addr: the source address for talking to {@code dst} out of {@code dev}: a primary address of
     * the device on {@code dst}'s subnet, else the device's first primary address, else any address in the
     * namespace (loopback's last). 0 when the namespace has none.
     */
    public int selectSource(Device dev, int dst) {
        IfAddr first = null;
        IfAddr[] snapshot = current();
        for (IfAddr a : snapshot) {
            if (a.dev() != dev || a.secondary()) {
                continue;
            }
            if (dst != 0 && a.onLink(dst)) {
                return a.address();
            }
            if (first == null) {
                first = a;
            }
        }
        if (first != null) {
            return first.address();
        }
        for (IfAddr a : snapshot) {
            if (!Ipv4Addr.isLoopback(a.address()) && !a.secondary()) {
                return a.address();
            }
        }
        return snapshot.length == 0 ? 0 : snapshot[0].address();
    }

    /** inet_addr_onlink: {@code a} and {@code b} both lie on one subnet of {@code dev}. */
    public boolean onLink(Device dev, int a, int b) {
        for (IfAddr ifa : current()) {
            if (ifa.dev() == dev && ifa.onLink(a) && (b == 0 || ifa.onLink(b))) {
                return true;
            }
        }
        return false;
    }
}
