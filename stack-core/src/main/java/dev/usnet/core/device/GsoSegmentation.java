package dev.usnet.core.device;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.buf.TxCompletion;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;

/**
 * Software GSO (skb_gso_segment) for a device that did not enable the offload: a TCPv4 or UDPv4 super-frame
 * becomes MSS-sized frames with their own IP total length, incrementing IP ID and full checksums; for TCP the
 * sequence number advances per segment, PSH and FIN stay on the last segment and CWR on the first only, as
 * tcp_gso_segment does. UDP (UDP_L4) segments each get a UDP header of their own.
 */
final class GsoSegmentation {
    private GsoSegmentation() {}

    /** Returns false (leaving {@code p} untouched) when the frame is not a GSO type handled here. */
    static boolean segment(Device dev, Packet p) {
        int type = p.gsoType();
        if (type != Packet.GSO_TCPV4 && type != Packet.GSO_UDP) {
            return false;
        }
        ByteBuf b = p.buf();
        int start = p.start();
        int ipOff = p.network();
        if (ipOff < 0) {
            // Bridged frames were never parsed above L2: find the IPv4 header behind Ethernet (and one VLAN tag).
            int et = b.getUnsignedShort(start + 12);
            ipOff = start + 14;
            if (et == 0x8100 || et == 0x88a8) {
                et = b.getUnsignedShort(start + 16);
                ipOff += 4;
            }
            if (et != 0x0800) {
                return false;
            }
        }
        Ipv4Packet ip = new Ipv4Packet().wrap(b, ipOff);
        int iphl = ip.headerLength();
        int l4Off = ipOff + iphl;
        int l4hl = type == Packet.GSO_TCPV4 ? (b.getUnsignedByte(l4Off + TcpSegment.DATA_OFF) >>> 4) * 4
                : UdpDatagram.HEADER_LEN;
        int l2 = ipOff - start;
        int headers = l2 + iphl + l4hl;
        int payload = ipOff + ip.totalLength() - (l4Off + l4hl);
        int mss = p.gsoSize();
        if (mss <= 0 || payload <= 0) {
            return false;
        }
        int id = ip.id();
        long seq = type == Packet.GSO_TCPV4 ? b.getUnsignedInt(l4Off + TcpSegment.SEQ) : 0;
        int flags = type == Packet.GSO_TCPV4 ? b.getUnsignedByte(l4Off + TcpSegment.FLAGS) : 0;
        int src = ip.src();
        int dst = ip.dst();
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
            Ipv4Packet sh = new Ipv4Packet().wrap(sb, sip);
            sh.setTotalLength(iphl + l4hl + len);
            sb.setShort(sip + Ipv4Packet.ID, (id + i) & 0xffff);
            sh.fillChecksum();
            int l4len = l4hl + len;
            if (type == Packet.GSO_TCPV4) {
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
                int c = Checksum.finish(Checksum.add(sb, sl4, l4len,
                        Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_TCP, l4len)));
                sb.setShort(sl4 + TcpSegment.CHECKSUM, c);
            } else {
                sb.setShort(sl4 + UdpDatagram.LENGTH, l4len);
                sb.setShort(sl4 + UdpDatagram.CHECKSUM, 0);
                int c = Checksum.finish(Checksum.add(sb, sl4, l4len,
                        Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_UDP, l4len)));
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
