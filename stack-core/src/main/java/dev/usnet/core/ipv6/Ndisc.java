package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.NeighOps;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.NdOption;
import io.netty.buffer.ByteBuf;
import java.util.HashMap;
import java.util.Map;

/**
 * Neighbour discovery (RFC 4861) as Linux's ndisc: the neighbour table's operations for IPv6 (solicitations to the
 * solicited-node group, unicast probes, address unreachable for what waited in vain), receiving solicitations and
 * advertisements after RFC 4861's validation (hop limit 255, code 0, lengths, options), answering solicitations for
 * our addresses (router flag while forwarding), advertisements updating entries as their solicited and override
 * flags say (and the entry's router flag as their R flag says), redirects for packets leaving by the link they came
 * in on, duplicate address detection for tentative addresses and what follows when an address becomes usable.
 * Router solicitations and advertisements go to its two router discovery parts, {@link RouterDiscovery} (a host's)
 * and {@link RouterAdvertiser} (usnet's advertisement daemon).
 */
public final class Ndisc implements NeighOps {
    private static final int ND_MSG_LEN = 24;
    private static final int LL_OPT_LEN = 8;
    private static final int ND_HOP_LIMIT = 255;
    /** The nonce option of duplicate detection's probes (RFC 7527): type 14, 8 bytes with a 6-byte nonce. */
    private static final int ND_OPT_NONCE = 14;
    private static final int NONCE_OPT_LEN = 8;
    private static final int NA_ROUTER = 0x8000_0000;
    private static final int NA_SOLICITED = 0x4000_0000;
    private static final int NA_OVERRIDE = 0x2000_0000;
    private static final int RD_MSG_LEN = 40;
    private static final long SOLICITED_NODE_HI = 0xff02_0000_0000_0000L;
    private static final long SOLICITED_NODE_LO = 0x0000_0001_ff00_0000L;

    private final Netns ns;
    private final Ipv6 inet6;
    private final NdOption opt = new NdOption();
    private final Ipv6Packet ip = new Ipv6Packet();
    private final Inet6Peers redirectPeers = new Inet6Peers();
    // Duplicate address detection in progress, by address entry.
    private final Map<Inet6Ifaddr, Timeout> dad = new HashMap<>();
    private final RouterDiscovery routerDiscovery;
    private final RouterAdvertiser routerAdvertiser;

    public Ndisc(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
        this.routerDiscovery = new RouterDiscovery(inet6, this);
        this.routerAdvertiser = new RouterAdvertiser(inet6, this);
    }

    /** The host side of router discovery: solicitations, advertisements taken, SLAAC. */
    public RouterDiscovery routerDiscovery() {
        return routerDiscovery;
    }

    /** The router side: advertisements sent when {@code usnet.ipv6.ra.<dev>.send} is on. */
    public RouterAdvertiser routerAdvertiser() {
        return routerAdvertiser;
    }

    // ---- the neighbour table's operations for IPv6 (ndisc_hh_ops, ndisc_constructor) ----

    @Override
    public int keyLength() {
        return 16;
    }

    @Override
    public int ethertype() {
        return EthernetFrame.ETH_P_IPV6;
    }

    /** ndisc_constructor: multicast next hops map to 33:33 plus their low 32 bits, without asking. */
    @Override
    public long mapWithoutAsking(Device dev, long hi, long lo) {
        return Ipv6Addr.isMulticast(hi) ? Ipv6Addr.multicastMac(lo) : RESOLVE;
    }

