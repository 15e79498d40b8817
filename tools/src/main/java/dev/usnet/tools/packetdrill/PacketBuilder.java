package dev.usnet.tools.packetdrill;

import java.util.List;

/**
 * Builds the packets the script sends ({@code <} lines): TCP segments and ICMP errors quoting a segment of the
 * stack's, with IP, TCP and ICMP checksums filled in. Addresses are 4 bytes (IPv4 packets) or 16 (IPv6 packets,
 * ICMPv6 errors). Values are live (already mapped by {@link Flow}).
 */
final class PacketBuilder {
    private static final int TTL = 64;
    static final int IPV6_HEADER_LEN = 40;
    private int ipId = 1;

    /** A TCP segment from {@code src} to {@code dst} (both 4 or both 16 bytes); the payload is zeros. */
    byte[] tcp(byte[] src, byte[] dst, int ecn, int srcPort, int dstPort, long seq, long ack, int flags, int window,
               int urg, List<TcpOptionSpec> options, int payloadLength) {
        int optLen = optionsLength(options);
        int tcpLen = 20 + optLen + payloadLength;
        int ipLen = ipHeaderLength(src, dst);
        byte[] p = new byte[ipLen + tcpLen];
        if (ipLen == IPV6_HEADER_LEN) {
            ipv6Header(p, 0, ecn, tcpLen, LivePacket.PROTO_TCP, src, dst);
        } else {
            ipHeader(p, ecn, p.length, LivePacket.PROTO_TCP, int32(src), int32(dst));
        }
        int t = ipLen;
        put16(p, t, srcPort);
        put16(p, t + 2, dstPort);
        put32(p, t + 4, seq);
        put32(p, t + 8, ack);
        p[t + 12] = (byte) (((20 + optLen) / 4) << 4);
        p[t + 13] = (byte) flags;
        put16(p, t + 14, window);
        put16(p, t + 18, urg);
        writeOptions(p, t + 20, options);
        put16(p, t + 16, fold(sum(p, t, tcpLen, pseudoHeader(src, dst, LivePacket.PROTO_TCP, tcpLen))));
        return p;
    }

    /**
     * An ICMPv6 error (RFC 4443) from {@code src} quoting the IPv6 header and first 8 bytes of a TCP segment the
     * stack sent, as {@link #icmp} quotes for ICMPv4: enough for the stack to find the connection. {@code mtu} is
     * the packet-too-big MTU (a 32-bit field), 0 for other types.
     */
    byte[] icmpv6(byte[] src, byte[] dst, int type, int code, long mtu, byte[] quotedSrc, byte[] quotedDst,
                  int quotedSrcPort, int quotedDstPort, long quotedSeq, int quotedLen) {
        int icmpLen = 8 + IPV6_HEADER_LEN + 8;
        byte[] p = new byte[IPV6_HEADER_LEN + icmpLen];
        ipv6Header(p, 0, 0, icmpLen, LivePacket.PROTO_ICMPV6, src, dst);
        int c = IPV6_HEADER_LEN;
        p[c] = (byte) type;
        p[c + 1] = (byte) code;
        put32(p, c + 4, mtu);
        int q = c + 8;
        ipv6Header(p, q, 0, 20 + quotedLen, LivePacket.PROTO_TCP, quotedSrc, quotedDst);
        put16(p, q + IPV6_HEADER_LEN, quotedSrcPort);
        put16(p, q + IPV6_HEADER_LEN + 2, quotedDstPort);
        put32(p, q + IPV6_HEADER_LEN + 4, quotedSeq);
        put16(p, c + 2, fold(sum(p, c, icmpLen, pseudoHeader(src, dst, LivePacket.PROTO_ICMPV6, icmpLen))));
        return p;
    }

    private static int ipHeaderLength(byte[] src, byte[] dst) {
        if (src.length != dst.length || src.length != 4 && src.length != 16) {
            throw new IllegalArgumentException("addresses of " + src.length + " and " + dst.length + " bytes");
        }
        return src.length == 4 ? 20 : IPV6_HEADER_LEN;
    }

