package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;

/**
 * IPv4 output: local packets get a header and a route (ip_local_out), then ip_finish_output fragments what
 * exceeds the MTU (ip_do_fragment, also re-fragmenting fragments) and hands each frame to the neighbour
 * layer.
 */
public final class IpOutput {
    /** Frame layout of a locally built packet: link-layer slot, 20-byte IP header, then L4. */
    public static final int L2 = EthernetFrame.HEADER_LEN;

    private final Netns ns;
    private final Ipv4 inet;
    private final Ipv4Packet ip = new Ipv4Packet();
    private final PathMtuCache pmtu = new PathMtuCache();
    private final NfHooks hooks;
    private int nextId;

    public IpOutput(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
        this.hooks = inet.netfilter().hooks();
        this.nextId = (int) ns.randomBelow(65536);
    }

    /**
     * A packet ready for an L4 payload of {@code l4Len} bytes: network() is the (unwritten) IP header,
     * transport() the L4 header, and the frame already has its full length.
     */
    public static Packet allocate(int l4Len) {
        return allocate(0, l4Len);
    }

    /** As {@link #allocate(int)} with room for {@code optLen} bytes of IP options (a multiple of 4). */
    public static Packet allocate(int optLen, int l4Len) {
        int hl = Ipv4Packet.MIN_HEADER_LEN + optLen;
        Packet p = Packet.allocate(Buffers.HEADROOM, L2 + hl + l4Len);
        int s = p.start();
        p.buf().writerIndex(s + L2 + hl + l4Len);
        p.setNetwork(s + L2);
        p.setTransport(s + L2 + hl);
        return p;
    }

    /** An IP identification for a locally built datagram. */
    public int nextId() {
        nextId = (nextId + 1) & 0xffff;
        return nextId;
    }

    /** The route a local packet to {@code dst} takes: local addresses go through loopback. Null: unreachable. */
    public Route routeOutput(int dst) {
        if (inet.devinet().isLocal(dst)) {
            return new Route(dst, 32, RouteType.LOCAL, 0, ns.loopback(), dst, 0, false);
        }
        Route r = inet.routes().lookup(dst);
        return r != null && r.type() == RouteType.UNICAST ? r : null;
    }

    /** The source address a local packet to {@code dst} over {@code rt} gets. */
    public int sourceFor(Route rt, int dst) {
        if (rt.prefSrc() != 0) {
            return rt.prefSrc();
        }
        return inet.devinet().selectSource(rt.dev(), rt.nextHop(dst));
    }

    /**
     * The path MTU of a local datagram to {@code dst} over {@code rt} (dst_mtu): the device's MTU, or lower when a
     * router reported a smaller one ({@link #updatePmtu}) that has not lapsed.
     */
    public int pathMtu(Route rt, int dst) {
        int devMtu = rt.dev().mtu();
        return rt.type() == RouteType.LOCAL || pmtu.isEmpty() ? devMtu : pmtu.mtu(dst, devMtu, ns.now());
    }

    /**
     * A "fragmentation needed" error reported {@code reportedMtu} towards {@code dst} (inet_csk_update_pmtu and
     * __ip_rt_update_pmtu): lowers the path MTU, never raises it, believes nothing below net.ipv4.route.min_pmtu
     * and forgets it after net.ipv4.route.mtu_expires seconds. Returns the path MTU afterwards.
     */
    public int updatePmtu(Route rt, int dst, int reportedMtu) {
        if (rt.type() == RouteType.LOCAL) {
            return rt.dev().mtu();
        }
        var knobs = ns.knobs();
        return pmtu.update(dst, reportedMtu, pathMtu(rt, dst), (int) knobs.get(Ipv4Sysctl.MIN_PMTU),
                knobs.get(Ipv4Sysctl.MTU_EXPIRES) * 1_000_000_000L, ns.now());
    }

