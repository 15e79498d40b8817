package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;

/**
 * IPv6 receive (ipv6_rcv, ip6_rcv_core, ip6_route_input, ip6_input_finish): the fixed header's checks and martian
 * addresses, the hop-by-hop header, then local delivery (our addresses, link-local ones only on their own link, and
 * the multicast groups the node is in), forwarding, or the route's error; local delivery walks the extension
 * headers (destination options, routing, fragment) to the transport registered for the last next header.
 */
public final class Ip6Input {
    private final Netns ns;
    private final Ipv6 inet6;
    private final Ipv6Packet ip = new Ipv6Packet();
    private volatile Inet6Protocol[] protocols = new Inet6Protocol[0];

    public Ip6Input(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /** Registers the receive hook of next header {@code proto} (inet6_add_protocol). */
    public synchronized void registerProtocol(int proto, Inet6Protocol handler) {
        if (proto < 0 || proto > 255) {
            throw new IllegalArgumentException("IPv6 next header " + proto + " out of range 0..255");
        }
        Inet6Protocol[] t = java.util.Arrays.copyOf(protocols, Math.max(protocols.length, proto + 1));
        t[proto] = handler;
        protocols = t;
    }

    /** The transport registered for next header {@code proto}, or null (inet6_protos[proto]). */
    public Inet6Protocol protocol(int proto) {
        Inet6Protocol[] t = protocols;
        return proto >= 0 && proto < t.length ? t[proto] : null;
    }

    /** ipv6_rcv. Owns {@code p}; {@code p.network()} is the IPv6 header. */
    public void rcv(Packet p) {
        if (p.pktType() == Packet.PACKET_OTHERHOST) {
            ns.drop(p, DropReason.OTHERHOST);
            return;
        }
        Device dev = p.dev();
        if (!inet6.enabled(dev)) {
            ns.mib().inc(Mib.Ip6InDiscards);
            ns.drop(p, DropReason.IPV6DISABLED);
            return;
        }
        ns.mib().inc(Mib.Ip6InReceives);
        int off = p.network();
        ByteBuf b = p.buf();
        DropReason bad = ip.check(b, off, p.start() + p.length() - off);
        if (bad != null) {
            ns.mib().inc(bad == DropReason.IP_TRUNCATED ? Mib.Ip6InTruncatedPkts : Mib.Ip6InHdrErrors);
            ns.drop(p, bad);
            return;
        }
        long sh = ip.srcHi();
        long sl = ip.srcLo();
        long dh = ip.dstHi();
        long dl = ip.dstLo();
        boolean fromLoopback = dev instanceof Loopback;
        boolean martian = Ipv6Addr.isMulticast(sh) || Ipv6Addr.isV4Mapped(sh, sl)
                || (!fromLoopback && ((sh == 0 && sl == 1) || (dh == 0 && dl == 1)))
                || (Ipv6Addr.isMulticast(dh) && (Ipv6Addr.multicastScope(dh) == 0
                        || (!fromLoopback && Ipv6Addr.multicastScope(dh) == Ipv6Addr.SCOPE_INTERFACE_LOCAL)));
        if (martian) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            ns.drop(p, DropReason.IP6_INVALID_ADDRESS);
            return;
        }
        // Link-layer padding beyond the payload length is not part of the packet.
        p.trim(off - p.start() + ip.totalLength());
        p.setTransport(off + Ipv6Packet.HEADER_LEN);
        if (ip.nextHeader() == Ipv6Packet.NEXTHDR_HOP) {
            if (!inet6.exthdr().parseTlv(p, off + Ipv6Packet.HEADER_LEN, true)) {
                ns.mib().inc(Mib.Ip6InHdrErrors);
                return;
            }
        }
        routeInput(p, dev, dh, dl);
    }

    /** ip6_route_input and dst_input: local delivery, forwarding, or the route's error. */
    private void routeInput(Packet p, Device dev, long dh, long dl) {
        if (Ipv6Addr.isMulticast(dh)) {
            ns.mib().inc(Mib.Ip6InMcastPkts);
            if (inGroup(dev, dh, dl)) {
                localDeliver(p);
            } else {
                // No multicast routing: a group nobody here joined is nobody's, and is never forwarded.
                ns.drop(p, DropReason.IP6_MCAST_NOT_JOINED);
            }
            return;
        }
        if (isLocalOn(dev, dh, dl)) {
            localDeliver(p);
            return;
        }
        // A link-local destination names the link it arrived on (rt6_need_strict): only that link's routes.
        Route6 rt = inet6.fib().lookup(dh, dl, Ipv6Addr.isLinkLocalUnicast(dh) ? dev : null);
        if (rt == null) {
            routeError(p, dh, dl, Icmpv6Packet.CODE_NOROUTE);
            return;
        }
        switch (rt.type()) {
            case UNICAST -> inet6.forward().forward(p, rt);
            case UNREACHABLE -> routeError(p, dh, dl, Icmpv6Packet.CODE_NOROUTE);
            case PROHIBIT -> routeError(p, dh, dl, Icmpv6Packet.CODE_ADM_PROHIBITED);
            default -> ns.drop(p, DropReason.IP_NOROUTE);
        }
    }

    /** ip6_pkt_discard and ip6_pkt_prohibit: destination unreachable with {@code code}, counted. */
    private void routeError(Packet p, long dh, long dl, int code) {
        ns.mib().inc(dh == 0 && dl == 0 ? Mib.Ip6InAddrErrors : Mib.Ip6InNoRoutes);
        inet6.icmp().send(p, Icmpv6Packet.DEST_UNREACH, code, 0);
        ns.drop(p, DropReason.IP_NOROUTE);
    }

