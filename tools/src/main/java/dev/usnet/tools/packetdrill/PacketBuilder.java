package dev.usnet.tools.packetdrill;

import java.util.List;

/**
 * Builds the IPv4 packets the script sends ({@code <} lines): TCP segments and ICMP errors quoting a segment
 * of the stack's, with IP, TCP and ICMP checksums filled in. Values are live (already mapped by {@link Flow}).
 */
final class PacketBuilder {
    private static final int TTL = 64;
    private int ipId = 1;

    /** A TCP segment from {@code src} to {@code dst}; the payload is zeros. */
    byte[] tcp(int src, int dst, int ecn, int srcPort, int dstPort, long seq, long ack, int flags, int window,
               int urg, List<TcpOptionSpec> options, int payloadLength) {
        int optLen = optionsLength(options);
        int tcpLen = 20 + optLen + payloadLength;
        byte[] p = new byte[20 + tcpLen];
        ipHeader(p, ecn, p.length, LivePacket.PROTO_TCP, src, dst);
        int t = 20;
        put16(p, t, srcPort);
        put16(p, t + 2, dstPort);
        put32(p, t + 4, seq);
        put32(p, t + 8, ack);
        p[t + 12] = (byte) (((20 + optLen) / 4) << 4);
        p[t + 13] = (byte) flags;
        put16(p, t + 14, window);
        put16(p, t + 18, urg);
        writeOptions(p, t + 20, options);
        put16(p, t + 16, transportChecksum(p, src, dst, LivePacket.PROTO_TCP, t, tcpLen));
        return p;
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

    private static int transportChecksum(byte[] p, int src, int dst, int protocol, int at, int len) {
        long s = 0;
        s += (src >>> 16) + (src & 0xFFFF) + (dst >>> 16) + (dst & 0xFFFF);
        s += protocol + len;
        return fold(sum(p, at, len, s));
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

    /** True when the IP header checksum and the TCP/ICMP checksum of a packet are right. */
    static boolean checksumsValid(byte[] p) {
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
