package dev.usnet.core.nftables;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.IpOutput;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;

/**
 * The replies of {@code reject} for IPv4 (nf_reject_ipv4): an ICMP destination unreachable through the stack's
 * ICMP, or a TCP RST built here as Linux's nf_send_reset builds it: addresses and ports swapped, no options, IP
 * identification 0 with DF, the TTL of net.ipv4.ip_default_ttl; when the offending segment carried an ACK the
 * reset's sequence number is that acknowledgment number and it carries no ACK, otherwise its sequence number is 0
 * and it acknowledges the segment's sequence number plus its SYN, FIN and payload. Nothing answers a fragment
 * after the first, a segment that is itself a reset, or one whose checksum is wrong.
 */
final class NfRejectIpv4 {
    private NfRejectIpv4() {}

    /** nf_send_unreach: ICMP destination unreachable with {@code code} about {@code p} (not consumed). */
    static void sendUnreachable(Ipv4 inet, Packet p, NftPktInfo pkt, int code) {
        if (pkt.fragoff != 0) {
            return;
        }
        if ((pkt.l4proto == Ipv4Packet.PROTO_TCP || pkt.l4proto == Ipv4Packet.PROTO_UDP) && !transportChecksumOk(p, pkt)) {
            return;
        }
        inet.icmp().send(p, IcmpPacket.DEST_UNREACH, code, 0);
    }

    /** nf_send_reset: a TCP RST answering {@code p} (not consumed), sent as a local packet. */
    static void sendReset(Ipv4 inet, Packet p, NftPktInfo pkt) {
        Netns ns = inet.netns();
        if (!pkt.hasTransport(Ipv4Packet.PROTO_TCP, TcpSegment.MIN_HEADER_LEN)) {
            return;
        }
        ByteBuf ob = pkt.buf;
        int oth = pkt.th;
        int oflags = ob.getUnsignedByte(oth + TcpSegment.FLAGS);
        if ((oflags & TcpSegment.RST) != 0 || !transportChecksumOk(p, pkt)) {
            return;
        }
        int osrc = ob.getInt(pkt.nh + Ipv4Packet.SRC);
        int odst = ob.getInt(pkt.nh + Ipv4Packet.DST);
        if (Ipv4Addr.isMulticast(odst) || inet.devinet().isBroadcast(odst) || Ipv4Addr.isLimitedBroadcast(odst)) {
            return;
        }
        Route rt = inet.ipOutput().routeOutput(osrc);
        if (rt == null) {
            ns.mib().inc(Mib.IpOutNoRoutes);
            return;
        }
        Packet r = IpOutput.allocate(TcpSegment.MIN_HEADER_LEN);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setShort(t + TcpSegment.SRC_PORT, ob.getUnsignedShort(oth + TcpSegment.DST_PORT));
        b.setShort(t + TcpSegment.DST_PORT, ob.getUnsignedShort(oth + TcpSegment.SRC_PORT));
        int rflags;
        if ((oflags & TcpSegment.ACK_FLAG) != 0) {
            b.setInt(t + TcpSegment.SEQ, ob.getInt(oth + TcpSegment.ACK));
            b.setInt(t + TcpSegment.ACK, 0);
            rflags = TcpSegment.RST;
        } else {
            int dataOff = (ob.getUnsignedByte(oth + TcpSegment.DATA_OFF) >> 4) * 4;
            int payload = pkt.l4len - dataOff;
            int acked = ob.getInt(oth + TcpSegment.SEQ) + payload + ((oflags & TcpSegment.SYN) != 0 ? 1 : 0)
                    + ((oflags & TcpSegment.FIN) != 0 ? 1 : 0);
            b.setInt(t + TcpSegment.SEQ, 0);
            b.setInt(t + TcpSegment.ACK, acked);
            rflags = TcpSegment.RST | TcpSegment.ACK_FLAG;
        }
        b.setByte(t + TcpSegment.DATA_OFF, (TcpSegment.MIN_HEADER_LEN / 4) << 4);
        b.setByte(t + TcpSegment.FLAGS, rflags);
        b.setShort(t + TcpSegment.WINDOW, 0);
        b.setShort(t + TcpSegment.CHECKSUM, 0);
        b.setShort(t + TcpSegment.URGENT, 0);
        long sum = Checksum.pseudoHeader(odst, osrc, Ipv4Packet.PROTO_TCP, TcpSegment.MIN_HEADER_LEN);
        b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, TcpSegment.MIN_HEADER_LEN, sum)));
        int ttl = (int) ns.knobs().get(Ipv4Sysctl.DEFAULT_TTL);
        Ipv4Packet.writeHeader(b, r.network(), 0, Ipv4Packet.MIN_HEADER_LEN + TcpSegment.MIN_HEADER_LEN, 0,
                Ipv4Packet.FLAG_DF, ttl, Ipv4Packet.PROTO_TCP, odst, osrc);
        r.setPktType(Packet.PACKET_OUTGOING);
        sendLocal(inet, r, rt, osrc);
    }

    /** ip_local_out of a finished datagram: the output hooks, then loopback or the route's device. */
    private static void sendLocal(Ipv4 inet, Packet r, Route rt, int dst) {
        Netns ns = inet.netns();
        ns.mib().inc(Mib.IpOutRequests);
        boolean local = rt.type() == RouteType.LOCAL;
        Device out = local ? ns.loopback() : rt.dev();
        var hooks = inet.netfilter().hooks();
        r = hooks.run(NfHook.LOCAL_OUT, r, null, out);
        if (r == null) {
            return;
        }
        if (local) {
            r = hooks.run(NfHook.POST_ROUTING, r, null, out);
            if (r != null) {
                inet.neigh().output(ns.loopback(), dst, r);
            }
            return;
        }
        inet.ipOutput().finishOutput(r, rt.dev(), rt.nextHop(dst));
    }

    /**
     * nf_ip_checksum: the transport checksum of a received datagram is checked before it is answered (a locally
     * built one, whose checksum is still to be filled, and one a device verified pass). A UDP checksum of zero
     * means none.
     */
    private static boolean transportChecksumOk(Packet p, NftPktInfo pkt) {
        if (p.csumState() != ChecksumState.NONE) {
            return true;
        }
        if (pkt.l4proto == Ipv4Packet.PROTO_UDP && pkt.l4len >= 8 && pkt.buf.getUnsignedShort(pkt.th + 6) == 0) {
            return true;
        }
        ByteBuf b = pkt.buf;
        long sum = Checksum.pseudoHeader(b.getInt(pkt.nh + Ipv4Packet.SRC), b.getInt(pkt.nh + Ipv4Packet.DST),
                pkt.l4proto, pkt.l4len);
        return Checksum.finish(Checksum.add(b, pkt.th, pkt.l4len, sum)) == 0;
    }
}
