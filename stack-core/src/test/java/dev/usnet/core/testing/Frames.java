package dev.usnet.core.testing;

import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** Builds test frames as byte arrays with usnet's own wire writers. */
public final class Frames {
    private Frames() {}

    /** An Ethernet + IPv4 + UDP frame with a valid UDP checksum. */
    public static byte[] udp(long srcMac, long dstMac, String src, String dst, int ttl, int payloadLen, int id,
                             boolean df) {
        int len = EthernetFrame.HEADER_LEN + 20 + 8 + payloadLen;
        ByteBuf b = Unpooled.buffer(len);
        b.writerIndex(len);
        EthernetFrame.write(b, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        for (int i = 0; i < payloadLen; i++) {
            b.setByte(14 + 28 + i, 'a' + (i % 26));
        }
        int s = Ipv4Addr.parse(src);
        int d = Ipv4Addr.parse(dst);
        UdpDatagram.write(b, 14 + 20, 1000, 2000, payloadLen, s, d);
        Ipv4Packet.writeHeader(b, 14, 0, 20 + 8 + payloadLen, id, df ? Ipv4Packet.FLAG_DF : 0, ttl,
                Ipv4Packet.PROTO_UDP, s, d);
        byte[] a = new byte[len];
        b.getBytes(0, a);
        return a;
    }

    /** An Ethernet + IPv6 + UDP frame carrying {@code payload}, hop limit 64, its UDP checksum right. */
    public static byte[] udp6(long srcMac, long dstMac, Ipv6Addr src, Ipv6Addr dst, int srcPort, int dstPort,
                              byte[] payload) {
        int ulen = 8 + payload.length;
        int ip = EthernetFrame.HEADER_LEN;
        int t = ip + Ipv6Packet.HEADER_LEN;
        ByteBuf b = Unpooled.buffer(t + ulen).writerIndex(t + ulen);
        EthernetFrame.write(b, 0, dstMac, srcMac, EthernetFrame.ETH_P_IPV6);
        Ipv6Packet.writeHeader(b, ip, 0, 0, ulen, Ipv6Packet.NEXTHDR_UDP, 64, src.hi(), src.lo(), dst.hi(), dst.lo());
        b.setShort(t, srcPort);
        b.setShort(t + 2, dstPort);
        b.setShort(t + 4, ulen);
        b.setBytes(t + 8, payload);
        b.setShort(t + 6, Checksum.finish(Checksum.add(b, t, ulen,
                Ipv6Packet.pseudoHeaderSum(b, ip, ulen, Ipv6Packet.NEXTHDR_UDP))));
        byte[] a = new byte[b.writerIndex()];
        b.getBytes(0, a);
        return a;
    }

    /** A frame of {@code len} bytes with the given addresses and ethertype, payload filled with a counter. */
    public static byte[] raw(long srcMac, long dstMac, int type, int len) {
        byte[] a = new byte[len];
        ByteBuf b = Unpooled.wrappedBuffer(a);
        EthernetFrame.write(b, 0, dstMac, srcMac, type);
        for (int i = 14; i < len; i++) {
            a[i] = (byte) i;
        }
        return a;
    }

    /** An Ethernet/IPv4 ARP frame. */
    public static byte[] arp(long ethSrc, long ethDst, int op, long sha, String spa, long tha, String tpa) {
        ByteBuf b = Unpooled.buffer(42).writerIndex(42);
        EthernetFrame.write(b, 0, ethDst, ethSrc, EthernetFrame.ETH_P_ARP);
        dev.usnet.core.wire.ArpPacket.write(b, 14, op, sha, Ipv4Addr.parse(spa), tha, Ipv4Addr.parse(tpa));
        byte[] a = new byte[42];
        b.getBytes(0, a);
        return a;
    }

    /** Recomputes the IPv4 header checksum of a frame in place (after a test edited the header). */
    public static void fixIpChecksum(byte[] f) {
        ByteBuf b = Unpooled.wrappedBuffer(f);
        b.setShort(14 + 10, 0);
        b.setShort(14 + 10, Checksum.compute(b, 14, (f[14] & 0xf) * 4));
    }

    public static int u16(byte[] f, int off) {
        return ((f[off] & 0xff) << 8) | (f[off + 1] & 0xff);
    }

    public static int u32(byte[] f, int off) {
        return (u16(f, off) << 16) | u16(f, off + 2);
    }
}
