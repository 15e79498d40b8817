package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;

/**
 * IPv4 receive (ip_rcv, ip_route_input, ip_local_deliver): validates the header with a counted reason for
 * every drop, trims link-layer padding, decides local delivery, broadcast or forwarding, and dispatches to
 * ICMP, UDP or a registered transport.
 */
public final class IpInput {
    private final Netns ns;
    private final Ipv4 inet;
    private final Ipv4Packet ip = new Ipv4Packet();
    private final NfHooks hooks;
    // Indexed by protocol number, only as long as the highest registered (TCP: 7 slots, not 256).
    private volatile L4Protocol[] protocols = new L4Protocol[0];

    public IpInput(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
        this.hooks = inet.netfilter().hooks();
    }

    /** Registers the receive hook of transport protocol {@code proto} (inet_add_protocol). */
    public synchronized void registerProtocol(int proto, L4Protocol handler) {
        if (proto < 0 || proto > 255) {
            throw new IllegalArgumentException("IP protocol " + proto + " out of range 0..255");
        }
        L4Protocol[] t = java.util.Arrays.copyOf(protocols, Math.max(protocols.length, proto + 1));
        t[proto] = handler;
        protocols = t;
    }

    /** The transport registered for protocol {@code proto}, or null (inet_protos[proto]). */
    public L4Protocol protocol(int proto) {
        L4Protocol[] t = protocols;
        return proto >= 0 && proto < t.length ? t[proto] : null;
    }

    /** ip_rcv. Owns {@code p}; {@code p.network()} is the IP header. */
    public void rcv(Packet p) {
        if (p.pktType() == Packet.PACKET_OTHERHOST) {
            ns.drop(p, DropReason.OTHERHOST);
            return;
        }
        ns.mib().inc(Mib.IpInReceives);
        int off = p.network();
        int avail = p.start() + p.length() - off;
        DropReason bad = ip.check(p.buf(), off, avail);
        if (bad != null) {
            switch (bad) {
                case IP_CSUM -> {
                    ns.mib().inc(Mib.IpExtInCsumErrors);
                    ns.mib().inc(Mib.IpInHdrErrors);
                }
                case IP_TRUNCATED, PKT_TOO_SMALL -> ns.mib().inc(Mib.IpExtInTruncatedPkts);
                default -> ns.mib().inc(Mib.IpInHdrErrors);
            }
            ns.drop(p, bad);
            return;
        }
        // Link-layer padding beyond the IP total length is not part of the datagram.
        p.trim(off - p.start() + ip.totalLength());
        p.setTransport(off + ip.headerLength());
        // A frame a bridge passed up after running these hooks itself (br_netfilter) does not see them again.
        if (hooks.active(NfHook.PRE_ROUTING) && p.nfBridgePhysIn() == 0) {
            // Connection tracking may reassemble here, and destination NAT rewrite the address routing then reads.
            p = hooks.run(NfHook.PRE_ROUTING, p, p.dev(), null);
            if (p == null) {
                return;
            }
            ip.wrap(p.buf(), p.network());
        }
        if (ip.headerLength() > Ipv4Packet.MIN_HEADER_LEN) {
            int err = IpOptions.validate(p.buf(), p.network());
            if (err != IpOptions.OK) {
                if (err == IpOptions.SOURCE_ROUTE) {
                    ns.drop(p, DropReason.IP_OPTIONS);
                } else {
                    ns.mib().inc(Mib.IpInHdrErrors);
                    inet.icmp().send(p, IcmpPacket.PARAMETER_PROB, 0, err << 24);
                    ns.drop(p, DropReason.IP_OPTIONS);
                }
                return;
            }
        }
        routeInput(p);
    }

