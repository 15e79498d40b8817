package dev.usnet.core.ipv4;

import dev.usnet.core.buf.CowSysctl;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
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
    private final NetStack stack;
    private final Ipv4Packet ip = new Ipv4Packet();
    // Indexed by protocol number, only as long as the highest registered (TCP: 7 slots, not 256).
    private volatile L4Protocol[] protocols = new L4Protocol[0];

    public IpInput(NetStack stack) {
        this.stack = stack;
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
            stack.drop(p, DropReason.OTHERHOST);
            return;
        }
        stack.mib().inc(Mib.IpInReceives);
        int off = p.network();
        int avail = p.start() + p.length() - off;
        DropReason bad = ip.check(p.buf(), off, avail);
        if (bad != null) {
            switch (bad) {
                case IP_CSUM -> {
                    stack.mib().inc(Mib.IpExtInCsumErrors);
                    stack.mib().inc(Mib.IpInHdrErrors);
                }
                case IP_TRUNCATED, PKT_TOO_SMALL -> stack.mib().inc(Mib.IpExtInTruncatedPkts);
                default -> stack.mib().inc(Mib.IpInHdrErrors);
            }
            stack.drop(p, bad);
            return;
        }
        // Link-layer padding beyond the IP total length is not part of the datagram.
        p.trim(off - p.start() + ip.totalLength());
        p.setTransport(off + ip.headerLength());
        if (ip.headerLength() > Ipv4Packet.MIN_HEADER_LEN) {
            int err = IpOptions.validate(p.buf(), off);
            if (err != IpOptions.OK) {
                if (err == IpOptions.SOURCE_ROUTE) {
                    stack.drop(p, DropReason.IP_OPTIONS);
                } else {
                    stack.mib().inc(Mib.IpInHdrErrors);
                    stack.icmp().send(p, IcmpPacket.PARAMETER_PROB, 0, err << 24);
                    stack.drop(p, DropReason.IP_OPTIONS);
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
            stack.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (Ipv4Addr.isLimitedBroadcast(dst) || (src == 0 && dst == 0)) {
            stack.mib().inc(Mib.IpExtInBcastPkts);
            localDeliver(p);
            return;
        }
        if (Ipv4Addr.isZeroNet(src)) {
            stack.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (Ipv4Addr.isZeroNet(dst)) {
            stack.drop(p, DropReason.IP_INVALID_DEST);
            return;
        }
        if (!fromLoopback && (Ipv4Addr.isLoopback(src))) {
            stack.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (!fromLoopback && Ipv4Addr.isLoopback(dst)) {
            stack.drop(p, DropReason.IP_INVALID_DEST);
            return;
        }
        if (Ipv4Addr.isMulticast(dst)) {
            // No multicast group membership or multicast routing here: not for us, never forwarded.
            stack.mib().inc(Mib.IpExtInMcastPkts);
            stack.drop(p, DropReason.IP_BROADCAST_FORWARD);
            return;
        }
        if (!fromLoopback && stack.devinet().isLocal(src)) {
            // Our own address arriving from outside: a martian source (fib_validate_source, accept_local 0).
            stack.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (ip.headerLength() > Ipv4Packet.MIN_HEADER_LEN && !compileOptions(p, src, dst)) {
            return;
        }
        if (stack.devinet().isLocal(dst)) {
            localDeliver(p);
            return;
        }
        if (stack.devinet().isBroadcast(dst)) {
            stack.mib().inc(Mib.IpExtInBcastPkts);
            localDeliver(p);
            return;
        }
        DevConf conf = stack.conf(dev);
        if (conf.get(Ipv4Sysctl.FORWARDING) == 0) {
            stack.mib().inc(Mib.IpInAddrErrors);
            stack.drop(p, DropReason.IP_NOT_FORWARDING);
            return;
        }
        Route rt = stack.routes().lookup(dst);
        if (rt == null) {
            stack.mib().inc(Mib.IpExtInNoRoutes);
            stack.icmp().sendRouteError(p, IcmpPacket.CODE_NET_UNREACH);
            stack.drop(p, DropReason.IP_NOROUTE);
            return;
        }
        switch (rt.type()) {
            case UNICAST -> { }
            case BLACKHOLE -> {
                stack.drop(p, DropReason.IP_NOROUTE);
                return;
            }
            case UNREACHABLE -> {
                stack.mib().inc(Mib.IpInAddrErrors);
                stack.icmp().sendRouteError(p, IcmpPacket.CODE_HOST_UNREACH);
                stack.drop(p, DropReason.IP_NOROUTE);
                return;
            }
            case PROHIBIT -> {
                stack.icmp().sendRouteError(p, 13);
                stack.drop(p, DropReason.IP_NOROUTE);
                return;
            }
            default -> {
                stack.drop(p, DropReason.IP_NOROUTE);
                return;
            }
        }
        int rpf = (int) stack.knobs().effective(Ipv4Sysctl.RP_FILTER, conf);
        if (rpf != 0 && !reversePathOk(src, dev, rpf)) {
            stack.drop(p, DropReason.IP_INVALID_SOURCE);
            return;
        }
        if (rt.dev() == dev && stack.knobs().effective(Ipv4Sysctl.SEND_REDIRECTS, conf) != 0
                && stack.devinet().onLink(dev, src, rt.gateway())) {
            p.setIpFlags(p.ipFlags() | Packet.IPSKB_DOREDIRECT);
        }
        stack.ipForward().forward(p, rt);
    }

    /**
     * ip_rcv_options: make the header private (skb_cow) and let the options record this hop: the address we
     * are known by on the way in (fib_compute_spec_dst), the time. Returns false when the packet was dropped.
     */
    private boolean compileOptions(Packet p, int src, int dst) {
        var policy = stack.knobs().get(CowSysctl.FORWARD_COW);
        if (policy == dev.usnet.core.buf.CowPolicy.SKIP_TTL) {
            policy = dev.usnet.core.buf.CowPolicy.HEAD_COPY;
        }
        p.makeWritable(p.transport() - p.start(), policy, stack.cow());
        int specDst;
        if (stack.devinet().isLocal(dst)) {
            specDst = dst;
        } else {
            Route back = src != 0 ? stack.routes().lookup(src) : null;
            if (back != null && back.prefSrc() != 0) {
                specDst = back.prefSrc();
            } else if (back != null && back.dev() != null) {
                specDst = stack.devinet().selectSource(back.dev(), back.gateway());
            } else {
                specDst = stack.devinet().selectSource(p.dev(), src);
            }
        }
        IpOptions.compileInput(p, p.buf(), p.network(), specDst, stack.msSinceMidnight(), stack.devinet()::isLocal);
        return true;
    }

    /** rp_filter: strict (1) wants the reverse route out of the ingress device; loose (2) any route. */
    private boolean reversePathOk(int src, Device dev, int mode) {
        Route back = stack.routes().lookup(src);
        if (back == null || back.type() != RouteType.UNICAST) {
            return false;
        }
        return mode == 2 || back.dev() == dev;
    }

    /** ip_local_deliver: reassembles fragments, then hands the datagram to its transport protocol. */
    public void localDeliver(Packet p) {
        ip.wrap(p.buf(), p.network());
        if (ip.isFragment()) {
            p = stack.ipDefrag().gather(p);
            if (p == null) {
                return;
            }
            ip.wrap(p.buf(), p.network());
        }
        stack.mib().inc(Mib.IpInDelivers);
        int proto = ip.protocol();
        switch (proto) {
            case Ipv4Packet.PROTO_ICMP -> stack.icmp().rcv(p);
            case Ipv4Packet.PROTO_UDP -> stack.udp().rcv(p);
            default -> {
                L4Protocol[] t = protocols;
                L4Protocol h = proto < t.length ? t[proto] : null;
                if (h != null) {
                    h.rcv(p);
                } else {
                    stack.mib().inc(Mib.IpInUnknownProtos);
                    if (p.pktType() == Packet.PACKET_HOST) {
                        stack.icmp().send(p, IcmpPacket.DEST_UNREACH, 2, 0);
                    }
                    stack.drop(p, DropReason.UNHANDLED_PROTO);
                }
            }
        }
    }
}
