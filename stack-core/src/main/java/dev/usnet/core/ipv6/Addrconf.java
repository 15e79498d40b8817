package dev.usnet.core.ipv6;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv6.Inet6Ifaddr.DadState;
import dev.usnet.core.ipv6.Inet6Ifaddr.Origin;
import dev.usnet.core.route.Fib6;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.wire.Ipv6Addr;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The IPv6 addresses of one namespace (Linux addrconf.c, the address half): per-device address lists, the
 * local-address lookup the receive path asks for every packet, the prefix routes addresses create, link-local
 * addresses made when a device comes up, and source address selection (RFC 6724). Duplicate address detection's
 * messages and timers belong to neighbour discovery; this class keeps each address's state and is told the outcome.
 */
public final class Addrconf {
    /** The prefix length of a link-local address and of the fe80::/64 route every IPv6 device has. */
    public static final int LINK_LOCAL_PREFIX_LEN = 64;

    private final Fib6 fib;
    private final LinkedHashSet<Inet6Ifaddr> addrs = new LinkedHashSet<>();
    private final Map<Device, List<Inet6Ifaddr>> byDevice = new IdentityHashMap<>();
    // Replaced whole after a change, never changed in place, and made by the first lookup after one (a namespace
    // given thousands of addresses in a row would otherwise rebuild it for each). The table is open addressing over
    // the two halves of each address, power-of-two sized and at most half full, so a lookup allocates nothing.
    private volatile Snapshot snapshot = Snapshot.EMPTY;
    private volatile boolean stale;

    private record Snapshot(Inet6Ifaddr[] all, long[] keyHi, long[] keyLo, Inet6Ifaddr[] slots) {
        static final Snapshot EMPTY = new Snapshot(new Inet6Ifaddr[0], new long[1], new long[1], new Inet6Ifaddr[1]);
    }

    public Addrconf(Fib6 fib) {
        this.fib = fib;
    }

    /**
     * {@code ip -6 addr add ADDR/LEN dev DEV [nodad]}: adds the address, tentative when {@code runDad} (duplicate
     * address detection is on for the device and the address did not say nodad), else preferred at once; and, below
     * /128, its prefix route (metric 256, as addrconf_prefix_route). Refuses multicast and unspecified addresses and a
     * duplicate on the device, as Linux does.
     */
    public synchronized Inet6Ifaddr add(Device dev, Ipv6Addr address, int prefixLen, Origin origin, boolean nodad,
                                        boolean runDad) {
        if (prefixLen < 0 || prefixLen > 128) {
            throw new IllegalArgumentException("prefix length " + prefixLen + " out of range 0..128");
        }
        if (address.isMulticast() || address.isUnspecified()) {
            throw new IllegalArgumentException(address + " cannot be an interface address (RTNETLINK: Cannot assign requested address)");
        }
        for (Inet6Ifaddr a : byDevice.getOrDefault(dev, List.of())) {
            if (a.address().equals(address)) {
                throw new IllegalArgumentException(address + " already on " + dev.name() + " (RTNETLINK: File exists)");
            }
        }
        boolean dad = runDad && !nodad;
        Inet6Ifaddr ifa = new Inet6Ifaddr(dev, address, prefixLen, origin, nodad,
                dad ? DadState.TENTATIVE : DadState.PREFERRED);
        addrs.add(ifa);
        byDevice.computeIfAbsent(dev, d -> new ArrayList<>(2)).add(ifa);
        // A SLAAC address makes no prefix route: the prefix's on-link flag does (addrconf_prefix_rcv).
        if (prefixLen < 128 && origin != Origin.AUTOCONF && !hasPrefixRoute(dev, address, prefixLen)) {
            fib.add(new Route6(address, prefixLen, RouteType.UNICAST, null, dev, Route6.METRIC_ADDRCONF, true));
        }
        stale = true;
        return ifa;
    }

    /**
     * NETDEV_UP for IPv6 (addrconf_dev_config): the device's link-local address made from its MAC as modified
     * EUI-64 ({@code addr_gen_mode} 0), or {@code ::1/128} on the loopback. Null when the device already has a
     * link-local address or has no MAC to make one from.
     */
    public synchronized Inet6Ifaddr linkUp(Device dev, boolean loopback, long mac, boolean runDad) {
        if (loopback) {
            return hasAddress(dev, Ipv6Addr.LOOPBACK) ? null
                    : add(dev, Ipv6Addr.LOOPBACK, 128, Origin.STATIC, true, false);
        }
        for (Inet6Ifaddr a : byDevice.getOrDefault(dev, List.of())) {
            if (a.address().isLinkLocal()) {
                return null;
            }
        }
        if (mac == 0) {
            return null;
        }
        return add(dev, Ipv6Addr.linkLocalFromMac(mac), LINK_LOCAL_PREFIX_LEN, Origin.LINK_LOCAL, false, runDad);
    }

