package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.NdOption;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Router discovery and stateless address autoconfiguration on a host (RFC 4861 §6.3, RFC 4862), as Linux's
 * ndisc_router_discovery, addrconf_prefix_rcv and its router solicitation timer: router solicitations once the
 * device's link-local address is usable, repeated with RFC 7559's randomised backoff until an advertisement
 * arrives or {@code router_solicitations} are spent; router advertisements, when {@code accept_ra} says so, give a
 * default route through their sender for the router lifetime ({@code accept_ra_defrtr}), the device's hop limit,
 * retransmission and reachable times, the sender's neighbour entry (router flag set), the device's IPv6 MTU
 * ({@code accept_ra_mtu}) and, per prefix option ({@code accept_ra_pinfo}), an on-link route for the valid
 * lifetime and a SLAAC address (prefix + EUI-64 of the MAC, while the device has fewer than {@code max_addresses})
 * that goes through duplicate address detection, is deprecated when its preferred lifetime ends and deleted when
 * its valid lifetime ends. The routes and addresses it made, and their expiry timers, are its own.
 */
public final class RouterDiscovery {
    /** An RS: type, code, checksum, 4 reserved bytes. */
    static final int RS_LEN = 8;
    /** An RA before its options: cur hop limit, flags, router lifetime, reachable time, retrans timer. */
    static final int RA_LEN = 16;
    private static final int LL_OPT_LEN = 8;
    private static final int MTU_OPT_LEN = 8;
    private static final long NANOS_PER_S = 1_000_000_000L;
    private static final long NANOS_PER_MS = 1_000_000L;
    /** RFC 4862 §5.5.3 e): an advertised valid lifetime shorter than this cannot cut a longer remaining one below it. */
    private static final long MIN_VALID_LIFETIME_S = 2 * 3600;
    /** Linux keeps the retransmission time learned from an RA at or above HZ/100. */
    private static final long MIN_RETRANS_MS = 10;

    private final Netns ns;
    private final Ipv6 inet6;
    private final Ndisc ndisc;
    private final Map<Device, Soliciting> soliciting = new IdentityHashMap<>();
    // Default and prefix routes learned from advertisements, each with its expiry (null: infinite lifetime).
    private final Map<Route6, Timeout> learned = new HashMap<>();
    private final Map<Inet6Ifaddr, Timeout> addressExpiry = new HashMap<>();
    private final Map<Inet6Ifaddr, Timeout> addressDeprecation = new HashMap<>();
    private final NdOption opt = new NdOption();

    /** A device's router solicitation state (Linux's rs_probes, rs_interval, rs_timer and IF_RA_RCVD). */
    private static final class Soliciting {
        Timeout timer;
        int probes;
        long intervalNanos;
    }

    RouterDiscovery(Ipv6 inet6, Ndisc ndisc) {
        this.inet6 = inet6;
        this.ndisc = ndisc;
        this.ns = inet6.netns();
    }

    /** ipv6_accept_ra: {@code accept_ra} 1 while not forwarding, or 2 even while forwarding. */
    public static boolean acceptsRa(Netns ns, Device dev) {
        DevConf c = ns.conf(dev);
        long accept = c.get(Ipv6Sysctl.ACCEPT_RA);
        return ns.knobs().effective(Ipv6Sysctl.FORWARDING, c) != 0 ? accept == 2 : accept != 0;
    }

    // ---- router solicitations ----

    /**
     * The device's link-local address became usable (addrconf_dad_completed): the first router solicitation goes
     * at once (duplicate detection was its random delay), the next after {@code router_solicitation_interval}
     * randomised by ±10 %.
     */
    void linkLocalReady(Device dev, Inet6Ifaddr ll) {
        DevConf c = ns.conf(dev);
        if (dev instanceof Loopback || !acceptsRa(ns, dev) || c.get(Ipv6Sysctl.ROUTER_SOLICITATIONS) == 0) {
            return;
        }
        stopSoliciting(dev);
        Soliciting s = new Soliciting();
        soliciting.put(dev, s);
        sendRs(dev, ll);
        s.probes = 1;
        s.intervalNanos = backoffInit(c.get(Ipv6Sysctl.ROUTER_SOLICITATION_INTERVAL) * NANOS_PER_S);
        s.timer = ns.schedule(() -> rsTimer(dev, s), s.intervalNanos);
    }

