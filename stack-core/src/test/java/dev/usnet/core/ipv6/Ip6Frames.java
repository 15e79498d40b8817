package dev.usnet.core.ipv6;

import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.NdOption;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** Frames a test sends into an IPv6 stack: Ethernet, the fixed header, then an ICMPv6 message or a fragment. */
final class Ip6Frames {
    private Ip6Frames() {}

    /** An ICMPv6 message {@code body} (type, code, checksum placeholder, rest) with its checksum filled. */
    static byte[] icmp(long ethDst, long ethSrc, Ipv6Addr src, Ipv6Addr dst, int hopLimit, byte[] body) {
        ByteBuf b = Unpooled.buffer(EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + body.length);
        b.writerIndex(EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + body.length);
        EthernetFrame.write(b, 0, ethDst, ethSrc, EthernetFrame.ETH_P_IPV6);
        int ip = EthernetFrame.HEADER_LEN;
        Ipv6Packet.writeHeader(b, ip, 0, 0, body.length, Ipv6Packet.NEXTHDR_ICMPV6, hopLimit, src.hi(), src.lo(),
                dst.hi(), dst.lo());
        b.setBytes(ip + Ipv6Packet.HEADER_LEN, body);
        Icmpv6Packet.fillChecksum(b, ip, ip + Ipv6Packet.HEADER_LEN, body.length);
        byte[] out = new byte[b.writerIndex()];
        b.getBytes(0, out);
        return out;
    }

    /** A neighbour advertisement for {@code target} with the given flags and a target link-layer address option. */
    static byte[] na(long ethDst, long ethSrc, Ipv6Addr src, Ipv6Addr dst, Ipv6Addr target, int flags, long tllao) {
        ByteBuf m = Unpooled.buffer(32);
        m.writerIndex(32);
        m.setByte(0, Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT);
        m.setInt(4, flags);
        target.write(m, 8);
        NdOption.writeLinkAddress(m, 24, NdOption.TARGET_LL_ADDR, tllao);
        return icmp(ethDst, ethSrc, src, dst, 255, bytes(m));
    }

    /** A neighbour solicitation for {@code target}; {@code sllao} 0 leaves the option out (duplicate detection). */
    static byte[] ns(long ethDst, long ethSrc, Ipv6Addr src, Ipv6Addr dst, Ipv6Addr target, long sllao) {
        int len = sllao != 0 ? 32 : 24;
        ByteBuf m = Unpooled.buffer(len);
        m.writerIndex(len);
        m.setByte(0, Icmpv6Packet.NEIGHBOUR_SOLICITATION);
        target.write(m, 8);
        if (sllao != 0) {
            NdOption.writeLinkAddress(m, 24, NdOption.SOURCE_LL_ADDR, sllao);
        }
        return icmp(ethDst, ethSrc, src, dst, 255, bytes(m));
    }

    /** An echo request with {@code dataLen} bytes of data, as a whole ICMPv6 message (for fragmenting). */
    static byte[] echoMessage(Ipv6Addr src, Ipv6Addr dst, int id, int seq, int dataLen) {
        ByteBuf b = Unpooled.buffer(Ipv6Packet.HEADER_LEN + 8 + dataLen);
        b.writerIndex(Ipv6Packet.HEADER_LEN + 8 + dataLen);
        Ipv6Packet.writeHeader(b, 0, 0, 0, 8 + dataLen, Ipv6Packet.NEXTHDR_ICMPV6, 64, src.hi(), src.lo(), dst.hi(),
                dst.lo());
        b.setByte(Ipv6Packet.HEADER_LEN, Icmpv6Packet.ECHO_REQUEST);
        b.setShort(Ipv6Packet.HEADER_LEN + 4, id);
        b.setShort(Ipv6Packet.HEADER_LEN + 6, seq);
        for (int i = 0; i < dataLen; i++) {
            b.setByte(Ipv6Packet.HEADER_LEN + 8 + i, 'a' + i % 26);
        }
        Icmpv6Packet.fillChecksum(b, 0, Ipv6Packet.HEADER_LEN, 8 + dataLen);
        byte[] out = new byte[Ipv6Packet.HEADER_LEN + 8 + dataLen];
        b.getBytes(Ipv6Packet.HEADER_LEN, out, 0, 8 + dataLen);
        return out;
    }

    /**
     * A fragment of {@code message} (an upper-layer message of next header {@code nextHeader}): its bytes from
     * {@code offset} ({@code len} of them), with the more-fragments flag {@code more} and identification {@code id}.
     */
    static byte[] fragment(long ethDst, long ethSrc, Ipv6Addr src, Ipv6Addr dst, int nextHeader, byte[] message,
                           int offset, int len, boolean more, int id) {
        int total = EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + 8 + len;
        ByteBuf b = Unpooled.buffer(total);
        b.writerIndex(total);
        EthernetFrame.write(b, 0, ethDst, ethSrc, EthernetFrame.ETH_P_IPV6);
        int ip = EthernetFrame.HEADER_LEN;
        Ipv6Packet.writeHeader(b, ip, 0, 0, 8 + len, Ipv6Packet.NEXTHDR_FRAGMENT, 64, src.hi(), src.lo(), dst.hi(),
                dst.lo());
        int fh = ip + Ipv6Packet.HEADER_LEN;
        b.setByte(fh, nextHeader);
        b.setShort(fh + 2, offset | (more ? 1 : 0));
        b.setInt(fh + 4, id);
        b.setBytes(fh + 8, message, offset, len);
        return bytes(b);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.writerIndex()];
        b.getBytes(0, out);
        return out;
    }

    /** The ICMPv6 type of an IPv6 frame, or -1 when it carries no ICMPv6 right after the fixed header. */
    static int icmpType(byte[] f) {
        if (f.length < 62 || (((f[12] & 0xff) << 8) | (f[13] & 0xff)) != EthernetFrame.ETH_P_IPV6
                || (f[20] & 0xff) != Ipv6Packet.NEXTHDR_ICMPV6) {
            return -1;
        }
        return f[54] & 0xff;
    }

    /** The 16-byte address at {@code off} of a frame. */
    static Ipv6Addr addr(byte[] f, int off) {
        return Ipv6Addr.read(Unpooled.wrappedBuffer(f), off);
    }
}