    private boolean hasPrefixRoute(Device dev, Ipv6Addr address, int prefixLen) {
        for (Route6 r : fib.getAll(address, prefixLen)) {
            if (r.connected() && r.dev() == dev) {
                return true;
            }
        }
        return false;
    }

    private boolean hasAddress(Device dev, Ipv6Addr a) {
        for (Inet6Ifaddr x : byDevice.getOrDefault(dev, List.of())) {
            if (x.address().equals(a)) {
                return true;
            }
        }
        return false;
    }

    /** {@code ip -6 addr del}: removes the address and the prefix route it made when no other address keeps it. */
    public synchronized boolean remove(Device dev, Ipv6Addr address) {
        Inet6Ifaddr found = null;
        for (Inet6Ifaddr a : byDevice.getOrDefault(dev, List.of())) {
            if (a.address().equals(address)) {
                found = a;
            }
        }
        if (found == null) {
            return false;
        }
        addrs.remove(found);
        List<Inet6Ifaddr> own = byDevice.get(dev);
        own.remove(found);
        if (own.isEmpty()) {
            byDevice.remove(dev);
        }
        if (found.prefixLen() < 128 && found.origin() != Origin.AUTOCONF && !prefixStillOn(dev, found)) {
            fib.removeConnected(found.address(), found.prefixLen(), dev);
        }
        stale = true;
        return true;
    }

    private boolean prefixStillOn(Device dev, Inet6Ifaddr gone) {
        for (Inet6Ifaddr a : byDevice.getOrDefault(dev, List.of())) {
            if (a.prefixLen() == gone.prefixLen() && gone.onLink(a.address().hi(), a.address().lo())) {
                return true;
            }
        }
        return false;
    }

    /** Drops every address of {@code dev} and its routes (the device left the namespace or was deleted). */
    public synchronized void flush(Device dev) {
        List<Inet6Ifaddr> own = byDevice.remove(dev);
        if (own != null) {
            own.forEach(addrs::remove);
            stale = true;
        }
        fib.removeDevice(dev);
    }

    /** Duplicate address detection passed: the address becomes usable. */
    public void dadSucceeded(Inet6Ifaddr ifa) {
        if (ifa.state == DadState.TENTATIVE) {
            ifa.state = DadState.PREFERRED;
        }
    }

    /** Another node has the address (addrconf_dad_failure): it stays unusable, as {@code dadfailed}. */
    public void dadFailed(Inet6Ifaddr ifa) {
        ifa.state = DadState.FAILED;
    }

    private Snapshot current() {
        if (stale) {
            publish();
        }
        return snapshot;
    }

    private synchronized void publish() {
        if (!stale) {
            return;
        }
        Inet6Ifaddr[] all = addrs.toArray(new Inet6Ifaddr[0]);
        int cap = Integer.highestOneBit(Math.max(2, all.length * 2 - 1)) << 1;
        long[] kh = new long[cap];
        long[] kl = new long[cap];
        Inet6Ifaddr[] slots = new Inet6Ifaddr[cap];
        for (Inet6Ifaddr a : all) {
            long h = a.address().hi();
            long l = a.address().lo();
            int slot = hash(h, l) & (cap - 1);
            boolean dup = false;
            while (slots[slot] != null) {
                // The first added of an address that sits on two devices answers, as the oldest inet6_ifaddr does.
                if (kh[slot] == h && kl[slot] == l) {
                    dup = true;
                    break;
                }
                slot = (slot + 1) & (cap - 1);
            }
            if (!dup) {
                kh[slot] = h;
                kl[slot] = l;
                slots[slot] = a;
            }
        }
        snapshot = new Snapshot(all, kh, kl, slots);
        stale = false;
    }

    private static int hash(long hi, long lo) {
        long x = (hi * 0x9E3779B97F4A7C15L) ^ (lo * 0xC2B2AE3D27D4EB4FL);
        return (int) (x ^ (x >>> 29) ^ (x >>> 41));
    }

    /**
     * The address entry when {@code hi}/{@code lo} is one of this namespace's own unicast addresses, in whatever
     * state (ipv6_chk_addr with tentative ones included: the caller decides what a tentative one means), or null.
     */
    public Inet6Ifaddr local(long hi, long lo) {
        Snapshot s = current();
        long[] kh = s.keyHi;
        long[] kl = s.keyLo;
        Inet6Ifaddr[] slots = s.slots;
        int mask = slots.length - 1;
        for (int slot = hash(hi, lo) & mask; slots[slot] != null; slot = (slot + 1) & mask) {
            if (kh[slot] == hi && kl[slot] == lo) {
                return slots[slot];
            }
        }
        return null;
    }