    /** addrconf_rs_timer: another solicitation while the count allows (-1: no limit), the interval doubling. */
    private void rsTimer(Device dev, Soliciting s) {
        s.timer = null;
        if (soliciting.get(dev) != s) {
            return;
        }
        DevConf c = ns.conf(dev);
        long max = c.get(Ipv6Sysctl.ROUTER_SOLICITATIONS);
        Inet6Ifaddr ll = inet6.addrconf().linkLocal(dev);
        // A device that went down stops soliciting (Linux's addrconf_ifdown stops the timer).
        if (ll == null || !dev.isUp() || !dev.hasCarrier() || !(max < 0 || s.probes < max)) {
            soliciting.remove(dev);
            return;
        }
        s.probes++;
        sendRs(dev, ll);
        s.intervalNanos = backoffUpdate(s.intervalNanos,
                c.get(Ipv6Sysctl.ROUTER_SOLICITATION_MAX_INTERVAL) * NANOS_PER_S);
        long next = s.probes == max ? c.get(Ipv6Sysctl.ROUTER_SOLICITATION_DELAY) * NANOS_PER_S : s.intervalNanos;
        s.timer = ns.schedule(() -> rsTimer(dev, s), Math.max(next, 1));
    }

    /** RFC 3315 §14's first retransmission time: the interval times a random factor in [0.9, 1.1]. */
    private long backoffInit(long intervalNanos) {
        return Math.max(1, intervalNanos / 1_000_000 * (900_000 + ns.randomBelow(200_001)));
    }

    /** RFC 3315 §14's next one: about twice the last, in [1.9, 2.1] times it, capped at the maximum ±10 %. */
    private long backoffUpdate(long lastNanos, long maxNanos) {
        long next = lastNanos / 1_000_000 * (1_900_000 + ns.randomBelow(200_001));
        if (next > maxNanos) {
            next = maxNanos / 1_000_000 * (900_000 + ns.randomBelow(200_001));
        }
        return Math.max(1, next);
    }