    /**
     * ip_local_out for a packet from {@link #allocate}: writes the IP header (without options) and sends it.
     * Returns false, and frees the packet, when there is no route. {@code df} is the socket's wish
     * (IP_PMTUDISC_WANT): it is dropped when the path MTU to {@code dst} is locked at the floor
     * (ip_dont_fragment), so routers fragment what a path below 552 bytes cannot carry.
     */
    public boolean sendLocal(Packet p, Route rt, int src, int dst, int proto, int tos, int ttl, boolean df) {
        if (rt == null) {
            ns.mib().inc(Mib.IpOutNoRoutes);
            ns.drop(p, DropReason.IP_NOROUTE);
            return false;
        }
        if (df && !pmtu.isEmpty() && rt.type() != RouteType.LOCAL && pmtu.locked(dst, ns.now())) {
            df = false;
        }
        int totalLen = p.start() + p.length() - p.network();
        Ipv4Packet.writeHeader(p.buf(), p.network(), p.transport() - p.network(), tos, totalLen, nextId(),
                df ? Ipv4Packet.FLAG_DF : 0, ttl, proto, src, dst);
        ns.mib().inc(Mib.IpOutRequests);
        Device out = rt.type() == RouteType.LOCAL ? ns.loopback() : rt.dev();
        if (hooks.active(NfHook.LOCAL_OUT)) {
            // Rules see, and NAT may rewrite, the finished header.
            p = hooks.run(NfHook.LOCAL_OUT, p, null, out);
            if (p == null) {
                return true;
            }
            int natDst = p.buf().getInt(p.network() + 16);
            if (natDst != dst) {
                // ip_route_me_harder: an output destination NAT (a host reaching its own published port) sends the
                // packet where its new destination is routed, not where the old one was.
                rt = routeOutput(natDst);
                if (rt == null) {
                    ns.mib().inc(Mib.IpOutNoRoutes);
                    ns.drop(p, DropReason.IP_NOROUTE);
                    return true;
                }
                dst = natDst;
                out = rt.type() == RouteType.LOCAL ? ns.loopback() : rt.dev();
            }
        }
        if (rt.type() == RouteType.LOCAL) {
            if (hooks.active(NfHook.POST_ROUTING)) {
                p = hooks.run(NfHook.POST_ROUTING, p, null, out);
                if (p == null) {
                    return true;
                }
            }
            inet.neigh().output(ns.loopback(), dst, p);
            return true;
        }
        finishOutput(p, rt.dev(), rt.nextHop(dst), pathMtu(rt, dst));
        return true;
    }

    /** ip_finish_output for a forwarded packet: fragments when needed, then neighbour output. Owns {@code p}. */
    public void finishOutput(Packet p, Device dev, int nextHop) {
        finishOutput(p, dev, nextHop, dev.mtu());
    }

    /**
     * ip_finish_output with the path MTU {@code mtu}: a GSO packet passes when its segments fit it (the device, or
     * software GSO for one without the offload, cuts it: skb_gso_validate_network_len), any other packet when it
     * fits whole; beyond that, fragmentation, or for a local datagram with DF "fragmentation needed" reported to
     * ourselves (which is how a TCP socket learns the path MTU its queued segments outgrew).
     */
    private void finishOutput(Packet p, Device dev, int nextHop, int mtu) {
        if (hooks.active(NfHook.POST_ROUTING)) {
            // ip_output: source NAT and the confirmation of a new connection happen here, before fragmentation.
            p = hooks.run(NfHook.POST_ROUTING, p, null, dev);
            if (p == null) {
                return;
            }
        }
        ip.wrap(p.buf(), p.network());
        int len = ip.totalLength();
        if (len <= mtu || (p.isGso() && gsoSegmentsFit(p, mtu))) {
            inet.neigh().output(dev, nextHop, p);
            return;
        }
        if (ip.dontFragment() && (p.ipFlags() & Packet.IPSKB_FORWARDED) == 0) {
            // A local datagram with DF larger than the MTU: EMSGSIZE, reported to ourselves.
            ns.mib().inc(Mib.IpFragFails);
            inet.icmp().send(p, IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_FRAG_NEEDED, mtu);
            ns.drop(p, DropReason.IP_FRAG_NEEDED);
            return;
        }
        fragment(p, dev, nextHop, mtu);
    }