    /** Whether {@code hi}/{@code lo} is one of our addresses and usable (not tentative, not failed). */
    public boolean isLocal(long hi, long lo) {
        Inet6Ifaddr a = local(hi, lo);
        return a != null && a.preferred();
    }

    public synchronized List<Inet6Ifaddr> list() {
        return List.copyOf(addrs);
    }

    public synchronized List<Inet6Ifaddr> list(Device dev) {
        return new ArrayList<>(byDevice.getOrDefault(dev, List.of()));
    }

    /**
     * Whether {@code dev} has an address, in any state, whose solicited-node group is the one ending in the low 24
     * bits of {@code groupLo} (the node joined it when the address was added).
     */
    public boolean hasSolicitedNode(Device dev, long groupLo) {
        for (Inet6Ifaddr a : current().all) {
            if (a.dev() == dev && a.state() != Inet6Ifaddr.DadState.FAILED
                    && ((a.address().lo() ^ groupLo) & 0xff_ffffL) == 0) {
                return true;
            }
        }
        return false;
    }

    /** The device's link-local address that is usable, or null (ipv6_get_lladdr). */
    public Inet6Ifaddr linkLocal(Device dev) {
        for (Inet6Ifaddr a : current().all) {
            if (a.dev() == dev && a.address().isLinkLocal() && a.preferred()) {
                return a;
            }
        }
        return null;
    }

    /**
     * ipv6_dev_get_saddr, the rules of RFC 6724 §5 that apply here: among usable addresses, the destination itself
     * (rule 1); an address whose scope covers the destination's, the smallest such (rule 2); one not deprecated
     * (rule 3); one on the outgoing device (rule 5); the longest prefix shared with the destination (rule 8); then the first added. Link-local
     * destinations take only addresses of {@code dev}. Null when no address qualifies.
     */
    public Inet6Ifaddr selectSource(Device dev, long dstHi, long dstLo) {
        int dstScope = scopeOf(dstHi, dstLo);
        Inet6Ifaddr best = null;
        for (Inet6Ifaddr a : current().all) {
            if (!a.preferred()) {
                continue;
            }
            long ah = a.address().hi();
            long al = a.address().lo();
            if (ah == dstHi && al == dstLo) {
                return a;
            }
            int scope = scopeOf(ah, al);
            if (dstScope <= Ipv6Addr.SCOPE_LINK_LOCAL && a.dev() != dev) {
                continue;
            }
            if (a.address().isLoopback() && dstScope != Ipv6Addr.SCOPE_INTERFACE_LOCAL) {
                continue;
            }
            if (best == null || better(a, scope, best, dev, dstScope, dstHi, dstLo)) {
                best = a;
            }
        }
        return best;
    }

    private static boolean better(Inet6Ifaddr a, int scope, Inet6Ifaddr b, Device dev, int dstScope, long dh, long dl) {
        int bScope = scopeOf(b.address().hi(), b.address().lo());
        boolean aCovers = scope >= dstScope;
        boolean bCovers = bScope >= dstScope;
        if (aCovers != bCovers) {
            return aCovers;
        }
        if (scope != bScope) {
            return aCovers ? scope < bScope : scope > bScope;
        }
        if (a.deprecated != b.deprecated) {
            // Rule 3: avoid deprecated addresses (a SLAAC address past its preferred lifetime).
            return !a.deprecated;
        }
        boolean aOut = a.dev() == dev;
        boolean bOut = b.dev() == dev;
        if (aOut != bOut) {
            return aOut;
        }
        return commonPrefix(a.address(), dh, dl) > commonPrefix(b.address(), dh, dl);
    }

    private static int commonPrefix(Ipv6Addr a, long hi, long lo) {
        long x = a.hi() ^ hi;
        return x != 0 ? Long.numberOfLeadingZeros(x) : 64 + Long.numberOfLeadingZeros(a.lo() ^ lo);
    }

    /** The scope of a unicast or multicast address as RFC 6724 §3.1 orders them (interface < link < global). */
    static int scopeOf(long hi, long lo) {
        if (Ipv6Addr.isMulticast(hi)) {
            return Ipv6Addr.multicastScope(hi);
        }
        if (hi == 0 && lo == 1) {
            return Ipv6Addr.SCOPE_INTERFACE_LOCAL;
        }
        if (Ipv6Addr.isLinkLocalUnicast(hi)) {
            return Ipv6Addr.SCOPE_LINK_LOCAL;
        }
        return Ipv6Addr.SCOPE_GLOBAL;
    }
}
