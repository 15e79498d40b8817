package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;

/**
 * IPv6 output of locally made packets (ip6_route_output, ip6_xmit, ip6_finish_output): the route, the fixed
 * header, then the neighbour layer (which maps multicast next hops to 33:33 MACs without asking); a datagram larger
 * than the path's MTU is cut into fragments at the source (ip6_fragment), as only the source may.
 */
public final class Ip6Output {
    /** Frame layout of a locally built packet: link-layer slot, 40-byte IPv6 header, then the payload. */
    public static final int L2 = EthernetFrame.HEADER_LEN;
    private static final int FRAG_HDR_LEN = 8;

    private final Netns ns;
    private final Ipv6 inet6;
    private final Ipv6Packet ip = new Ipv6Packet();
    private final Ip6PathMtuCache pmtu = new Ip6PathMtuCache();
    private int nextFragId;

    public Ip6Output(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /**
     * A packet ready for a payload of {@code l4Len} bytes: network() is the (unwritten) IPv6 header, transport()
     * the payload, and the frame already has its full length.
     */
    public static Packet allocate(int l4Len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, L2 + Ipv6Packet.HEADER_LEN + l4Len);
        int s = p.start();
        p.buf().writerIndex(s + L2 + Ipv6Packet.HEADER_LEN + l4Len);
        p.setNetwork(s + L2);
        p.setTransport(s + L2 + Ipv6Packet.HEADER_LEN);
        return p;
    }

    /**
     * ip6_route_output: the route a local packet to {@code dh}/{@code dl} takes; our own addresses go through the
     * loopback; a link-scope destination (link-local unicast, link- or interface-local multicast) only through
     * {@code oif}, which it needs. Null: no usable route.
     */
    public Route6 routeOutput(long dh, long dl, Device oif) {
        if (inet6.addrconf().isLocal(dh, dl) && !(Ipv6Addr.isLinkLocalUnicast(dh) && oif != null
                && inet6.addrconf().local(dh, dl).dev() != oif)) {
            return new Route6(new Ipv6Addr(dh, dl), 128, RouteType.LOCAL, null, ns.loopback(), 0, false);
        }
        if (Ipv6Addr.isMulticast(dh)) {
            if (oif == null) {
                return null;
            }
            return new Route6(new Ipv6Addr(dh, dl), 128, RouteType.UNICAST, null, oif, 0, false);
        }
        boolean strict = Ipv6Addr.isLinkLocalUnicast(dh);
        if (strict && oif == null) {
            return null;
        }
        Route6 r = inet6.fib().lookup(dh, dl, strict ? oif : null);
        return r != null && r.type() == RouteType.UNICAST ? r : null;
    }

    /**
     * The path MTU of a local packet to {@code dh}/{@code dl} over {@code rt} (dst_mtu): the device's MTU, or lower
     * when a router reported a smaller one ({@link #updatePmtu}) that has not lapsed.
     */
    public int pathMtu(Route6 rt, long dh, long dl) {
        int devMtu = Math.max((rt.type() == RouteType.LOCAL ? ns.loopback() : rt.dev()).mtu(), Ipv6Packet.MIN_MTU);
        return rt.type() == RouteType.LOCAL || pmtu.isEmpty() ? devMtu : pmtu.mtu(dh, dl, devMtu, ns.now());
    }

    /**
     * A packet too big reported {@code reportedMtu} towards {@code dh}/{@code dl} (ip6_update_pmtu): lowers the
     * path MTU, never raises it nor below 1280, and forgets it after net.ipv6.route.mtu_expires seconds. Returns
     * the path MTU afterwards.
     */
    public int updatePmtu(Route6 rt, long dh, long dl, int reportedMtu) {
        if (rt.type() == RouteType.LOCAL) {
            return pathMtu(rt, dh, dl);
        }
        return pmtu.update(dh, dl, reportedMtu, pathMtu(rt, dh, dl),
                ns.knobs().get(Ipv6Sysctl.MTU_EXPIRES) * 1_000_000_000L, ns.now());
    }