    /**
     * ndisc_solicit: a solicitation for the entry's address, from the source of the packet waiting for it when that
     * is ours on the device, else from the device's link-local address; to the solicited-node group, or to the
     * entry's known address when probing.
     */
    @Override
    public void solicit(Neighbour n, boolean unicast, Packet lastQueued) {
        Device dev = n.dev();
        long sh = 0;
        long sl = 0;
        boolean haveSrc = false;
        if (lastQueued != null) {
            ip.wrap(lastQueued.buf(), lastQueued.start() + EthernetFrame.HEADER_LEN);
            long qh = ip.srcHi();
            long ql = ip.srcLo();
            Inet6Ifaddr a = inet6.addrconf().local(qh, ql);
            if (a != null && a.dev() == dev && a.preferred()) {
                sh = qh;
                sl = ql;
                haveSrc = true;
            }
        }
        long th = n.addrHi();
        long tl = n.addrLo();
        long dh = unicast ? th : SOLICITED_NODE_HI;
        long dl = unicast ? tl : SOLICITED_NODE_LO | (tl & 0xff_ffffL);
        if (!haveSrc) {
            // ndisc_send_ns without a source: the device's link-local address, or no solicitation at all.
            Inet6Ifaddr a = inet6.addrconf().linkLocal(dev);
            if (a == null) {
                return;
            }
            sh = a.address().hi();
            sl = a.address().lo();
        }
        sendNs(dev, th, tl, dh, dl, sh, sl, unicast ? n.mac() : 0L, 0L);
    }

    /** ndisc_error_report: what waited for a neighbour that never answered gets address unreachable. */
    @Override
    public void reportUnreachable(Packet p) {
        inet6.icmp().send(p, Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_ADDR_UNREACH, 0);
    }

    // ---- sending ----