    /** Version 6, traffic class = the ECN bits, flow label 0, hop limit 64 (Linux's default). */
    private static void ipv6Header(byte[] p, int at, int ecn, int payloadLength, int nextHeader, byte[] src,
                                   byte[] dst) {
        p[at] = 0x60;
        p[at + 1] = (byte) ((ecn & 3) << 4);
        put16(p, at + 4, payloadLength);
        p[at + 6] = (byte) nextHeader;
        p[at + 7] = (byte) TTL;
        System.arraycopy(src, 0, p, at + 8, 16);
        System.arraycopy(dst, 0, p, at + 24, 16);
    }

    /** The pseudo-header sum: RFC 793's for IPv4 addresses, RFC 8200 §8.1's for IPv6 ones. */
    private static long pseudoHeader(byte[] src, byte[] dst, int protocol, int length) {
        long s = sum(src, 0, src.length, 0);
        s = sum(dst, 0, dst.length, s);
        return s + protocol + (length >>> 16) + (length & 0xFFFF);
    }

    private static int int32(byte[] a) {
        return (a[0] & 255) << 24 | (a[1] & 255) << 16 | (a[2] & 255) << 8 | (a[3] & 255);
    }

    /**
     * An ICMP error from {@code src} quoting the first 8 bytes of a TCP segment the stack sent
     * ({@code quotedSrc:quotedSrcPort → quotedDst:quotedDstPort}, sequence {@code quotedSeq}, {@code quotedLen}
     * payload bytes), as RFC 792 has routers quote: the IP header and 64 bits of the transport header.
     */
    byte[] icmp(int src, int dst, int type, int code, int mtu, int quotedSrc, int quotedDst, int quotedSrcPort,
                int quotedDstPort, long quotedSeq, int quotedLen) {
        int icmpLen = 8 + 20 + 8;
        byte[] p = new byte[20 + icmpLen];
        ipHeader(p, 0, p.length, LivePacket.PROTO_ICMP, src, dst);
        int c = 20;
        p[c] = (byte) type;
        p[c + 1] = (byte) code;
        put16(p, c + 6, mtu);
        int q = c + 8;
        ipHeader(p, q, 0, 20 + 20 + quotedLen, LivePacket.PROTO_TCP, quotedSrc, quotedDst);
        put16(p, q + 20, quotedSrcPort);
        put16(p, q + 22, quotedDstPort);
        put32(p, q + 24, quotedSeq);
        put16(p, c + 2, fold(sum(p, c, icmpLen, 0)));
        return p;
    }

    private void ipHeader(byte[] p, int ecn, int totalLength, int protocol, int src, int dst) {
        ipHeader(p, 0, ecn, totalLength, protocol, src, dst);
    }

    private void ipHeader(byte[] p, int at, int ecn, int totalLength, int protocol, int src, int dst) {
        p[at] = 0x45;
        p[at + 1] = (byte) ecn;
        put16(p, at + 2, totalLength);
        put16(p, at + 4, ipId++ & 0xFFFF);
        put16(p, at + 6, 0x4000); // DF: TCP over a path with PMTU discovery, as Linux sends
        p[at + 8] = (byte) TTL;
        p[at + 9] = (byte) protocol;
        put32(p, at + 12, Integer.toUnsignedLong(src));
        put32(p, at + 16, Integer.toUnsignedLong(dst));
        put16(p, at + 10, fold(sum(p, at, 20, 0)));
    }

    static int optionsLength(List<TcpOptionSpec> options) {
        if (options == null) {
            return 0;
        }
        int n = 0;
        for (TcpOptionSpec o : options) {
            n += switch (o) {
                case TcpOptionSpec.Eol e -> 1;
                case TcpOptionSpec.Nop x -> 1;
                case TcpOptionSpec.Mss m -> 4;
                case TcpOptionSpec.WindowScale w -> 3;
                case TcpOptionSpec.SackPermitted s -> 2;
                case TcpOptionSpec.Sack s -> 2 + 8 * s.blocks().size();
                case TcpOptionSpec.Timestamp t -> 10;
                case TcpOptionSpec.Unknown u -> throw new IllegalArgumentException("cannot send option " + u);
            };
        }
        // Padded with zeros (EOL) to a multiple of 4, as the data offset counts 32-bit words.
        return (n + 3) & ~3;
    }

