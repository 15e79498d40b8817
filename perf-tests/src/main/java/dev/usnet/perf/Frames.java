package dev.usnet.perf;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Frame headers for the benchmarks and the per-operation refill: a fresh pooled packet of the full frame
 * length whose headers are written from a template. The payload bytes are not written (forwarding never reads
 * them; they hold whatever the pool chunk held), so the refill costs the same for every frame size and the
 * size-dependent work measured is the stack's own.
 */
final class Frames {
    /** Ethernet + IPv4 (no options) + UDP: the bytes an IPv4 refill writes. */
    static final int ETH_IP_UDP = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + UdpDatagram.HEADER_LEN;

    /** Ethernet + IPv6 (no extension headers) + UDP: the bytes an IPv6 refill writes. */
    static final int ETH_IP6_UDP = EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + UdpDatagram.HEADER_LEN;

    private Frames() {}

    /**
     * Header bytes to stamp at the front of a frame. They are written as big-endian longs and a short tail,
     * because on JDK 25 Netty runs without sun.misc.Unsafe and a ByteBuf-to-ByteBuf or byte[] copy into a
     * pooled direct buffer allocates a ByteBuffer duplicate per call, which would pollute the B/op figures.
     */
    static final class Template {
        private final byte[] bytes;
        private final long[] words;
        private final int tail;

        Template(byte[] bytes) {
            this.bytes = bytes.clone();
            ByteBuf w = Unpooled.wrappedBuffer(this.bytes);
            words = new long[bytes.length / 8];
            for (int i = 0; i < words.length; i++) {
                words[i] = w.getLong(i * 8);
            }
            tail = words.length * 8;
        }

        void writeTo(ByteBuf b, int at) {
            long[] ws = words;
            for (int i = 0; i < ws.length; i++) {
                b.setLong(at + i * 8, ws[i]);
            }
            for (int i = tail; i < bytes.length; i++) {
                b.setByte(at + i, bytes[i]);
            }
        }
    }

    /** A bare Ethernet header (the bridge only reads MACs). */
    static Template ethernetHeader(long dst, long src, int type) {
        ByteBuf t = Unpooled.buffer(EthernetFrame.HEADER_LEN).writerIndex(EthernetFrame.HEADER_LEN);
        EthernetFrame.write(t, 0, dst, src, type);
        return new Template(t.array());
    }

    /**
     * Ethernet + IPv4 + UDP headers of a datagram whose IP total length is {@code ipTotalLen}; the UDP
     * checksum is 0 ("none", legal for UDP over IPv4) because the payload is never written.
     */
    static Template udpHeaders(long dstMac, long srcMac, int src, int dst, int ttl, int ipTotalLen, boolean df) {
        if (ipTotalLen < Ipv4Packet.MIN_HEADER_LEN + UdpDatagram.HEADER_LEN || ipTotalLen > 0xffff) {
            throw new IllegalArgumentException("IPv4 total length " + ipTotalLen + " out of range 28..65535");
        }
        ByteBuf t = Unpooled.buffer(ETH_IP_UDP).writerIndex(ETH_IP_UDP);
        EthernetFrame.write(t, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        int udp = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN;
        t.setShort(udp, 40000);
        t.setShort(udp + 2, 5001);
        t.setShort(udp + 4, ipTotalLen - Ipv4Packet.MIN_HEADER_LEN);
        t.setShort(udp + 6, 0);
        Ipv4Packet.writeHeader(t, EthernetFrame.HEADER_LEN, 0, ipTotalLen, 0x1234, df ? Ipv4Packet.FLAG_DF : 0, ttl,
                Ipv4Packet.PROTO_UDP, src, dst);
        return new Template(t.array());
    }

    /**
     * Ethernet + IPv6 + UDP headers of a datagram of {@code ipLen} bytes counting the 40-byte fixed header. The
     * UDP checksum (mandatory over IPv6) is left 0: the payload is never written, and a router does not check it.
     */
    static Template udp6Headers(long dstMac, long srcMac, Ipv6Addr src, Ipv6Addr dst, int hopLimit, int ipLen) {
        if (ipLen < Ipv6Packet.HEADER_LEN + UdpDatagram.HEADER_LEN || ipLen > Ipv6Packet.HEADER_LEN + 0xffff) {
            throw new IllegalArgumentException("IPv6 length " + ipLen + " out of range 48..65575");
        }
        ByteBuf t = Unpooled.buffer(ETH_IP6_UDP).writerIndex(ETH_IP6_UDP);
        EthernetFrame.write(t, 0, dstMac, srcMac, EthernetFrame.ETH_P_IPV6);
        int payloadLen = ipLen - Ipv6Packet.HEADER_LEN;
        Ipv6Packet.writeHeader(t, EthernetFrame.HEADER_LEN, 0, 0x12345, payloadLen, Ipv6Packet.NEXTHDR_UDP, hopLimit,
                src.hi(), src.lo(), dst.hi(), dst.lo());
        int udp = EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN;
        t.setShort(udp, 40000);
        t.setShort(udp + 2, 5001);
        t.setShort(udp + 4, payloadLen);
        t.setShort(udp + 6, 0);
        return new Template(t.array());
    }

    /**
     * A fresh pooled packet of {@code frameLen} bytes starting with {@code template}'s bytes: what a driver's
     * receive would hand the stack. The caller owns it.
     */
    static Packet refill(Template template, int frameLen) {
        Packet p = Packet.allocate(Buffers.HEADROOM, frameLen);
        ByteBuf b = p.buf();
        int s = b.writerIndex();
        template.writeTo(b, s);
        b.writerIndex(s + frameLen);
        return p;
    }

    static String mac(long m) {
        return MacAddr.format(m);
    }
}