    /**
     * Whether {@code hi}/{@code lo} is an address of this node as seen from {@code dev}: a usable address of any
     * device, except that a link-local one counts only on its own link.
     */
    public boolean isLocalOn(Device dev, long hi, long lo) {
        Inet6Ifaddr a = inet6.addrconf().local(hi, lo);
        return a != null && a.preferred() && (a.dev() == dev || !Ipv6Addr.isLinkLocalUnicast(hi) || dev instanceof Loopback);
    }

    /**
     * ipv6_chk_mcast_addr: the groups a node is in on {@code dev} — all nodes, the solicited-node group of each of
     * its addresses there (tentative ones too, for duplicate detection), and all routers (link, interface and site
     * scope) while forwarding.
     */
    public boolean inGroup(Device dev, long hi, long lo) {
        if ((hi == 0xff02_0000_0000_0000L || hi == 0xff01_0000_0000_0000L) && lo == 1) {
            return true;
        }
        if (lo == 2 && (hi == 0xff02_0000_0000_0000L || hi == 0xff01_0000_0000_0000L || hi == 0xff05_0000_0000_0000L)) {
            return ns.knobs().effective(Ipv6Sysctl.FORWARDING, ns.conf(dev)) != 0;
        }
        if (Ipv6Addr.isSolicitedNode(hi, lo)) {
            return inet6.addrconf().hasSolicitedNode(dev, lo);
        }
        return false;
    }

    /**
     * ip6_input_finish: walks the extension headers after the fixed one (and after a hop-by-hop header, which may
     * only come first) to the transport. Destination options are examined, a routing header with segments left is
     * refused (usnet, like Linux, processes no routing header type), fragments are reassembled.
     */
    public void localDeliver(Packet p) {
        ByteBuf b = p.buf();
        int net = p.network();
        int nhoff = net + Ipv6Packet.NEXT_HEADER;
        int off = net + Ipv6Packet.HEADER_LEN;
        int nh = b.getUnsignedByte(nhoff);
        boolean first = true;
        int end = p.start() + p.length();
        while (true) {
            switch (nh) {
                case Ipv6Packet.NEXTHDR_HOP -> {
                    if (!first) {
                        unknownNextHeader(p, nhoff);
                        return;
                    }
                    // Already examined on the way in.
                    int len = (b.getUnsignedByte(off + 1) + 1) << 3;
                    nhoff = off;
                    nh = b.getUnsignedByte(off);
                    off += len;
                }
                case Ipv6Packet.NEXTHDR_DEST -> {
                    if (off + 8 > end || off + ((b.getUnsignedByte(off + 1) + 1) << 3) > end) {
                        ns.mib().inc(Mib.Ip6InHdrErrors);
                        ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
                        return;
                    }
                    if (!inet6.exthdr().parseTlv(p, off, false)) {
                        ns.mib().inc(Mib.Ip6InHdrErrors);
                        return;
                    }
                    int len = (b.getUnsignedByte(off + 1) + 1) << 3;
                    nhoff = off;
                    nh = b.getUnsignedByte(off);
                    off += len;
                }
                case Ipv6Packet.NEXTHDR_ROUTING -> {
                    if (off + 8 > end || off + ((b.getUnsignedByte(off + 1) + 1) << 3) > end) {
                        ns.mib().inc(Mib.Ip6InHdrErrors);
                        ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
                        return;
                    }
                    if (b.getUnsignedByte(off + 3) != 0) {
                        // Segments left and a type usnet does not process (type 0 is deprecated, RFC 5095):
                        // parameter problem at the routing type.
                        ns.mib().inc(Mib.Ip6InHdrErrors);
                        inet6.icmp().paramProb(p, Icmpv6Packet.CODE_HDR_FIELD, off + 2 - net);
                        ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
                        return;
                    }
                    int len = (b.getUnsignedByte(off + 1) + 1) << 3;
                    nhoff = off;
                    nh = b.getUnsignedByte(off);
                    off += len;
                }
                case Ipv6Packet.NEXTHDR_FRAGMENT -> {
                    Packet whole = inet6.defrag().rcv(p, off, nhoff);
                    if (whole == null) {
                        return;
                    }
                    if (whole == p && inet6.defrag().wasAtomic()) {
                        // An atomic fragment (offset 0, no more): taken as unfragmented, past its header.
                        nhoff = off;
                        nh = b.getUnsignedByte(off);
                        off += 8;
                    } else {
                        p = whole;
                        b = p.buf();
                        net = p.network();
                        end = p.start() + p.length();
                        nhoff = inet6.defrag().nextHeaderOffset();
                        off = p.transport();
                        nh = b.getUnsignedByte(nhoff);
                    }
                }
                case Ipv6Packet.NEXTHDR_NONE -> {
                    ns.mib().inc(Mib.Ip6InDelivers);
                    p.release();
                    return;
                }
                default -> {
                    Inet6Protocol[] t = protocols;
                    Inet6Protocol h = nh < t.length ? t[nh] : null;
                    if (h == null) {
                        unknownNextHeader(p, nhoff);
                        return;
                    }
                    p.setTransport(off);
                    ns.mib().inc(Mib.Ip6InDelivers);
                    h.rcv(p);
                    return;
                }
            }
            first = false;
            if (off > end) {
                ns.mib().inc(Mib.Ip6InHdrErrors);
                ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
                return;
            }
        }
    }

    private void unknownNextHeader(Packet p, int nhoff) {
        ns.mib().inc(Mib.Ip6InUnknownProtos);
        inet6.icmp().paramProb(p, Icmpv6Packet.CODE_UNK_NEXTHDR, nhoff - p.network());
        ns.drop(p, DropReason.UNHANDLED_PROTO);
    }
}
