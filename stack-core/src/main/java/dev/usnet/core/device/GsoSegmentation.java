package dev.usnet.core.device;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.buf.TxCompletion;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;

/**
 * Software GSO (skb_gso_segment) for a device that did not enable the offload: a TCPv4 or UDPv4 super-frame
 * becomes MSS-sized frames with their own IP total length, incrementing IP ID and full checksums; for TCP the
 * sequence number advances per segment, PSH and FIN stay on the last segment and CWR on the first only, as
 * tcp_gso_segment does. UDP (UDP_L4) segments each get a UDP header of their own.
 *
 * <p>TCPv6 (ipv6_gso_segment → tcp6_gso_segment) is the same TCP work under an IPv6 header: each segment's
 * payload length is rewritten, there is no IP ID and no header checksum to fill, and the TCP checksum covers the
 * IPv6 pseudo-header. Only a TCP header right behind the fixed 40-byte header is segmented (usnet's TCP sends no
 * extension headers); a super-frame with extension headers is left untouched (false), as for any unknown type.
 */
final class GsoSegmentation {
    private static final int ETH_P_IP = 0x0800;
    private static final int ETH_P_IPV6 = 0x86dd;

    private GsoSegmentation() {}

    /** Returns false (leaving {@code p} untouched) when the frame is not a GSO type handled here. */
    static boolean segment(Device dev, Packet p) {
        int type = p.gsoType();
        if (type != Packet.GSO_TCPV4 && type != Packet.GSO_UDP && type != Packet.GSO_TCPV6) {
            return false;
        }
        ByteBuf b = p.buf();
        int start = p.start();
        int ipOff = p.network();
        int wantEtherType = type == Packet.GSO_TCPV6 ? ETH_P_IPV6 : ETH_P_IP;
        if (ipOff < 0) {
            // Bridged frames were never parsed above L2: find the IP header behind Ethernet (and one VLAN tag).
            int et = b.getUnsignedShort(start + 12);
            ipOff = start + 14;
            if (et == 0x8100 || et == 0x88a8) {
                et = b.getUnsignedShort(start + 16);
                ipOff += 4;
            }
            if (et != wantEtherType) {
                return false;
            }
        }
        // The family's part: where the transport header starts, how long it and the payload are, and the
        // pseudo-header sum without its length word (both families' sums are plain word sums, so each segment adds
        // its own length to it).
        boolean v6 = type == Packet.GSO_TCPV6;
        boolean tcp = type != Packet.GSO_UDP;
        int iphl;
        int ipPayload;
        long pseudoBase;
        int id = 0;
        if (v6) {
            if (b.getUnsignedByte(ipOff + Ipv6Packet.NEXT_HEADER) != Ipv6Packet.NEXTHDR_TCP) {
                return false;
            }
            iphl = Ipv6Packet.HEADER_LEN;
            ipPayload = b.getUnsignedShort(ipOff + Ipv6Packet.PAYLOAD_LEN);
            pseudoBase = Ipv6Packet.pseudoHeaderSum(b, ipOff, 0, Ipv6Packet.NEXTHDR_TCP);
        } else {
            Ipv4Packet ip = new Ipv4Packet().wrap(b, ipOff);
            iphl = ip.headerLength();
            ipPayload = ip.totalLength() - iphl;
            pseudoBase = Checksum.pseudoHeader(ip.src(), ip.dst(), tcp ? Ipv4Packet.PROTO_TCP : Ipv4Packet.PROTO_UDP, 0);
            id = ip.id();
        }
        int l4Off = ipOff + iphl;
        int l4hl = tcp ? (b.getUnsignedByte(l4Off + TcpSegment.DATA_OFF) >>> 4) * 4 : UdpDatagram.HEADER_LEN;
        int l2 = ipOff - start;
        int headers = l2 + iphl + l4hl;
        int payload = ipPayload - l4hl;
        int mss = p.gsoSize();
        if (mss <= 0 || payload <= 0) {
            return false;
        }
        if (v6 && (l4hl < TcpSegment.MIN_HEADER_LEN || start + p.length() < l4Off + l4hl + payload)) {
            return false;
        }
        long seq = tcp ? b.getUnsignedInt(l4Off + TcpSegment.SEQ) : 0;
        int flags = tcp ? b.getUnsignedByte(l4Off + TcpSegment.FLAGS) : 0;
        int segs = (payload + mss - 1) / mss;
        // As tcp_gso_segment moves the destructor to every segment: the owner's charge for the super-frame is
        // split over its segments by payload (the last takes the rounding), so their completions add up to it.
        TxCompletion owner = p.owner();
        int charged = owner == null ? 0 : p.detachOwner();
        int given = 0;
        for (int i = 0; i < segs; i++) {
            int len = Math.min(mss, payload - i * mss);
            Packet s = Packet.allocate(Buffers.HEADROOM, headers + len);
            ByteBuf sb = s.buf();
            int ss = s.start();
            sb.writerIndex(ss + headers + len);
            sb.setBytes(ss, b, start, headers);
            sb.setBytes(ss + headers, b, l4Off + l4hl + i * mss, len);
            int sip = ss + l2;
            int sl4 = sip + iphl;
            s.setNetwork(sip);
            s.setTransport(sl4);
            s.setDev(p.dev());
            s.setRxTimeNanos(p.rxTimeNanos());
            int l4len = l4hl + len;
            if (v6) {
                sb.setShort(sip + Ipv6Packet.PAYLOAD_LEN, l4len);
            } else {
                Ipv4Packet sh = new Ipv4Packet().wrap(sb, sip);
                sh.setTotalLength(iphl + l4len);
                sb.setShort(sip + Ipv4Packet.ID, (id + i) & 0xffff);
                sh.fillChecksum();
            }
            if (tcp) {
                sb.setInt(sl4 + TcpSegment.SEQ, (int) (seq + (long) i * mss));
                int f = flags;
                if (i != segs - 1) {
                    f &= ~(TcpSegment.FIN | TcpSegment.PSH);
                }
                if (i != 0) {
                    f &= ~TcpSegment.CWR;
                }
                sb.setByte(sl4 + TcpSegment.FLAGS, f);
                sb.setShort(sl4 + TcpSegment.CHECKSUM, 0);
                sb.setShort(sl4 + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(sb, sl4, l4len, pseudoBase + l4len)));
            } else {
                sb.setShort(sl4 + UdpDatagram.LENGTH, l4len);
                sb.setShort(sl4 + UdpDatagram.CHECKSUM, 0);
                int c = Checksum.finish(Checksum.add(sb, sl4, l4len, pseudoBase + l4len));
                sb.setShort(sl4 + UdpDatagram.CHECKSUM, c == 0 ? 0xffff : c);
            }
            s.setChecksum(ChecksumState.NONE, 0, 0);
            if (owner != null) {
                int share = i == segs - 1 ? charged - given : (int) ((long) charged * len / payload);
                given += share;
                s.setOwner(owner, share);
            }
            dev.transmit(s);
        }
        p.release();
        return true;
    }
}
