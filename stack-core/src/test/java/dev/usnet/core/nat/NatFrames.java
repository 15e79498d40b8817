package dev.usnet.core.nat;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/**
 * IPv4 datagrams as byte arrays, every checksum summed from scratch, and the checks that sum them again: what a
 * NAT rewrite is compared with.
 */
final class NatFrames {
    static final int ETH = 14;

    private NatFrames() {}

    static int a(String dotted) {
        return Ipv4Addr.parse(dotted);
    }

    /** An IPv4 header (20 bytes, checksum filled) followed by {@code l4}. */
    static byte[] ip(int proto, int src, int dst, int fragField, byte[] l4) {
        ByteBuffer b = ByteBuffer.allocate(20 + l4.length);
        b.put((byte) 0x45).put((byte) 0).putShort((short) (20 + l4.length)).putShort((short) 0x1234)
                .putShort((short) fragField).put((byte) 64).put((byte) proto).putShort((short) 0)
                .putInt(src).putInt(dst).put(l4);
        byte[] d = b.array();
        int c = ipSum(d, 0);
        d[10] = (byte) (c >>> 8);
        d[11] = (byte) c;
        return d;
    }

    static byte[] payload(int len, int seed) {
        byte[] p = new byte[len];
        for (int i = 0; i < len; i++) {
            p[i] = (byte) (seed * 31 + i * 7);
        }
        return p;
    }

    /** A TCP segment (20-byte header, ACK|PSH) with its checksum over the pseudo header of src, dst. */
    static byte[] tcp(int src, int sport, int dst, int dport, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(20 + data.length);
        b.putShort((short) sport).putShort((short) dport).putInt(0x11223344).putInt(0x55667788)
                .put((byte) 0x50).put((byte) 0x18).putShort((short) 4096).putShort((short) 0).putShort((short) 0)
                .put(data);
        byte[] s = b.array();
        put16(s, 16, l4Sum(s, 0, s.length, src, dst, Ipv4Packet.PROTO_TCP));
        return s;
    }

    /** A UDP datagram; with {@code checksum} false its checksum is 0 (none). */
    static byte[] udp(int src, int sport, int dst, int dport, byte[] data, boolean checksum) {
        ByteBuffer b = ByteBuffer.allocate(8 + data.length);
        b.putShort((short) sport).putShort((short) dport).putShort((short) (8 + data.length)).putShort((short) 0)
                .put(data);
        byte[] s = b.array();
        if (checksum) {
            int c = l4Sum(s, 0, s.length, src, dst, Ipv4Packet.PROTO_UDP);
            put16(s, 6, c == 0 ? 0xffff : c);
        }
        return s;
    }

    /** An ICMP message of {@code type}/{@code code}, rest of header {@code rest}, then {@code data}. */
    static byte[] icmp(int type, int code, int rest, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(8 + data.length);
        b.put((byte) type).put((byte) code).putShort((short) 0).putInt(rest).put(data);
        byte[] s = b.array();
        put16(s, 2, sum(s, 0, s.length, 0));
        return s;
    }

    /** The datagram in a packet: an Ethernet header in front, the network header index set. */
    static Packet packet(byte[] ipDatagram) {
        Packet p = Packet.allocate(Buffers.HEADROOM, ETH + ipDatagram.length);
        ByteBuf b = p.buf();
        b.writeZero(12);
        b.writeShort(0x0800);
        b.writeBytes(ipDatagram);
        p.setNetwork(p.start() + ETH);
        return p;
    }

    /** The datagram's bytes as the packet holds them now. */
    static byte[] datagram(Packet p) {
        byte[] d = new byte[p.buf().writerIndex() - p.network()];
        p.buf().getBytes(p.network(), d);
        return d;
    }

    static int u16(byte[] d, int off) {
        return (d[off] & 0xff) << 8 | (d[off + 1] & 0xff);
    }

    static int u32(byte[] d, int off) {
        return u16(d, off) << 16 | u16(d, off + 2);
    }

    static void put16(byte[] d, int off, int v) {
        d[off] = (byte) (v >>> 8);
        d[off + 1] = (byte) v;
    }

    /** The checksum of the IPv4 header at {@code off}, its own field counted as 0. */
    static int ipSum(byte[] d, int off) {
        int hl = (d[off] & 0x0f) * 4;
        byte[] h = java.util.Arrays.copyOfRange(d, off, off + hl);
        h[10] = 0;
        h[11] = 0;
        return sum(h, 0, hl, 0);
    }

    /** The checksum a TCP or UDP header gets for {@code d[off, off+len)} (its field counted as 0). */
    static int l4Sum(byte[] d, int off, int len, int src, int dst, int proto) {
        byte[] s = java.util.Arrays.copyOfRange(d, off, off + len);
        int field = proto == Ipv4Packet.PROTO_TCP ? 16 : 6;
        s[field] = 0;
        s[field + 1] = 0;
        return sum(s, 0, len, Checksum.pseudoHeader(src, dst, proto, len));
    }

    static int sum(byte[] d, int off, int len, long start) {
        ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(d, off, len);
        return Checksum.finish(Checksum.add(b, 0, len, start));
    }

    /** True when the region, its checksum field included, sums to all ones (with {@code start} added). */
    static boolean verifies(byte[] d, int off, int len, long start) {
        ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(d, off, len);
        return Checksum.finish(Checksum.add(b, 0, len, start)) == 0;
    }

    static boolean ipHeaderVerifies(byte[] d, int off) {
        return verifies(d, off, (d[off] & 0x0f) * 4, 0);
    }

    /** The transport checksum of the datagram {@code d} (no fragments) verifies with its own addresses. */
    static boolean l4Verifies(byte[] d) {
        int hl = (d[0] & 0x0f) * 4;
        int len = u16(d, 2) - hl;
        return verifies(d, hl, len, Checksum.pseudoHeader(u32(d, 12), u32(d, 16), d[9] & 0xff, len));
    }
}
