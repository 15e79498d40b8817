package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.NdOption;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * usnet's router advertisement daemon (the part of RFC 4861 §6.2 Linux leaves to radvd), per device when
 * {@code usnet.ipv6.ra.<dev>.send} is 1: unsolicited advertisements to all nodes from the device's link-local
 * address, the first as soon as that address is usable, then every random interval between
 * {@code min_interval} and {@code max_interval} (at most 16 s apart for the first three); a router solicitation
 * is answered by a multicast advertisement after a random delay below 0.5 s, but never sooner than 3 s after the
 * last one. Each carries the knobs' current hop limit, M and O flags, router lifetime, reachable time and
 * retransmission timer, our link-layer address, the MTU when {@code mtu} is set, and a prefix option for each
 * prefix of the device's global addresses with the knobs' flags and lifetimes. Received solicitations also update
 * the sender's neighbour entry on a forwarding device (ndisc_recv_rs).
 */
public final class RouterAdvertiser {
    private static final long NANOS_PER_S = 1_000_000_000L;
    private static final long MAX_INITIAL_RTR_ADVERT_INTERVAL = 16 * NANOS_PER_S;
    private static final int MAX_INITIAL_RTR_ADVERTISEMENTS = 3;
    private static final long MIN_DELAY_BETWEEN_RAS = 3 * NANOS_PER_S;
    private static final long MAX_RA_DELAY_TIME = NANOS_PER_S / 2;
    private static final int LL_OPT_LEN = 8;
    private static final int MTU_OPT_LEN = 8;
    private static final int RA_MANAGED = 0x80;
    private static final int RA_OTHER_CONFIG = 0x40;

    private final Netns ns;
    private final Ipv6 inet6;
    private final Ndisc ndisc;
    private final Map<Device, Advertising> advertising = new IdentityHashMap<>();
    private final NdOption opt = new NdOption();

    private static final class Advertising {
        Timeout timer;
        long nextAt;
        long lastSent = Long.MIN_VALUE;
        int sent;
    }

    RouterAdvertiser(Ipv6 inet6, Ndisc ndisc) {
        this.inet6 = inet6;
        this.ndisc = ndisc;
        this.ns = inet6.netns();
    }

    /** The device's link-local address became usable: advertising starts when the device's knob says so. */
    void linkLocalReady(Device dev) {
        if (ns.conf(dev).get(Ipv6Sysctl.RA_SEND) == 0 || advertising.containsKey(dev)) {
            return;
        }
        Advertising a = new Advertising();
        advertising.put(dev, a);
        schedule(dev, a, 0);
    }

    /** Whether {@code dev} is sending advertisements. */
    public boolean advertising(Device dev) {
        return advertising.containsKey(dev);
    }

    private void schedule(Device dev, Advertising a, long delay) {
        if (a.timer != null) {
            a.timer.cancel();
        }
        a.nextAt = ns.now() + delay;
        a.timer = ns.schedule(() -> fire(dev, a), delay);
    }

    private void fire(Device dev, Advertising a) {
        a.timer = null;
        if (advertising.get(dev) != a) {
            return;
        }
        DevConf c = ns.conf(dev);
        if (c.get(Ipv6Sysctl.RA_SEND) == 0) {
            advertising.remove(dev);
            return;
        }
        if (!dev.isUp() || !dev.hasCarrier()) {
            // Nothing goes out of a device that is down; the advertisements go on when it is up again.
            schedule(dev, a, c.get(Ipv6Sysctl.RA_MAX_INTERVAL) * NANOS_PER_S);
            return;
        }
        sendRa(dev, c);
        a.sent++;
        a.lastSent = ns.now();
        long max = c.get(Ipv6Sysctl.RA_MAX_INTERVAL) * NANOS_PER_S;
        long minS = c.get(Ipv6Sysctl.RA_MIN_INTERVAL);
        long min = minS == 0 ? max / 3 : Math.min(minS * NANOS_PER_S, max * 3 / 4);
        long interval = min + ns.randomBelow(max - min + 1);
        if (a.sent < MAX_INITIAL_RTR_ADVERTISEMENTS) {
            interval = Math.min(interval, MAX_INITIAL_RTR_ADVERT_INTERVAL);
        }
        schedule(dev, a, interval);
    }

    /**
     * A router solicitation (ndisc_recv_rs), after ndisc's common checks. Does not consume {@code p}; returns why
     * it should be dropped, or null.
     */
    DropReason rcvRs(Packet p, int off, int len, long sh, long sl) {
        ByteBuf b = p.buf();
        Device dev = p.dev();
        if (len < RouterDiscovery.RS_LEN) {
            return DropReason.IPV6_NDISC_BAD;
        }
        long mac = 0;
        opt.start(b, off + RouterDiscovery.RS_LEN, off + len);
        while (opt.next()) {
            if (opt.type() == NdOption.SOURCE_LL_ADDR) {
                mac = opt.linkAddress();
            }
        }
        boolean unspecified = sh == 0 && sl == 0;
        if (opt.malformed() || mac == -1 || (unspecified && mac != 0)) {
            return DropReason.IPV6_NDISC_BAD;
        }
        if (ns.knobs().effective(Ipv6Sysctl.FORWARDING, ns.conf(dev)) == 0) {
            return null;
        }
        if (mac != 0) {
            inet6.neigh().eventNs(dev, sh, sl, mac);
        }
        Advertising a = advertising.get(dev);
        if (a != null) {
            long now = ns.now();
            long at = now + ns.randomBelow(MAX_RA_DELAY_TIME + 1);
            if (a.lastSent != Long.MIN_VALUE) {
                at = Math.max(at, a.lastSent + MIN_DELAY_BETWEEN_RAS);
            }
            if (at < a.nextAt) {
                schedule(dev, a, at - now);
            }
        }
        return null;
    }