    /**
     * ip_do_fragment (the copying path): pieces of at most {@code mtu} bytes, data lengths multiples of 8
     * except the last, offsets relative to the original datagram (so fragments re-fragment correctly), MF on
     * all but the last unless the original had it, options without the copied bit blanked after the first.
     */
    private void fragment(Packet p, Device dev, int nextHop, int mtu) {
        if (p.csumState() == ChecksumState.PARTIAL) {
            completeTransportChecksum(p);
        }
        ByteBuf b = p.buf();
        int ipOff = p.network();
        int hlen = ip.headerLength();
        int left = ip.totalLength() - hlen;
        int dataOff = ipOff + hlen;
        int frag = ip.fragField();
        int offset = (frag & Ipv4Packet.OFFSET_MASK) * 8;
        // Linux blanks uncopied options only when the input starts the datagram (first_frag is offset == 0).
        boolean blankLater = offset == 0 && hlen > Ipv4Packet.MIN_HEADER_LEN;
        boolean notLastFrag = (frag & Ipv4Packet.FLAG_MF) != 0;
        if (mtu - hlen < 8) {
            ns.mib().inc(Mib.IpFragFails);
            ns.drop(p, DropReason.IP_FRAG_NEEDED);
            return;
        }
        int created = 0;
        boolean first = true;
        while (left > 0) {
            int len = left;
            if (len > mtu - hlen) {
                len = mtu - hlen;
            }
            if (len < left) {
                len &= ~7;
            }
            Packet f = Packet.allocate(Buffers.HEADROOM, L2 + hlen + len);
            ByteBuf fb = f.buf();
            int s = f.start();
            fb.writerIndex(s + L2 + hlen + len);
            fb.setBytes(s, b, p.start(), L2);
            fb.setBytes(s + L2, b, ipOff, hlen);
            fb.setBytes(s + L2 + hlen, b, dataOff, len);
            f.setNetwork(s + L2);
            f.setTransport(s + L2 + hlen);
            f.setDev(p.dev());
            f.setRxTimeNanos(p.rxTimeNanos());
            f.setIpFlags(p.ipFlags());
            Ipv4Packet fh = new Ipv4Packet().wrap(fb, s + L2);
            left -= len;
            int field = offset >>> 3;
            if (left > 0 || notLastFrag) {
                field |= Ipv4Packet.FLAG_MF;
            }
            fh.setFragField(field);
            fh.setTotalLength(hlen + len);
            if (!first && blankLater) {
                // Later fragments carry only the options marked "copied".
                IpOptions.blankUncopied(fb, s + L2);
            }
            fh.fillChecksum();
            first = false;
            offset += len;
            dataOff += len;
            created++;
            inet.neigh().output(dev, nextHop, f);
        }
        ns.mib().inc(Mib.IpFragOKs);
        ns.mib().add(Mib.IpFragCreates, created);
        p.release();
    }

    /** Whether every segment a GSO packet becomes fits {@code mtu}: its size plus the IP and transport headers. */
    private static boolean gsoSegmentsFit(Packet p, int mtu) {
        int l4hdr = p.gsoType() == Packet.GSO_TCPV4
                ? (p.buf().getUnsignedByte(p.transport() + 12) >>> 4) * 4
                : p.gsoType() == Packet.GSO_UDP ? 8 : 0;
        return p.transport() - p.network() + l4hdr + p.gsoSize() <= mtu;
    }

    private static void completeTransportChecksum(Packet p) {
        ByteBuf b = p.buf();
        int start = p.csumStart();
        int end = p.start() + p.length();
        int c = dev.usnet.core.wire.Checksum.compute(b, start, end - start);
        b.setShort(start + p.csumOffset(), c == 0 ? 0xffff : c);
        p.setChecksum(ChecksumState.NONE, 0, 0);
    }
}