    /** ip_route_input_slow: local, broadcast, or forward; martians dropped and counted. */
    private void routeInput(Packet p) {
        ip.wrap(p.buf(), p.network());
        int src = ip.src();
        int dst = ip.dst();
        Device dev = p.dev();
        boolean fromLoopback = dev instanceof Loopback;
        if (Ipv4Addr.isMulticast(src) || Ipv4Addr.isLimitedBroadcast(src)) {
            ns.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (Ipv4Addr.isLimitedBroadcast(dst) || (src == 0 && dst == 0)) {
            ns.mib().inc(Mib.IpExtInBcastPkts);
            localDeliver(p);
            return;
        }
        if (Ipv4Addr.isZeroNet(src)) {
            ns.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (Ipv4Addr.isZeroNet(dst)) {
            ns.drop(p, DropReason.IP_INVALID_DEST);
            return;
        }
        if (!fromLoopback && (Ipv4Addr.isLoopback(src))) {
            ns.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (!fromLoopback && Ipv4Addr.isLoopback(dst)) {
            ns.drop(p, DropReason.IP_INVALID_DEST);
            return;
        }
        if (Ipv4Addr.isMulticast(dst)) {
            // No multicast group membership or multicast routing here: not for us, never forwarded.
            ns.mib().inc(Mib.IpExtInMcastPkts);
            ns.drop(p, DropReason.IP_BROADCAST_FORWARD);
            return;
        }
        if (!fromLoopback && inet.devinet().isLocal(src)) {
            // Our own address arriving from outside: a martian source (fib_validate_source, accept_local 0).
            ns.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (ip.headerLength() > Ipv4Packet.MIN_HEADER_LEN && !compileOptions(p, src, dst)) {
            return;
        }
        if (inet.devinet().isLocal(dst)) {
            localDeliver(p);
            return;
        }
        if (inet.devinet().isBroadcast(dst)) {
            ns.mib().inc(Mib.IpExtInBcastPkts);
            localDeliver(p);
            return;
        }
        DevConf conf = ns.conf(dev);
        if (conf.get(Ipv4Sysctl.FORWARDING) == 0) {
            ns.mib().inc(Mib.IpInAddrErrors);
            ns.drop(p, DropReason.IP_NOT_FORWARDING);
            return;
        }
        Route rt = inet.routes().lookup(dst);
        if (rt == null) {
            ns.mib().inc(Mib.IpExtInNoRoutes);
            inet.icmp().sendRouteError(p, IcmpPacket.CODE_NET_UNREACH);
            ns.drop(p, DropReason.IP_NOROUTE);
            return;
        }
        switch (rt.type()) {
            case UNICAST -> { }
            case BLACKHOLE -> {
                ns.drop(p, DropReason.IP_NOROUTE);
                return;
            }
            case UNREACHABLE -> {
                ns.mib().inc(Mib.IpInAddrErrors);
                inet.icmp().sendRouteError(p, IcmpPacket.CODE_HOST_UNREACH);
                ns.drop(p, DropReason.IP_NOROUTE);
                return;
            }
            case PROHIBIT -> {
                inet.icmp().sendRouteError(p, 13);
                ns.drop(p, DropReason.IP_NOROUTE);
                return;
            }
            default -> {
                ns.drop(p, DropReason.IP_NOROUTE);
                return;
            }
        }
        int rpf = (int) ns.knobs().effective(Ipv4Sysctl.RP_FILTER, conf);
        if (rpf != 0 && !reversePathOk(src, dev, rpf)) {
            ns.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (rt.dev() == dev && ns.knobs().effective(Ipv4Sysctl.SEND_REDIRECTS, conf) != 0
                && inet.devinet().onLink(dev, src, rt.gateway())) {
            p.setIpFlags(p.ipFlags() | Packet.IPSKB_DOREDIRECT);
        }
        inet.ipForward().forward(p, rt);
    }

    /**
     * ip_rcv_options: make the header private (skb_cow) and let the options record this hop: the address we
     * are known by on the way in (fib_compute_spec_dst), the time. Returns false when the packet was dropped.
     */
    private boolean compileOptions(Packet p, int src, int dst) {
        var policy = ns.knobs().get(CowSysctl.FORWARD_COW);
        if (policy == dev.usnet.core.buf.CowPolicy.SKIP_TTL) {
            policy = dev.usnet.core.buf.CowPolicy.HEAD_COPY;
        }
        p.makeWritable(p.transport() - p.start(), policy, ns.cow());
        int specDst;
        if (inet.devinet().isLocal(dst)) {
            specDst = dst;
        } else {
            Route back = src != 0 ? inet.routes().lookup(src) : null;
            if (back != null && back.prefSrc() != 0) {
                specDst = back.prefSrc();
            } else if (back != null && back.dev() != null) {
                specDst = inet.devinet().selectSource(back.dev(), back.gateway());
            } else {
                specDst = inet.devinet().selectSource(p.dev(), src);
            }
        }
        IpOptions.compileInput(p, p.buf(), p.network(), specDst, ns.msSinceMidnight(), inet.devinet()::isLocal);
        return true;
    }

    /** rp_filter: strict (1) wants the reverse route out of the ingress device; loose (2) any route. */
    private boolean reversePathOk(int src, Device dev, int mode) {
        Route back = inet.routes().lookup(src);
        if (back == null || back.type() != RouteType.UNICAST) {
            return false;
        }
        return mode == 2 || back.dev() == dev;
    }

    /** ip_local_deliver: reassembles fragments, then hands the datagram to its transport protocol. */
    public void localDeliver(Packet p) {
        ip.wrap(p.buf(), p.network());
        if (ip.isFragment()) {
            p = inet.ipDefrag().gather(p);
            if (p == null) {
                return;
            }
            ip.wrap(p.buf(), p.network());
        }
        if (hooks.active(NfHook.LOCAL_IN)) {
            p = hooks.run(NfHook.LOCAL_IN, p, p.dev(), null);
            if (p == null) {
                return;
            }
            ip.wrap(p.buf(), p.network());
        }
        ns.mib().inc(Mib.IpInDelivers);
        int proto = ip.protocol();
        switch (proto) {
            case Ipv4Packet.PROTO_ICMP -> inet.icmp().rcv(p);
            case Ipv4Packet.PROTO_UDP -> inet.udp().rcv(p);
            default -> {
                L4Protocol[] t = protocols;
                L4Protocol h = proto < t.length ? t[proto] : null;
                if (h != null) {
                    h.rcv(p);
                } else {
                    ns.mib().inc(Mib.IpInUnknownProtos);
                    if (p.pktType() == Packet.PACKET_HOST) {
                        inet.icmp().send(p, IcmpPacket.DEST_UNREACH, 2, 0);
                    }
                    ns.drop(p, DropReason.UNHANDLED_PROTO);
                }
            }
        }
    }
}
