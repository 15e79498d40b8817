package dev.usnet.tools.packetdrill;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A packet the stack sent, decoded from its IPv4 or IPv6 bytes: addresses (4 or 16 bytes), and the TCP header with
 * options (or the ICMP/ICMPv6 type and code). Sequence numbers are unsigned 32-bit in longs. For IPv6,
 * {@code protocol} is the fixed header's next header (usnet and Linux send TCP without extension headers) and
 * {@code ecn} the low two bits of the traffic class.
 */
record LivePacket(byte[] src, byte[] dst, int protocol, int ecn, int srcPort, int dstPort, long seq, long ack, int flags,
                  int window, int urg, List<TcpOptionSpec> options, int payloadLength, int icmpType, int icmpCode,
                  long micros) {

    static final int PROTO_ICMP = 1;
    static final int PROTO_TCP = 6;
    static final int PROTO_ICMPV6 = 58;

    boolean tcp() {
        return protocol == PROTO_TCP;
    }

    /** An ICMP (IPv4) or ICMPv6 (IPv6) message. */
    boolean icmp() {
        return protocol == (ipv6() ? PROTO_ICMPV6 : PROTO_ICMP);
    }

    boolean ipv6() {
        return src.length == 16;
    }

    /** Decodes an IPv4 or IPv6 packet; fails with a message naming what is wrong. */
    static LivePacket decode(byte[] p, long micros) {
        if (p.length >= 1 && (p[0] >> 4 & 15) == 6) {
            return decode6(p, micros);
        }
        if (p.length < 20 || (p[0] >> 4 & 15) != 4) {
            throw new IllegalArgumentException("not an IPv4 or IPv6 packet (" + p.length + " bytes)");
        }
        int ihl = (p[0] & 15) * 4;
        int total = u16(p, 2);
        if (total > p.length || ihl < 20 || total < ihl) {
            throw new IllegalArgumentException("truncated IPv4 packet: total length " + total + ", have "
                    + p.length);
        }
        int ecn = p[1] & 3;
        int proto = p[9] & 255;
        byte[] src = Arrays.copyOfRange(p, 12, 16);
        byte[] dst = Arrays.copyOfRange(p, 16, 20);
        return decodeTransport(p, src, dst, proto, ecn, ihl, total, PROTO_ICMP, micros);
    }

    private static LivePacket decode6(byte[] p, long micros) {
        if (p.length < PacketBuilder.IPV6_HEADER_LEN) {
            throw new IllegalArgumentException("truncated IPv6 header (" + p.length + " bytes)");
        }
        int total = PacketBuilder.IPV6_HEADER_LEN + u16(p, 4);
        if (total > p.length) {
            throw new IllegalArgumentException("truncated IPv6 packet: payload length " + u16(p, 4) + ", have "
                    + (p.length - PacketBuilder.IPV6_HEADER_LEN));
        }
        int ecn = p[1] >> 4 & 3;
        byte[] src = Arrays.copyOfRange(p, 8, 24);
        byte[] dst = Arrays.copyOfRange(p, 24, 40);
        return decodeTransport(p, src, dst, p[6] & 255, ecn, PacketBuilder.IPV6_HEADER_LEN, total, PROTO_ICMPV6,
                micros);
    }

    private static LivePacket decodeTransport(byte[] p, byte[] src, byte[] dst, int proto, int ecn, int ihl,
                                              int total, int icmpProto, long micros) {
        if (proto == PROTO_TCP) {
            int t = ihl;
            if (total - t < 20) {
                throw new IllegalArgumentException("truncated TCP header");
            }
            int doff = (p[t + 12] >> 4 & 15) * 4;
            if (doff < 20 || t + doff > total) {
                throw new IllegalArgumentException("bad TCP data offset " + doff);
            }
            List<TcpOptionSpec> opts = decodeOptions(p, t + 20, t + doff);
            return new LivePacket(src, dst, proto, ecn, u16(p, t), u16(p, t + 2), u32(p, t + 4), u32(p, t + 8),
                    p[t + 13] & 255, u16(p, t + 14), u16(p, t + 18), opts, total - t - doff, -1, -1, micros);
        }
        if (proto == icmpProto && total - ihl >= 4) {
            return new LivePacket(src, dst, proto, ecn, 0, 0, 0, 0, 0, 0, 0, List.of(), total - ihl - 8,
                    p[ihl] & 255, p[ihl + 1] & 255, micros);
        }
        return new LivePacket(src, dst, proto, ecn, 0, 0, 0, 0, 0, 0, 0, List.of(), total - ihl, -1, -1, micros);
    }

    private static List<TcpOptionSpec> decodeOptions(byte[] p, int from, int to) {
        List<TcpOptionSpec> out = new ArrayList<>();
        int i = from;
        while (i < to) {
            int kind = p[i] & 255;
            if (kind == TcpOptionSpec.KIND_EOL) {
                out.add(new TcpOptionSpec.Eol());
                break;
            }
            if (kind == TcpOptionSpec.KIND_NOP) {
                out.add(new TcpOptionSpec.Nop());
                i++;
                continue;
            }
            if (i + 1 >= to) {
                throw new IllegalArgumentException("TCP option kind " + kind + " without a length");
            }
            int len = p[i + 1] & 255;
            if (len < 2 || i + len > to) {
                throw new IllegalArgumentException("TCP option kind " + kind + " with bad length " + len);
            }
            out.add(switch (kind) {
                case TcpOptionSpec.KIND_MSS -> new TcpOptionSpec.Mss(u16(p, i + 2));
                case TcpOptionSpec.KIND_WSCALE -> new TcpOptionSpec.WindowScale(p[i + 2] & 255);
                case TcpOptionSpec.KIND_SACK_PERMITTED -> new TcpOptionSpec.SackPermitted();
                case TcpOptionSpec.KIND_SACK -> {
                    List<long[]> blocks = new ArrayList<>();
                    for (int b = i + 2; b + 8 <= i + len; b += 8) {
                        blocks.add(new long[] {u32(p, b), u32(p, b + 4)});
                    }
                    yield new TcpOptionSpec.Sack(blocks);
                }
                case TcpOptionSpec.KIND_TIMESTAMP -> new TcpOptionSpec.Timestamp(u32(p, i + 2), u32(p, i + 6));
                default -> new TcpOptionSpec.Unknown(kind, len);
            });
            i += len;
        }
        return out;
    }

    static int u16(byte[] p, int i) {
        return (p[i] & 255) << 8 | (p[i + 1] & 255);
    }

    static long u32(byte[] p, int i) {
        return ((long) (p[i] & 255) << 24) | (p[i + 1] & 255) << 16 | (p[i + 2] & 255) << 8 | (p[i + 3] & 255);
    }
}
