package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;

/**
 * ip_forward: TTL check, DF/MTU check, copy-on-write per {@code usnet.forward.cow} (for a shared packet, or one
 * without the headroom the outgoing device needs), TTL decrement with an
 * incremental checksum, ICMP redirect when the packet leaves by the interface it came in on (it is still
 * forwarded), option processing, then output with fragmentation. Unshared packets with headroom enough allocate
 * nothing here.
 */
public final class IpForward {
    private final Netns ns;
    private final Ipv4 inet;
    private final Ipv4Packet ip = new Ipv4Packet();
    private final NfHooks hooks;

    public IpForward(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
        this.hooks = inet.netfilter().hooks();
    }

    /** Owns {@code p}; {@code rt} is the unicast route chosen for its destination. */
    public void forward(Packet p, Route rt) {
        if (p.pktType() != Packet.PACKET_HOST) {
            ns.drop(p, DropReason.OTHERHOST);
            return;
        }
        ip.wrap(p.buf(), p.network());
        if (ip.ttl() <= 1) {
            ns.mib().inc(Mib.IpInHdrErrors);
            inet.icmp().send(p, IcmpPacket.TIME_EXCEEDED, IcmpPacket.CODE_EXC_TTL, 0);
            ns.drop(p, DropReason.IP_TTL_EXPIRED);
            return;
        }
        int mtu = rt.dev().mtu();
        if (exceedsMtu(p, mtu)) {
            ns.mib().inc(Mib.IpFragFails);
            inet.icmp().send(p, IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_FRAG_NEEDED, mtu);
            ns.drop(p, DropReason.IP_FRAG_NEEDED);
            return;
        }
        int headLen = p.transport() - p.start();
        // skb_cow(skb, LL_RESERVED_SPACE(dev) + dst->header_len): private headers, and room for the outgoing
        // link header (usnet has no xfrm, so header_len is 0).
        boolean editable = p.makeWritable(headLen, rt.dev().llReservedSpace(), ns.knobs().get(CowSysctl.FORWARD_COW), ns.cow());
        ip.wrap(p.buf(), p.network());
        int dst = ip.dst();
        if (editable) {
            ip.decrementTtl();
        }
        if ((p.ipFlags() & Packet.IPSKB_DOREDIRECT) != 0) {
            inet.icmp().sendRedirect(p, rt.nextHop(dst));
        }
        p.setIpFlags(p.ipFlags() | Packet.IPSKB_FORWARDED);
        if (hooks.active(NfHook.FORWARD)) {
            p = hooks.run(NfHook.FORWARD, p, p.dev(), rt.dev());
            if (p == null) {
                return;
            }
            ip.wrap(p.buf(), p.network());
        }
        ns.mib().inc(Mib.IpForwDatagrams);
        if (editable && ip.headerLength() > Ipv4Packet.MIN_HEADER_LEN) {
            int src = rt.prefSrc() != 0 ? rt.prefSrc() : inet.devinet().selectSource(rt.dev(), rt.nextHop(dst));
            if (IpOptions.forward(p, p.buf(), p.network(), src)) {
                ip.fillChecksum();
            }
        }
        inet.ipOutput().finishOutput(p, rt.dev(), rt.nextHop(dst));
    }

    /** ip_exceeds_mtu: DF set and too big; a GSO packet counts by the size of its segments. */
    private boolean exceedsMtu(Packet p, int mtu) {
        int len = ip.totalLength();
        if (len <= mtu || !ip.dontFragment()) {
            return false;
        }
        if (p.isGso()) {
            int hdrs = p.transport() - p.network() + 20;
            return p.gsoSize() + hdrs > mtu;
        }
        return true;
    }
}