    private static void writeOptions(byte[] p, int at, List<TcpOptionSpec> options) {
        if (options == null) {
            return;
        }
        int i = at;
        for (TcpOptionSpec o : options) {
            switch (o) {
                case TcpOptionSpec.Eol e -> p[i++] = 0;
                case TcpOptionSpec.Nop x -> p[i++] = 1;
                case TcpOptionSpec.Mss m -> {
                    p[i] = 2;
                    p[i + 1] = 4;
                    put16(p, i + 2, m.value());
                    i += 4;
                }
                case TcpOptionSpec.WindowScale w -> {
                    p[i] = 3;
                    p[i + 1] = 3;
                    p[i + 2] = (byte) w.shift();
                    i += 3;
                }
                case TcpOptionSpec.SackPermitted s -> {
                    p[i] = 4;
                    p[i + 1] = 2;
                    i += 2;
                }
                case TcpOptionSpec.Sack s -> {
                    p[i] = 5;
                    p[i + 1] = (byte) (2 + 8 * s.blocks().size());
                    i += 2;
                    for (long[] b : s.blocks()) {
                        put32(p, i, b[0]);
                        put32(p, i + 4, b[1]);
                        i += 8;
                    }
                }
                case TcpOptionSpec.Timestamp t -> {
                    p[i] = 8;
                    p[i + 1] = 10;
                    put32(p, i + 2, t.val());
                    put32(p, i + 6, t.ecr());
                    i += 10;
                }
                case TcpOptionSpec.Unknown u -> throw new IllegalArgumentException("cannot send option " + u);
            }
        }
    }

    private static long sum(byte[] p, int at, int len, long s) {
        int i = at;
        for (; i + 1 < at + len; i += 2) {
            s += (p[i] & 255) << 8 | (p[i + 1] & 255);
        }
        if (i < at + len) {
            s += (p[i] & 255) << 8;
        }
        return s;
    }

    private static int fold(long s) {
        while ((s >>> 16) != 0) {
            s = (s & 0xFFFF) + (s >>> 16);
        }
        return (int) (~s & 0xFFFF);
    }

    /** True when the IP header checksum and the TCP/ICMP checksum of a packet are right (IPv4 or IPv6). */
    static boolean checksumsValid(byte[] p) {
        if (p.length >= IPV6_HEADER_LEN && (p[0] >> 4 & 15) == 6) {
            int len = LivePacket.u16(p, 4);
            int next = p[6] & 255;
            if (IPV6_HEADER_LEN + len > p.length
                    || next != LivePacket.PROTO_TCP && next != LivePacket.PROTO_ICMPV6) {
                return true;
            }
            byte[] src = java.util.Arrays.copyOfRange(p, 8, 24);
            byte[] dst = java.util.Arrays.copyOfRange(p, 24, 40);
            return fold(sum(p, IPV6_HEADER_LEN, len, pseudoHeader(src, dst, next, len))) == 0;
        }
        int ihl = (p[0] & 15) * 4;
        if (fold(sum(p, 0, ihl, 0)) != 0) {
            return false;
        }
        int total = LivePacket.u16(p, 2);
        int proto = p[9] & 255;
        int src = (int) LivePacket.u32(p, 12);
        int dst = (int) LivePacket.u32(p, 16);
        if (proto == LivePacket.PROTO_TCP) {
            long s = (src >>> 16) + (src & 0xFFFF) + (dst >>> 16) + (dst & 0xFFFF) + proto + (total - ihl);
            return fold(sum(p, ihl, total - ihl, s)) == 0;
        }
        if (proto == LivePacket.PROTO_ICMP) {
            return fold(sum(p, ihl, total - ihl, 0)) == 0;
        }
        return true;
    }

    static void put16(byte[] p, int i, int v) {
        p[i] = (byte) (v >>> 8);
        p[i + 1] = (byte) v;
    }

    static void put32(byte[] p, int i, long v) {
        p[i] = (byte) (v >>> 24);
        p[i + 1] = (byte) (v >>> 16);
        p[i + 2] = (byte) (v >>> 8);
        p[i + 3] = (byte) v;
    }
}
