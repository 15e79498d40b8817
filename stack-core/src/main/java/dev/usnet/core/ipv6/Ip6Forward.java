package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;

/**
 * ip6_forward: the forwarding knob, hop limit (time exceeded at 1 or 0), a redirect when the packet leaves by the
 * link it came in on (it is still forwarded), a link-local source never leaves its link (beyond scope), no
 * fragmentation at routers (packet too big with the next hop's MTU), then the hop limit decremented in a private
 * header and the packet handed to the neighbour layer. Unshared packets with headroom enough allocate nothing.
 */
public final class Ip6Forward {
    private final Netns ns;
    private final Ipv6 inet6;
    private final Ipv6Packet ip = new Ipv6Packet();

    public Ip6Forward(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /** Owns {@code p}; {@code rt} is the unicast route chosen for its destination. */
    public void forward(Packet p, Route6 rt) {
        Device in = p.dev();
        if (ns.knobs().effective(Ipv6Sysctl.FORWARDING, ns.conf(in)) == 0) {
            ns.mib().inc(Mib.Ip6InAddrErrors);
            ns.drop(p, DropReason.IP6_NOT_FORWARDING);
            return;
        }
        if (p.pktType() != Packet.PACKET_HOST) {
            ns.drop(p, DropReason.OTHERHOST);
            return;
        }
        ip.wrap(p.buf(), p.network());
        if (ip.hopLimit() <= 1) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            inet6.icmp().send(p, Icmpv6Packet.TIME_EXCEED, Icmpv6Packet.CODE_EXC_HOPLIMIT, 0);
            ns.drop(p, DropReason.IP6_HOP_LIMIT);
            return;
        }
        Device out = rt.dev();
        long dh = ip.dstHi();
        long dl = ip.dstLo();
        if (out == in) {
            // Leaving by the link it came in on: the sender has a better first hop (RFC 4861 §8.2); rate limited
            // per destination here and per source in the redirect itself.
            long th = rt.nextHopHi(dh);
            long tl = rt.nextHopLo(dl);
            if (inet6.redirectAllowed(dh, dl)) {
                inet6.ndisc().sendRedirect(p, th, tl);
            }
        } else {
            long sh = ip.srcHi();
            long sl = ip.srcLo();
            if ((sh == 0 && sl == 0) || Ipv6Addr.isMulticast(sh) || (sh == 0 && sl == 1)) {
                ns.mib().inc(Mib.Ip6InAddrErrors);
                ns.drop(p, DropReason.IP6_INVALID_ADDRESS);
                return;
            }
            if (Ipv6Addr.isLinkLocalUnicast(sh)) {
                inet6.icmp().send(p, Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_NOT_NEIGHBOUR, 0);
                ns.mib().inc(Mib.Ip6InAddrErrors);
                ns.drop(p, DropReason.IP6_BEYOND_SCOPE);
                return;
            }
        }
        int mtu = Math.max(out.mtu(), Ipv6Packet.MIN_MTU);
        if (ip.totalLength() > mtu && !Ip6Output.gsoSegmentsFit(p, mtu)) {
            inet6.icmp().send(p, Icmpv6Packet.PKT_TOOBIG, 0, mtu);
            ns.mib().inc(Mib.Ip6InTooBigErrors);
            ns.mib().inc(Mib.Ip6FragFails);
            ns.drop(p, DropReason.IP6_PKT_TOO_BIG);
            return;
        }
        // skb_cow(skb, dst->dev->hard_header_len): the fixed header becomes private before the hop limit changes.
        boolean editable = p.makeWritable(p.network() - p.start() + Ipv6Packet.HEADER_LEN, out.llReservedSpace(),
                ns.knobs().get(CowSysctl.FORWARD_COW), ns.cow());
        ip.wrap(p.buf(), p.network());
        if (editable) {
            ip.decrementHopLimit();
        }
        p.setIpFlags(p.ipFlags() | Packet.IPSKB_FORWARDED);
        ns.mib().inc(Mib.Ip6OutForwDatagrams);
        inet6.neigh().output(out, rt.nextHopHi(dh), rt.nextHopLo(dl), p);
    }
}