    /**
     * ndisc_send_ns: a solicitation for {@code th}/{@code tl} to {@code dh}/{@code dl} from {@code sh}/{@code sl}
     * (:: for duplicate detection, then without a source link-layer address option); {@code knownMac} non-zero
     * sends it straight to that MAC (a unicast probe); {@code nonce} non-zero adds a nonce option.
     */
    void sendNs(Device dev, long th, long tl, long dh, long dl, long sh, long sl, long knownMac, long nonce) {
        boolean withSllao = sh != 0 || sl != 0;
        int len = ND_MSG_LEN + (withSllao ? LL_OPT_LEN : 0) + (nonce != 0 ? NONCE_OPT_LEN : 0);
        Packet r = Ip6Output.allocate(len);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.NEIGHBOUR_SOLICITATION);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        b.setInt(t + Icmpv6Packet.REST, 0);
        b.setLong(t + 8, th);
        b.setLong(t + 16, tl);
        if (withSllao) {
            NdOption.writeLinkAddress(b, t + ND_MSG_LEN, NdOption.SOURCE_LL_ADDR, dev.mac());
        }
        if (nonce != 0) {
            int o = t + ND_MSG_LEN + (withSllao ? LL_OPT_LEN : 0);
            b.setByte(o, ND_OPT_NONCE);
            b.setByte(o + 1, 1);
            b.setShort(o + 2, (int) (nonce >>> 32));
            b.setInt(o + 4, (int) nonce);
        }
        ns.mib().inc(Mib.Icmp6OutNeighborSolicits);
        transmit(dev, r, sh, sl, dh, dl, knownMac);
    }

    /**
     * ndisc_send_na: an advertisement for our {@code th}/{@code tl} to {@code dh}/{@code dl}, with the router,
     * solicited and override flags, and a target link-layer address option when {@code withTllao}.
     */
    void sendNa(Device dev, long dh, long dl, long th, long tl, boolean router, boolean solicited, boolean override,
                boolean withTllao) {
        long sh = th;
        long sl = tl;
        Inet6Ifaddr own = inet6.addrconf().local(th, tl);
        if (own == null || own.dev() != dev) {
            Inet6Ifaddr a = inet6.addrconf().selectSource(dev, dh, dl);
            if (a == null) {
                return;
            }
            sh = a.address().hi();
            sl = a.address().lo();
        }
        int len = ND_MSG_LEN + (withTllao ? LL_OPT_LEN : 0);
        Packet r = Ip6Output.allocate(len);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        b.setInt(t + Icmpv6Packet.REST, (router ? NA_ROUTER : 0) | (solicited ? NA_SOLICITED : 0)
                | (override ? NA_OVERRIDE : 0));
        b.setLong(t + 8, th);
        b.setLong(t + 16, tl);
        if (withTllao) {
            NdOption.writeLinkAddress(b, t + ND_MSG_LEN, NdOption.TARGET_LL_ADDR, dev.mac());
        }
        ns.mib().inc(Mib.Icmp6OutNeighborAdvertisements);
        transmit(dev, r, sh, sl, dh, dl, 0L);
    }

    /**
     * ndisc_send_redirect: tells the sender of {@code p} (which arrived on the link it will leave by) that
     * {@code th}/{@code tl} is the better first hop for its destination: from our link-local address, with the
     * target's link-layer address when known and as much of {@code p} as keeps the redirect within 1280 bytes.
     * Rate limited per source.
     */
    void sendRedirect(Packet p, long th, long tl) {
        Device dev = p.dev();
        ByteBuf ob = p.buf();
        int net = p.network();
        ip.wrap(ob, net);
        long dh = ip.dstHi();
        long dl = ip.dstLo();
        if (!(th == dh && tl == dl) && !Ipv6Addr.isLinkLocalUnicast(th)) {
            return;
        }
        Inet6Ifaddr ll = inet6.addrconf().linkLocal(dev);
        if (ll == null) {
            return;
        }
        long sh = ip.srcHi();
        long sl = ip.srcLo();
        Route6 back = inet6.output().routeOutput(sh, sl, dev);
        if (back == null) {
            return;
        }
        int hz = (int) ns.knobs().get(NetCoreSysctl.HZ);
        if (!redirectPeers.allow(sh, sl, ns.jiffies(), hz, hz)) {
            return;
        }
        long targetMac = 0;
        Neighbour n = inet6.neigh().lookup(dev, th, tl);
        if (n != null && n.state().valid()) {
            targetMac = n.mac();
        }
        int optLen = targetMac != 0 ? LL_OPT_LEN : 0;
        int pktLen = p.start() + p.length() - net;
        int rdLen = Math.min(Ipv6Packet.MIN_MTU - Ipv6Packet.HEADER_LEN - RD_MSG_LEN - optLen, pktLen + 8) & ~7;
        Packet r = Ip6Output.allocate(RD_MSG_LEN + optLen + rdLen);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.REDIRECT);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        b.setInt(t + Icmpv6Packet.REST, 0);
        b.setLong(t + 8, th);
        b.setLong(t + 16, tl);
        b.setLong(t + 24, dh);
        b.setLong(t + 32, dl);
        int o = t + RD_MSG_LEN;
        if (targetMac != 0) {
            NdOption.writeLinkAddress(b, o, NdOption.TARGET_LL_ADDR, targetMac);
            o += LL_OPT_LEN;
        }
        if (rdLen > 0) {
            b.setByte(o, NdOption.REDIRECTED_HEADER);
            b.setByte(o + 1, rdLen >>> 3);
            b.setShort(o + 2, 0);
            b.setInt(o + 4, 0);
            b.setBytes(o + 8, ob, net, rdLen - 8);
        }
        ns.mib().inc(Mib.Icmp6OutRedirects);
        transmit(dev, r, ll.address().hi(), ll.address().lo(), sh, sl, 0L);
    }

    /** ndisc_send_skb: hop limit 255, the checksum, then the neighbour layer (or straight to {@code knownMac}). */
    void transmit(Device dev, Packet r, long sh, long sl, long dh, long dl, long knownMac) {
        ByteBuf b = r.buf();
        int t = r.transport();
        int len = r.start() + r.length() - t;
        Ipv6Packet.writeHeader(b, r.network(), 0, 0, len, Ipv6Packet.NEXTHDR_ICMPV6, ND_HOP_LIMIT, sh, sl, dh, dl);
        Icmpv6Packet.fillChecksum(b, r.network(), t, len);
        ns.mib().inc(Mib.Ip6OutRequests);
        ns.mib().inc(Mib.Icmp6OutMsgs);
        if (Ipv6Addr.isMulticast(dh)) {
            ns.mib().inc(Mib.Ip6OutMcastPkts);
        }
        if (knownMac != 0) {
            EthernetFrame.write(b, r.start(), knownMac, dev.mac(), EthernetFrame.ETH_P_IPV6);
            dev.transmit(r);
            return;
        }
        inet6.neigh().output(dev, dh, dl, r);
    }

    // ---- receiving ----

    /** ndisc_rcv: RFC 4861's validation, then the message. Owns {@code p}. */
    void rcv(Packet p, int off, int len, int type) {
        ByteBuf b = p.buf();
        ip.wrap(b, p.network());
        if (ip.hopLimit() != ND_HOP_LIMIT || b.getUnsignedByte(off + Icmpv6Packet.CODE) != 0) {
            ns.mib().inc(Mib.Icmp6InErrors);
            ns.drop(p, DropReason.IPV6_NDISC_BAD);
            return;
        }
        DropReason bad = null;
        switch (type) {
            case Icmpv6Packet.NEIGHBOUR_SOLICITATION -> {
                ns.mib().inc(Mib.Icmp6InNeighborSolicits);
                bad = recvNs(p, off, len);
            }
            case Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT -> {
                ns.mib().inc(Mib.Icmp6InNeighborAdvertisements);
                bad = recvNa(p, off, len);
            }
            case Icmpv6Packet.ROUTER_SOLICITATION -> {
                ns.mib().inc(Mib.Icmp6InRouterSolicits);
                bad = routerAdvertiser.rcvRs(p, off, len, ip.srcHi(), ip.srcLo());
            }
            case Icmpv6Packet.ROUTER_ADVERTISEMENT -> {
                ns.mib().inc(Mib.Icmp6InRouterAdvertisements);
                bad = routerDiscovery.rcvRa(p, off, len, ip.srcHi(), ip.srcLo());
            }
            case Icmpv6Packet.REDIRECT -> ns.mib().inc(Mib.Icmp6InRedirects);
            default -> { }
        }
        if (bad != null) {
            ns.drop(p, bad);
        } else {
            p.release();
        }
    }

    /**
     * The link-layer address option of {@code wantType} in the options after {@code off + ND_MSG_LEN}: 0 when absent,
     * -1 when the options are malformed or the option too short (the message is then dropped).
     */
    private long linkOption(ByteBuf b, int from, int end, int wantType) {
        long found = 0;
        opt.start(b, from, end);
        while (opt.next()) {
            if (opt.type() == wantType) {
                found = opt.linkAddress();
                if (found == -1) {
                    return -1;
                }
            }
        }
        return opt.malformed() ? -1 : found;
    }

    /** ndisc_recv_ns. Does not consume {@code p}; returns why it should be dropped, or null. */
    private DropReason recvNs(Packet p, int off, int len) {
        ByteBuf b = p.buf();
        Device dev = p.dev();
        if (len < ND_MSG_LEN) {
            return DropReason.IPV6_NDISC_BAD;
        }
        long th = b.getLong(off + 8);
        long tl = b.getLong(off + 16);
        long sh = ip.srcHi();
        long sl = ip.srcLo();
        long dh = ip.dstHi();
        long dl = ip.dstLo();
        boolean dadProbe = sh == 0 && sl == 0;
        if (Ipv6Addr.isMulticast(th) || (dadProbe && !Ipv6Addr.isSolicitedNode(dh, dl))) {
            return DropReason.IPV6_NDISC_BAD;
        }
        long mac = linkOption(b, off + ND_MSG_LEN, off + len, NdOption.SOURCE_LL_ADDR);
        if (mac == -1 || (mac != 0 && dadProbe)) {
            return DropReason.IPV6_NDISC_BAD;
        }
        Inet6Ifaddr ifa = inet6.addrconf().local(th, tl);
        if (ifa == null || ifa.dev() != dev || ifa.state() == Inet6Ifaddr.DadState.FAILED) {
            return null;
        }
        if (ifa.state() == Inet6Ifaddr.DadState.TENTATIVE) {
            if (dadProbe) {
                dadFailed(ifa);
            }
            return null;
        }
        boolean router = ns.knobs().effective(Ipv6Sysctl.FORWARDING, ns.conf(dev)) != 0;
        boolean multicast = Ipv6Addr.isMulticast(dh);
        if (dadProbe) {
            // Defending our address: to all nodes, not solicited.
            sendNa(dev, Ipv6Addr.ALL_NODES.hi(), Ipv6Addr.ALL_NODES.lo(), th, tl, router, false, true, true);
            return null;
        }
        Neighbour n;
        if (mac != 0) {
            n = inet6.neigh().eventNs(dev, sh, sl, mac);
        } else {
            n = inet6.neigh().lookup(dev, sh, sl);
        }
        if (n != null || mac == 0 && !multicast) {
            sendNa(dev, sh, sl, th, tl, router, true, multicast, multicast);
        }
        return null;
    }

    /** ndisc_recv_na. Does not consume {@code p}; returns why it should be dropped, or null. */
    private DropReason recvNa(Packet p, int off, int len) {
        ByteBuf b = p.buf();
        Device dev = p.dev();
        if (len < ND_MSG_LEN) {
            return DropReason.IPV6_NDISC_BAD;
        }
        int flags = b.getInt(off + Icmpv6Packet.REST);
        boolean isRouter = (flags & NA_ROUTER) != 0;
        boolean solicited = (flags & NA_SOLICITED) != 0;
        boolean override = (flags & NA_OVERRIDE) != 0;
        long th = b.getLong(off + 8);
        long tl = b.getLong(off + 16);
        if (Ipv6Addr.isMulticast(th) || (Ipv6Addr.isMulticast(ip.dstHi()) && solicited)) {
            return DropReason.IPV6_NDISC_BAD;
        }
        long mac = linkOption(b, off + ND_MSG_LEN, off + len, NdOption.TARGET_LL_ADDR);
        if (mac == -1) {
            return DropReason.IPV6_NDISC_BAD;
        }
        Inet6Ifaddr ifa = inet6.addrconf().local(th, tl);
        if (ifa != null && ifa.dev() == dev) {
            if (ifa.state() == Inet6Ifaddr.DadState.TENTATIVE) {
                dadFailed(ifa);
            }
            // Someone advertises our address: nothing to learn from it.
            return null;
        }
        Neighbour n = inet6.neigh().lookup(dev, th, tl);
        if (n == null || n.state() == NudState.FAILED) {
            return null;
        }
        if (mac == 0) {
            if (!n.state().valid()) {
                return null;
            }
            mac = n.mac();
        }
        // An advertisement not taken (a different address without override on a valid entry) leaves the router
        // flag as it was too; one taken sets it from its R flag (NEIGH_UPDATE_F_OVERRIDE_ISROUTER).
        boolean taken = !(n.state().valid() && mac != n.mac() && !override)
                && n.state() != NudState.PERMANENT && n.state() != NudState.NOARP;
        boolean wasRouter = n.router();
        inet6.neigh().update(n, mac, solicited, override);
        if (taken) {
            n.setRouter(isRouter);
            if (wasRouter && !isRouter) {
                // The router became a host: the default routes through it go (rt6_clean_tohost).
                routerDiscovery.routerBecameHost(ip.srcHi(), ip.srcLo());
            }
        }
        return null;
    }

    // ---- duplicate address detection (addrconf_dad_start, addrconf_dad_work) ----

    /**
     * Starts duplicate address detection for a tentative address: after a random delay below
     * {@code router_solicitation_delay}, {@code dad_transmits} solicitations from :: one retransmission time apart;
     * one more retransmission time without an answer makes the address preferred.
     */
    public void startDad(Inet6Ifaddr ifa) {
        if (ifa.state() != Inet6Ifaddr.DadState.TENTATIVE || dad.containsKey(ifa)) {
            return;
        }
        Device dev = ifa.dev();
        // Below router_solicitation_delay, or no delay when that is 0 (Linux draws below "delay ?: 1" jiffies).
        long maxDelayS = ns.conf(dev).get(Ipv6Sysctl.ROUTER_SOLICITATION_DELAY);
        long delay = maxDelayS == 0 ? 0 : ns.randomBelow(maxDelayS * 1_000_000_000L);
        int transmits = (int) ns.conf(dev).get(Ipv6Sysctl.DAD_TRANSMITS);
        dad.put(ifa, ns.schedule(() -> dadStep(ifa, transmits), delay));
    }

    private void dadStep(Inet6Ifaddr ifa, int left) {
        if (ifa.state() != Inet6Ifaddr.DadState.TENTATIVE) {
            dad.remove(ifa);
            return;
        }
        if (left == 0) {
            dad.remove(ifa);
            inet6.addrconf().dadSucceeded(ifa);
            addressReady(ifa);
            return;
        }
        Device dev = ifa.dev();
        long th = ifa.address().hi();
        long tl = ifa.address().lo();
        // enhanced_dad (on by default): a nonce (RFC 7527) lets a node tell its own looped probe from another's.
        long nonce = ns.knobs().effective(Ipv6Sysctl.ENHANCED_DAD, ns.conf(dev)) != 0
                ? 1 + ns.randomBelow(0xffff_ffff_ffffL) : 0;
        sendNs(dev, th, tl, SOLICITED_NODE_HI, SOLICITED_NODE_LO | (tl & 0xff_ffffL), 0, 0, 0L, nonce);
        long retrans = Math.max(ns.conf(dev).get(Ipv6Sysctl.NEIGH.retransTimeMs), 10) * 1_000_000L;
        dad.put(ifa, ns.schedule(() -> dadStep(ifa, left - 1), retrans));
    }

    /**
     * addrconf_dad_failure and addrconf_dad_stop: another node has the address. An address given by hand stays,
     * unusable ({@code dadfailed}); a SLAAC address, which is not permanent, is deleted.
     */
    private void dadFailed(Inet6Ifaddr ifa) {
        Timeout t = dad.remove(ifa);
        if (t != null) {
            t.cancel();
        }
        inet6.addrconf().dadFailed(ifa);
        if (ifa.origin() == Inet6Ifaddr.Origin.AUTOCONF) {
            routerDiscovery.removeAddress(ifa);
        }
    }

    /**
     * addrconf_dad_completed: {@code ifa} became usable, after duplicate detection or without it. With
     * {@code ndisc_notify} an unsolicited NA for it goes to all nodes (override, router flag while forwarding); a
     * link-local address starts router solicitations (a host) and advertisements (when configured).
     */
    public void addressReady(Inet6Ifaddr ifa) {
        Device dev = ifa.dev();
        if (!ifa.preferred() || !dev.isUp() || !dev.hasCarrier()) {
            return;
        }
        if (ns.knobs().effective(Ipv6Sysctl.NDISC_NOTIFY, ns.conf(dev)) != 0) {
            boolean router = ns.knobs().effective(Ipv6Sysctl.FORWARDING, ns.conf(dev)) != 0;
            sendNa(dev, Ipv6Addr.ALL_NODES.hi(), Ipv6Addr.ALL_NODES.lo(), ifa.address().hi(), ifa.address().lo(),
                    router, false, true, true);
        }
        if (ifa.address().isLinkLocal()) {
            routerDiscovery.linkLocalReady(dev, ifa);
            routerAdvertiser.linkLocalReady(dev);
        }
    }

    /**
     * The device is up with carrier again and its link-local address was already usable (usnet keeps it across a
     * link flap, where Linux makes it anew): solicitations start again unless they are still going, and
     * advertisements start if the device's knob now says so.
     */
    public void linkUpAgain(Device dev) {
        Inet6Ifaddr ll = inet6.addrconf().linkLocal(dev);
        if (ll == null) {
            return;
        }
        if (!routerDiscovery.soliciting(dev)) {
            routerDiscovery.linkLocalReady(dev, ll);
        }
        routerAdvertiser.linkLocalReady(dev);
    }

    /** The namespace closes: pending detection stops. */
    void close() {
        for (Timeout t : dad.values()) {
            t.cancel();
        }
        dad.clear();
        routerDiscovery.close();
        routerAdvertiser.close();
    }
}