    /**
     * ip6_xmit for a packet from {@link #allocate}: writes the fixed header and sends it along {@code rt}; the
     * payload must already carry its checksum. Returns false, and frees the packet, without a route.
     */
    public boolean send(Packet p, Route6 rt, long sh, long sl, long dh, long dl, int nextHeader, int trafficClass,
                        int flowLabel, int hopLimit) {
        if (rt == null) {
            ns.mib().inc(Mib.Ip6OutNoRoutes);
            ns.drop(p, DropReason.IP_NOROUTE);
            return false;
        }
        int payloadLen = p.start() + p.length() - p.transport();
        Ipv6Packet.writeHeader(p.buf(), p.network(), trafficClass, flowLabel, payloadLen, nextHeader, hopLimit,
                sh, sl, dh, dl);
        ns.mib().inc(Mib.Ip6OutRequests);
        if (Ipv6Addr.isMulticast(dh)) {
            ns.mib().inc(Mib.Ip6OutMcastPkts);
        }
        Device dev = rt.type() == RouteType.LOCAL ? ns.loopback() : rt.dev();
        int mtu = Math.max(dev.mtu(), Ipv6Packet.MIN_MTU);
        if (!pmtu.isEmpty() && rt.type() != RouteType.LOCAL) {
            // A learned path MTU cuts what the source fragments, as the cached route's MTU does in ip6_finish_output.
            mtu = pmtu.mtu(dh, dl, mtu, ns.now());
        }
        if (Ipv6Packet.HEADER_LEN + payloadLen > mtu && rt.type() != RouteType.LOCAL && !gsoSegmentsFit(p, mtu)) {
            // A GSO packet whose segments fit leaves whole: the device (or software GSO) cuts it, as
            // ip6_finish_output lets one through when skb_gso_validate_network_len holds.
            fragment(p, dev, rt.nextHopHi(dh), rt.nextHopLo(dl), mtu);
            return true;
        }
        inet6.neigh().output(dev, rt.nextHopHi(dh), rt.nextHopLo(dl), p);
        return true;
    }

    /**
     * Whether {@code p} is a GSO packet every segment of which fits {@code mtu}: the IPv6 header and any extension
     * headers, the transport header (TCP's data offset, UDP's 8 bytes) and one segment's payload.
     */
    static boolean gsoSegmentsFit(Packet p, int mtu) {
        if (!p.isGso()) {
            return false;
        }
        int l4hdr = p.gsoType() == Packet.GSO_TCPV6
                ? (p.buf().getUnsignedByte(p.transport() + 12) >>> 4) * 4
                : p.gsoType() == Packet.GSO_UDP ? 8 : 0;
        return p.transport() - p.network() + l4hdr + p.gsoSize() <= mtu;
    }

    /**
     * ip6_fragment (the copying path) for a local datagram with no extension headers: a fragment header after the
     * fixed one, pieces whose data are multiples of 8 except the last, one identification for all.
     */
    private void fragment(Packet p, Device dev, long nh, long nl, int mtu) {
        ByteBuf b = p.buf();
        int net = p.network();
        ip.wrap(b, net);
        int nextHeader = ip.nextHeader();
        int left = ip.payloadLength();
        int data = p.transport();
        int room = (mtu - Ipv6Packet.HEADER_LEN - FRAG_HDR_LEN) & ~7;
        int id = ++nextFragId;
        int offset = 0;
        int created = 0;
        while (left > 0) {
            int len = Math.min(left, room);
            Packet f = Packet.allocate(Buffers.HEADROOM, L2 + Ipv6Packet.HEADER_LEN + FRAG_HDR_LEN + len);
            ByteBuf fb = f.buf();
            int s = f.start();
            fb.writerIndex(s + L2 + Ipv6Packet.HEADER_LEN + FRAG_HDR_LEN + len);
            fb.setBytes(s + L2, b, net, Ipv6Packet.HEADER_LEN);
            int fh = s + L2 + Ipv6Packet.HEADER_LEN;
            fb.setByte(fh, nextHeader);
            fb.setByte(fh + 1, 0);
            left -= len;
            fb.setShort(fh + 2, offset | (left > 0 ? 1 : 0));
            fb.setInt(fh + 4, id);
            fb.setBytes(fh + FRAG_HDR_LEN, b, data, len);
            fb.setShort(s + L2 + Ipv6Packet.PAYLOAD_LEN, FRAG_HDR_LEN + len);
            fb.setByte(s + L2 + Ipv6Packet.NEXT_HEADER, Ipv6Packet.NEXTHDR_FRAGMENT);
            f.setNetwork(s + L2);
            f.setTransport(fh);
            f.setDev(p.dev());
            offset += len;
            data += len;
            created++;
            inet6.neigh().output(dev, nh, nl, f);
        }
        ns.mib().inc(Mib.Ip6FragOKs);
        ns.mib().add(Mib.Ip6FragCreates, created);
        p.release();
    }
}