    /** One advertisement out of {@code dev} to all nodes, as the knobs and the device's addresses say. */
    private void sendRa(Device dev, DevConf c) {
        Inet6Ifaddr ll = inet6.addrconf().linkLocal(dev);
        if (ll == null) {
            return;
        }
        List<Inet6Ifaddr> prefixes = new ArrayList<>();
        for (Inet6Ifaddr a : inet6.addrconf().list(dev)) {
            if (a.address().isLinkLocal() || a.address().isLoopback() || a.prefixLen() >= 128
                    || a.state() == Inet6Ifaddr.DadState.FAILED || samePrefixListed(prefixes, a)) {
                continue;
            }
            prefixes.add(a);
        }
        long mtu = c.get(Ipv6Sysctl.RA_MTU);
        int len = RouterDiscovery.RA_LEN + LL_OPT_LEN + (mtu != 0 ? MTU_OPT_LEN : 0)
                + prefixes.size() * NdOption.PREFIX_INFO_LEN;
        Packet r = Ip6Output.allocate(len);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.ROUTER_ADVERTISEMENT);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        b.setByte(t + 4, (int) c.get(Ipv6Sysctl.RA_CUR_HOP_LIMIT));
        b.setByte(t + 5, (c.get(Ipv6Sysctl.RA_MANAGED) != 0 ? RA_MANAGED : 0)
                | (c.get(Ipv6Sysctl.RA_OTHER_CONFIG) != 0 ? RA_OTHER_CONFIG : 0));
        b.setShort(t + 6, (int) c.get(Ipv6Sysctl.RA_ROUTER_LIFETIME));
        b.setInt(t + 8, (int) c.get(Ipv6Sysctl.RA_REACHABLE_TIME_MS));
        b.setInt(t + 12, (int) c.get(Ipv6Sysctl.RA_RETRANS_TIMER_MS));
        int o = t + RouterDiscovery.RA_LEN;
        NdOption.writeLinkAddress(b, o, NdOption.SOURCE_LL_ADDR, dev.mac());
        o += LL_OPT_LEN;
        if (mtu != 0) {
            b.setByte(o, NdOption.MTU);
            b.setByte(o + 1, 1);
            b.setShort(o + 2, 0);
            b.setInt(o + 4, (int) mtu);
            o += MTU_OPT_LEN;
        }
        int flags = (c.get(Ipv6Sysctl.RA_PREFIX_ON_LINK) != 0 ? NdOption.PREFIX_ON_LINK : 0)
                | (c.get(Ipv6Sysctl.RA_PREFIX_AUTONOMOUS) != 0 ? NdOption.PREFIX_AUTONOMOUS : 0);
        for (Inet6Ifaddr a : prefixes) {
            Ipv6Addr prefix = a.address().prefix(a.prefixLen());
            b.setByte(o, NdOption.PREFIX_INFO);
            b.setByte(o + 1, NdOption.PREFIX_INFO_LEN / 8);
            b.setByte(o + 2, a.prefixLen());
            b.setByte(o + 3, flags);
            b.setInt(o + 4, (int) c.get(Ipv6Sysctl.RA_PREFIX_VALID_LIFETIME));
            b.setInt(o + 8, (int) c.get(Ipv6Sysctl.RA_PREFIX_PREFERRED_LIFETIME));
            b.setInt(o + 12, 0);
            b.setLong(o + 16, prefix.hi());
            b.setLong(o + 24, prefix.lo());
            o += NdOption.PREFIX_INFO_LEN;
        }
        ns.mib().inc(Mib.Icmp6OutRouterAdvertisements);
        ndisc.transmit(dev, r, ll.address().hi(), ll.address().lo(), Ipv6Addr.ALL_NODES.hi(),
                Ipv6Addr.ALL_NODES.lo(), 0L);
    }

    private static boolean samePrefixListed(List<Inet6Ifaddr> listed, Inet6Ifaddr a) {
        for (Inet6Ifaddr l : listed) {
            if (l.prefixLen() == a.prefixLen() && l.onLink(a.address().hi(), a.address().lo())) {
                return true;
            }
        }
        return false;
    }

    /** The namespace closes: advertising stops. */
    void close() {
        for (Advertising a : advertising.values()) {
            if (a.timer != null) {
                a.timer.cancel();
            }
        }
        advertising.clear();
    }
}