    /** ndisc_send_rs: from the link-local address to all routers, with our link-layer address. */
    private void sendRs(Device dev, Inet6Ifaddr ll) {
        Packet r = Ip6Output.allocate(RS_LEN + LL_OPT_LEN);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.ROUTER_SOLICITATION);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        b.setInt(t + Icmpv6Packet.REST, 0);
        NdOption.writeLinkAddress(b, t + RS_LEN, NdOption.SOURCE_LL_ADDR, dev.mac());
        ns.mib().inc(Mib.Icmp6OutRouterSolicits);
        ndisc.transmit(dev, r, ll.address().hi(), ll.address().lo(), Ipv6Addr.ALL_ROUTERS.hi(),
                Ipv6Addr.ALL_ROUTERS.lo(), 0L);
    }

    private void stopSoliciting(Device dev) {
        Soliciting s = soliciting.remove(dev);
        if (s != null && s.timer != null) {
            s.timer.cancel();
        }
    }

    /** Whether router solicitations are still going out on {@code dev}. */
    public boolean soliciting(Device dev) {
        return soliciting.containsKey(dev);
    }

    // ---- router advertisements ----

    /**
     * ndisc_router_discovery, after ndisc's common checks. Does not consume {@code p}; returns why it should be
     * dropped, or null.
     */
    DropReason rcvRa(Packet p, int off, int len, long sh, long sl) {
        ByteBuf b = p.buf();
        Device dev = p.dev();
        if (!Ipv6Addr.isLinkLocalUnicast(sh) || len < RA_LEN) {
            return DropReason.IPV6_NDISC_BAD;
        }
        long mac = 0;
        int mtuAt = -1;
        List<Integer> prefixes = null;
        opt.start(b, off + RA_LEN, off + len);
        while (opt.next()) {
            switch (opt.type()) {
                case NdOption.SOURCE_LL_ADDR -> {
                    mac = opt.linkAddress();
                    if (mac == -1) {
                        return DropReason.IPV6_NDISC_BAD;
                    }
                }
                case NdOption.MTU -> mtuAt = opt.length() == MTU_OPT_LEN ? opt.offset() : mtuAt;
                case NdOption.PREFIX_INFO -> {
                    // A prefix option of another length is skipped, as Linux warns and skips it.
                    if (opt.length() == NdOption.PREFIX_INFO_LEN) {
                        if (prefixes == null) {
                            prefixes = new ArrayList<>(2);
                        }
                        prefixes.add(opt.offset());
                    }
                }
                default -> { }
            }
        }
        if (opt.malformed()) {
            return DropReason.IPV6_NDISC_BAD;
        }
        if (!acceptsRa(ns, dev)) {
            return null;
        }
        // An advertisement ends the solicitations (IF_RA_RCVD).
        stopSoliciting(dev);
        DevConf c = ns.conf(dev);
        int curHopLimit = b.getUnsignedByte(off + 4);
        int lifetime = b.getUnsignedShort(off + 6);
        long reachableMs = b.getUnsignedInt(off + 8);
        long retransMs = b.getUnsignedInt(off + 12);
        // accept_ra_from_local 0: our own advertisement, looped back, makes no default route.
        boolean fromLocal = inet6.addrconf().local(sh, sl) != null;
        if (c.get(Ipv6Sysctl.ACCEPT_RA_DEFRTR) != 0 && !fromLocal) {
            defaultRouter(dev, new Ipv6Addr(sh, sl), lifetime, c.get(Ipv6Sysctl.RA_DEFRTR_METRIC));
            if (curHopLimit != 0 && c.get(Ipv6Sysctl.ACCEPT_RA_MIN_HOP_LIMIT) <= curHopLimit) {
                c.set(Ipv6Sysctl.HOP_LIMIT, curHopLimit);
            }
        }
        if (retransMs != 0) {
            c.set(Ipv6Sysctl.NEIGH.retransTimeMs, Math.max(MIN_RETRANS_MS, retransMs));
        }
        if (reachableMs != 0) {
            c.set(Ipv6Sysctl.NEIGH.baseReachableTimeMs, reachableMs);
        }
        Neighbour n = mac != 0 ? inet6.neigh().eventNs(dev, sh, sl, mac) : inet6.neigh().lookup(dev, sh, sl);
        if (n != null) {
            n.setRouter(true);
        }
        if (prefixes != null && c.get(Ipv6Sysctl.ACCEPT_RA_PINFO) != 0) {
            for (int at : prefixes) {
                prefixRcv(dev, b, at);
            }
        }
        if (mtuAt >= 0 && c.get(Ipv6Sysctl.ACCEPT_RA_MTU) != 0) {
            long mtu = b.getUnsignedInt(mtuAt + 4);
            if (mtu >= 1280 && mtu <= dev.mtu()) {
                c.set(Ipv6Sysctl.MTU, mtu);
            }
        }
        return null;
    }

    /**
     * The default route through {@code gw} on {@code dev}: made for a non-zero router lifetime, its expiry moved
     * to {@code lifetime} seconds from now, removed for a zero lifetime (rt6_add_dflt_router, fib6_set_expires).
     */
    private void defaultRouter(Device dev, Ipv6Addr gw, int lifetime, long metric) {
        Route6 r = new Route6(new Ipv6Addr(0, 0), 0, RouteType.UNICAST, gw, dev, (int) metric, false);
        boolean have = learned.containsKey(r);
        if (lifetime == 0) {
            if (have) {
                forget(r);
            }
            return;
        }
        if (!have) {
            inet6.fib().add(r);
        }
        expireAfter(r, lifetime);
    }

    /**
     * addrconf_prefix_rcv for one prefix information option at {@code o}: the on-link route and the SLAAC
     * address, each as its flag and the lifetimes say.
     */
    private void prefixRcv(Device dev, ByteBuf b, int o) {
        int plen = b.getUnsignedByte(o + 2);
        int flags = b.getUnsignedByte(o + 3);
        long valid = b.getUnsignedInt(o + 4);
        long preferred = b.getUnsignedInt(o + 8);
        long ph = b.getLong(o + 16);
        long pl = b.getLong(o + 24);
        if (plen > 128 || Ipv6Addr.isMulticast(ph) || Ipv6Addr.isLinkLocalUnicast(ph) || preferred > valid) {
            return;
        }
        Ipv6Addr prefix = new Ipv6Addr(ph, pl).prefix(plen);
        if ((flags & NdOption.PREFIX_ON_LINK) != 0) {
            Route6 r = new Route6(prefix, plen, RouteType.UNICAST, null, dev, Route6.METRIC_ADDRCONF, false);
            boolean have = learned.containsKey(r);
            if (valid == 0) {
                if (have) {
                    forget(r);
                }
            } else {
                if (!have) {
                    inet6.fib().add(r);
                }
                expireAfter(r, valid);
            }
        }
        if ((flags & NdOption.PREFIX_AUTONOMOUS) != 0 && ns.conf(dev).get(Ipv6Sysctl.AUTOCONF) != 0) {
            slaac(dev, prefix, plen, valid, preferred);
        }
    }

    /**
     * addrconf_prefix_rcv_add_addr with EUI-64 identifiers: a /64 prefix and the device's MAC make the address; a
     * new one is added (tentative while duplicate detection runs), a known one has its lifetimes renewed, except
     * that an advertised valid lifetime cannot cut the remaining one below two hours (RFC 4862 §5.5.3 e).
     */
    private void slaac(Device dev, Ipv6Addr prefix, int plen, long valid, long preferred) {
        if (plen != 64 || dev.mac() == 0 || ns.conf(dev).get(Ipv6Sysctl.ADDR_GEN_MODE) != 0) {
            return;
        }
        Ipv6Addr address = new Ipv6Addr(prefix.hi(), Ipv6Addr.linkLocalFromMac(dev.mac()).lo());
        Inet6Ifaddr ifa = null;
        for (Inet6Ifaddr a : inet6.addrconf().list(dev)) {
            if (a.address().equals(address)) {
                ifa = a;
            }
        }
        long now = ns.now();
        if (ifa == null) {
            long max = ns.conf(dev).get(Ipv6Sysctl.MAX_ADDRESSES);
            if (valid == 0 || (max != 0 && inet6.addrconf().list(dev).size() >= max)) {
                return;
            }
            ifa = inet6.addrconf().add(dev, address, plen, Inet6Ifaddr.Origin.AUTOCONF, false, inet6.runsDad(dev));
            setLifetimes(ifa, valid, preferred, now);
            if (ifa.state() == Inet6Ifaddr.DadState.TENTATIVE) {
                ndisc.startDad(ifa);
            } else {
                ndisc.addressReady(ifa);
            }
            return;
        }
        if (ifa.origin() != Inet6Ifaddr.Origin.AUTOCONF) {
            return;
        }
        if (ifa.validLft != Inet6Ifaddr.INFINITE_LIFETIME && valid != Inet6Ifaddr.INFINITE_LIFETIME) {
            long remaining = Math.max(0, ifa.validLft - (now - ifa.lifetimesSetNanos) / NANOS_PER_S);
            valid = Math.max(valid, Math.min(remaining, MIN_VALID_LIFETIME_S));
            if (valid == 0) {
                removeAddress(ifa);
                return;
            }
        }
        setLifetimes(ifa, valid, Math.min(preferred, valid), now);
    }

    private void setLifetimes(Inet6Ifaddr ifa, long valid, long preferred, long now) {
        ifa.validLft = valid;
        ifa.preferredLft = preferred;
        ifa.lifetimesSetNanos = now;
        Timeout old = addressExpiry.remove(ifa);
        if (old != null) {
            old.cancel();
        }
        if (valid != Inet6Ifaddr.INFINITE_LIFETIME) {
            addressExpiry.put(ifa, ns.schedule(() -> removeAddress(ifa), valid * NANOS_PER_S));
        }
        Timeout oldDeprecation = addressDeprecation.remove(ifa);
        if (oldDeprecation != null) {
            oldDeprecation.cancel();
        }
        ifa.deprecated = preferred == 0;
        if (preferred != 0 && preferred != Inet6Ifaddr.INFINITE_LIFETIME) {
            addressDeprecation.put(ifa, ns.schedule(() -> {
                addressDeprecation.remove(ifa);
                ifa.deprecated = true;
            }, preferred * NANOS_PER_S));
        }
    }

    /** A SLAAC address whose valid lifetime ended, or whose duplicate detection failed, is deleted. */
    void removeAddress(Inet6Ifaddr ifa) {
        Timeout t = addressExpiry.remove(ifa);
        if (t != null) {
            t.cancel();
        }
        Timeout d = addressDeprecation.remove(ifa);
        if (d != null) {
            d.cancel();
        }
        inet6.addrconf().remove(ifa.dev(), ifa.address());
    }

    private void expireAfter(Route6 r, long lifetimeS) {
        Timeout old = learned.get(r);
        if (old != null) {
            old.cancel();
        }
        Timeout t = lifetimeS == Inet6Ifaddr.INFINITE_LIFETIME ? null
                : ns.schedule(() -> forget(r), lifetimeS * NANOS_PER_S);
        learned.put(r, t);
    }

    private void forget(Route6 r) {
        Timeout t = learned.remove(r);
        if (t != null) {
            t.cancel();
        }
        inet6.fib().removeExact(r);
    }

    /**
     * rt6_clean_tohost: {@code gw} (an NA's source) advertised itself without the router flag, so the default
     * routes learned from its advertisements go.
     */
    void routerBecameHost(long gwHi, long gwLo) {
        for (Route6 r : List.copyOf(learned.keySet())) {
            if (r.prefixLen() == 0 && r.gateway() != null && r.gateway().hi() == gwHi && r.gateway().lo() == gwLo) {
                forget(r);
            }
        }
    }

    /** The routes learned from advertisements, for tests and {@code ip -6 route}'s {@code proto ra}. */
    public List<Route6> learnedRoutes() {
        return List.copyOf(learned.keySet());
    }

    /** The namespace closes: solicitation and expiry timers stop. */
    void close() {
        for (Soliciting s : soliciting.values()) {
            if (s.timer != null) {
                s.timer.cancel();
            }
        }
        soliciting.clear();
        for (Timeout t : learned.values()) {
            if (t != null) {
                t.cancel();
            }
        }
        learned.clear();
        addressExpiry.values().forEach(Timeout::cancel);
        addressExpiry.clear();
        addressDeprecation.values().forEach(Timeout::cancel);
        addressDeprecation.clear();
    }
}
