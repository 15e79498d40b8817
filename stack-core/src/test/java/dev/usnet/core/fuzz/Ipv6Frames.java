package dev.usnet.core.fuzz;

import static dev.usnet.core.fuzz.FrameScript.put16;
import static dev.usnet.core.fuzz.FrameScript.put16at;
import static dev.usnet.core.fuzz.FrameScript.put32;
import static dev.usnet.core.fuzz.FrameScript.put48;
import static dev.usnet.core.fuzz.FrameScript.put8;

import dev.usnet.core.wire.Checksum;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The IPv6 frames of a {@link FrameScript}: a packet built from fields (traffic class, flow label, hop limit,
 * addresses, a chain of up to four extension headers — hop-by-hop and destination options with Pad1, PadN, router
 * alert, jumbo payload and unknown options of each action, routing headers of type 0, 2 or any, fragment headers —
 * then ICMPv6, UDP, TCP, no next header or anything); a neighbour-discovery message (solicitation, advertisement,
 * router solicitation and advertisement, redirect) with its options; and a datagram cut into fragments. Lengths
 * and upper-layer checksums (over the IPv6 pseudo-header) are right unless a flag breaks them.
 */
final class Ipv6Frames {
    static final int ETH_P_IPV6 = 0x86dd;
    static final int HOP = 0;
    static final int TCP = 6;
    static final int UDP = 17;
    static final int ROUTING = 43;
    static final int FRAGMENT = 44;
    static final int ICMPV6 = 58;
    static final int NONE = 59;
    static final int DEST = 60;

    private Ipv6Frames() {}

    /** An address from the target's (pairs in {@code ctx.addrs6}) or a special one, as {hi, lo}. */
    static long[] addr(FuzzBytes in, FrameScript.Context ctx) {
        int n = ctx.addrs6().length / 2;
        int s = in.u8() % (n + 12);
        if (s < n) {
            return new long[] {ctx.addrs6()[2 * s], ctx.addrs6()[2 * s + 1]};
        }
        return switch (s - n) {
            case 0 -> new long[] {0, 0};
            case 1 -> new long[] {0, 1};
            case 2 -> new long[] {0xff02_0000_0000_0000L, 1};
            case 3 -> new long[] {0xff02_0000_0000_0000L, 2};
            case 4 -> {
                // The solicited-node group of one of the target's addresses (or of a random one).
                long lo = n > 0 ? ctx.addrs6()[2 * in.choose(n) + 1] : in.u32();
                yield new long[] {0xff02_0000_0000_0000L, 0x0000_0001_ff00_0000L | (lo & 0xff_ffff)};
            }
            case 5 -> new long[] {0xfe80_0000_0000_0000L, in.u16()};
            case 6 -> new long[] {0xff00_0000_0000_0000L | ((long) (in.u8() & 0xff) << 48), in.u16()};
            case 7 -> new long[] {0, 0x0000_ffff_c612_0000L | in.u16()};
            case 8 -> new long[] {0x2001_0db8_0000_0000L | ((long) in.u16() << 16), in.u16()};
            case 9 -> new long[] {0xfd00_0000_0000_0000L, in.u32()};
            case 10 -> new long[] {0xff05_0000_0000_0000L, 2};
            default -> new long[] {((long) in.u32() << 32) | (in.u32() & 0xffff_ffffL),
                ((long) in.u32() << 32) | (in.u32() & 0xffff_ffffL)};
        };
    }

    /**
     * The Ethernet header of an IPv6 frame to {@code dst}: below 128 the selector byte takes the MAC the address
     * maps to (33:33 and its low 32 bits for a group, the target's first MAC otherwise) with no tags; from 128 on,
     * any header {@link FrameScript#ethernet} makes.
     */
    private static void ethernet(ByteArrayOutputStream out, FuzzBytes in, FrameScript.Context ctx, long[] dst) {
        if (in.u8() >= 128) {
            FrameScript.ethernet(out, in, ctx, ETH_P_IPV6);
            return;
        }
        boolean group = (dst[0] >>> 56) == 0xff;
        put48(out, group ? 0x3333_0000_0000L | (dst[1] & 0xffff_ffffL) : ctx.macs()[0]);
        put48(out, FrameScript.mac(in, ctx));
        put16(out, ETH_P_IPV6);
    }

    private static void put64(ByteArrayOutputStream o, long v) {
        put32(o, (int) (v >>> 32));
        put32(o, (int) v);
    }

    private static void putAddr(ByteArrayOutputStream o, long[] a) {
        put64(o, a[0]);
        put64(o, a[1]);
    }

    /** Hop-by-hop or destination options: a TLV list padded to a multiple of 8 with the next-header byte first. */
    private static byte[] optionsHeader(FuzzBytes in, int next) {
        ByteArrayOutputStream tlv = new ByteArrayOutputStream();
        int n = 1 + in.u8() % 4;
        for (int i = 0; i < n && tlv.size() < 200; i++) {
            int t = in.u8();
            switch (t % 7) {
                case 0 -> put8(tlv, 0);
                case 1 -> {
                    int len = in.u8() % 8;
                    put8(tlv, 1);
                    put8(tlv, len);
                    tlv.writeBytes(new byte[len]);
                }
                case 2 -> {
                    put8(tlv, 5);
                    put8(tlv, 2);
                    put16(tlv, in.u8() % 3);
                }
                case 3 -> {
                    put8(tlv, 0xc2);
                    put8(tlv, 4);
                    put32(tlv, in.u32());
                }
                case 4 -> {
                    // An unknown option; its top two bits say what a node that does not know it does.
                    put8(tlv, (in.u8() & 0xc0) | 0x1e);
                    int len = in.u8() % 6;
                    put8(tlv, len);
                    tlv.writeBytes(in.bytes(len));
                }
                case 5 -> {
                    put8(tlv, in.u8());
                    put8(tlv, in.u8());
                }
                default -> tlv.writeBytes(in.bytes(in.u8() % 16));
            }
        }
        int total = (2 + tlv.size() + 7) & ~7;
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        put8(h, next);
        put8(h, total / 8 - 1);
        h.writeBytes(tlv.toByteArray());
        while (h.size() < total) {
            put8(h, 0);
        }
        return h.toByteArray();
    }

    /** A routing header: type 0 (deprecated, dropped), 2 (mobile IPv6), or any, with segments left chosen. */
    private static byte[] routingHeader(FuzzBytes in, FrameScript.Context ctx, int next) {
        int t = in.u8();
        int type = switch (t % 4) {
            case 0 -> 0;
            case 1 -> 2;
            case 2 -> 4;
            default -> in.u8();
        };
        int addrs = type == 2 ? 1 : in.u8() % 4;
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        put8(h, next);
        put8(h, addrs * 2);
        put8(h, type);
        put8(h, in.u8() < 128 ? (in.u8() % (addrs + 2)) : 0);
        put32(h, 0);
        for (int i = 0; i < addrs; i++) {
            putAddr(h, addr(in, ctx));
        }
        return h.toByteArray();
    }

    private static byte[] fragmentHeader(int next, int offset, boolean more, int id) {
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        put8(h, next);
        put8(h, 0);
        put16(h, (offset & ~7) | (more ? 1 : 0));
        put32(h, id);
        return h.toByteArray();
    }

    /** An ICMPv6 message body (type, code, checksum 0, rest), errors quoting an IPv6 packet. */
    private static byte[] icmp6(FuzzBytes in, FrameScript.Context ctx, int depth) {
        int t = in.u8();
        int type = switch (t % 12) {
            case 0 -> 128;
            case 1 -> 129;
            case 2 -> 1;
            case 3 -> 2;
            case 4 -> 3;
            case 5 -> 4;
            case 6 -> 130;
            case 7 -> 131;
            case 8 -> 132;
            case 9 -> 143;
            case 10 -> 133 + in.u8() % 5;
            default -> in.u8();
        };
        if (type >= 133 && type <= 137) {
            return ndBody(in, ctx, type);
        }
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put8(o, type);
        put8(o, in.u8() % 8);
        put16(o, 0);
        put32(o, in.u32());
        if (type < 128 && depth == 0 && in.u8() < 160) {
            // An error quotes as much of the offending packet as fits in the minimum MTU.
            byte[] quoted = ipv6(in, ctx, 1);
            int cut = Math.min(quoted.length, 14 + 40 + 8 + in.u8() * 4);
            o.write(quoted, Math.min(14, quoted.length), Math.max(0, cut - 14));
        } else if (type == 130 || type == 131 || type == 132) {
            putAddr(o, addr(in, ctx));
        } else {
            o.writeBytes(in.bytes(in.u8()));
        }
        return o.toByteArray();
    }

    /** An ND option: source/target link-layer address, prefix information, MTU, nonce, redirected header, raw. */
    private static void ndOption(ByteArrayOutputStream o, FuzzBytes in, FrameScript.Context ctx) {
        int t = in.u8();
        switch (t % 7) {
            case 0, 1 -> {
                put8(o, 1 + t % 7);
                put8(o, 1);
                put48(o, FrameScript.mac(in, ctx));
            }
            case 2 -> {
                put8(o, 3);
                put8(o, 4);
                put8(o, in.u8() % 129);
                put8(o, in.u8() & 0xc0);
                put32(o, in.u8() < 128 ? 86400 : in.u32());
                put32(o, in.u8() < 128 ? 14400 : in.u32());
                put32(o, 0);
                long[] p = addr(in, ctx);
                put64(o, p[0]);
                put64(o, 0);
            }
            case 3 -> {
                put8(o, 5);
                put8(o, 1);
                put16(o, 0);
                put32(o, in.u8() < 128 ? 1280 + in.u16() : in.u32());
            }
            case 4 -> {
                put8(o, 14);
                put8(o, 1);
                put48(o, in.u48());
            }
            case 5 -> {
                // A length of 0 is invalid and must stop the walk; other lengths may run past the message.
                put8(o, in.u8());
                int len = in.u8() % 4;
                put8(o, len);
                o.writeBytes(in.bytes(Math.max(0, len * 8 - 2)));
            }
            default -> {
                put8(o, 4);
                int words = 1 + in.u8() % 4;
                put8(o, words);
                o.writeBytes(new byte[6]);
                o.writeBytes(in.bytes(words * 8 - 8));
            }
        }
    }

    /** The body of an ND message of {@code type} with up to four options. */
    private static byte[] ndBody(FuzzBytes in, FrameScript.Context ctx, int type) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put8(o, type);
        put8(o, in.u8() < 224 ? 0 : in.u8());
        put16(o, 0);
        switch (type) {
            case 133 -> put32(o, 0);
            case 134 -> {
                put8(o, in.u8());
                put8(o, in.u8() & 0xf8);
                put16(o, in.u8() < 128 ? 1800 : in.u16());
                put32(o, in.u32());
                put32(o, in.u32());
            }
            case 135 -> {
                put32(o, 0);
                putAddr(o, addr(in, ctx));
            }
            case 136 -> {
                put32(o, (in.u8() & 0xe0) << 24);
                putAddr(o, addr(in, ctx));
            }
            default -> {
                put32(o, 0);
                putAddr(o, addr(in, ctx));
                putAddr(o, addr(in, ctx));
            }
        }
        int n = in.u8() % 5;
        for (int i = 0; i < n; i++) {
            ndOption(o, in, ctx);
        }
        return o.toByteArray();
    }

    /** The upper-layer checksum field's offset for {@code proto}, or -1. */
    private static int checksumField(int proto) {
        return switch (proto) {
            case ICMPV6 -> 2;
            case TCP -> 16;
            case UDP -> 6;
            default -> -1;
        };
    }

    /** Writes the upper-layer checksum of {@code l4} (in place) over the IPv6 pseudo-header. */
    static void fixL4(byte[] l4, int off, int len, int proto, long[] src, long[] dst) {
        int field = checksumField(proto);
        if (field < 0 || len < field + 2 || l4.length < off + len) {
            return;
        }
        l4[off + field] = 0;
        l4[off + field + 1] = 0;
        ByteArrayOutputStream ph = new ByteArrayOutputStream();
        putAddr(ph, src);
        putAddr(ph, dst);
        long sum = Checksum.add(Unpooled.wrappedBuffer(ph.toByteArray()), 0, 32, 0) + len + proto;
        int c = Checksum.finish(Checksum.add(Unpooled.wrappedBuffer(l4), off, len, sum));
        if (proto == UDP && c == 0) {
            c = 0xffff;
        }
        put16at(l4, off + field, c);
    }

    static byte[] ipv6(FuzzBytes in, FrameScript.Context ctx) {
        return ipv6(in, ctx, 0);
    }

    /**
     * An Ethernet/IPv6 frame; a flags byte read last breaks parts of it (0: none): the payload length, the
     * checksum, a truncation, trailing bytes.
     */
    private static byte[] ipv6(FuzzBytes in, FrameScript.Context ctx, int depth) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        long[] src = addr(in, ctx);
        long[] dst = addr(in, ctx);
        ethernet(out, in, ctx, dst);
        int l3 = out.size();
        int tc = in.u8();
        int flow = in.u16();
        int hop = in.u8() ^ 64;
        int hdrs = in.u8();
        int count = hdrs < 128 ? 0 : 1 + (hdrs & 3);
        int[] kinds = new int[count];
        for (int i = 0; i < count; i++) {
            kinds[i] = in.u8();
        }
        int protoSel = in.u8();
        int proto = switch (protoSel % 6) {
            case 0 -> UDP;
            case 1 -> ICMPV6;
            case 2 -> TCP;
            case 3 -> NONE;
            case 4 -> protoSel;
            default -> in.u8();
        };
        byte[] l4 = switch (proto) {
            case ICMPV6 -> icmp6(in, ctx, depth);
            case TCP -> FrameScript.tcp(in);
            case UDP -> FrameScript.udp(in);
            default -> in.bytes(in.u8());
        };
        // The chain is built back to front, each header naming the one after it.
        List<byte[]> chain = new ArrayList<>();
        int next = proto;
        for (int i = count - 1; i >= 0; i--) {
            byte[] h = switch (kinds[i] % 5) {
                case 0 -> optionsHeader(in, next);
                case 1 -> optionsHeader(in, next);
                case 2 -> routingHeader(in, ctx, next);
                case 3 -> fragmentHeader(next, in.u16(), in.u8() < 64, in.u32());
                default -> {
                    byte[] raw = in.bytes(8 * (1 + in.u8() % 3));
                    if (raw.length > 0) {
                        raw[0] = (byte) next;
                    }
                    yield raw;
                }
            };
            chain.add(0, h);
            next = switch (kinds[i] % 5) {
                case 0 -> i == 0 ? HOP : DEST;
                case 1 -> DEST;
                case 2 -> ROUTING;
                case 3 -> FRAGMENT;
                default -> kinds[i];
            };
        }
        int extLen = 0;
        for (byte[] h : chain) {
            extLen += h.length;
        }
        int breaks = in.u8();
        if ((breaks & 4) == 0) {
            fixL4(l4, 0, l4.length, proto, src, dst);
        }
        int payloadLen = (breaks & 1) != 0 ? in.u16() : extLen + l4.length;
        put32(out, (6 << 28) | (tc << 20) | flow);
        put16(out, payloadLen);
        put8(out, next);
        put8(out, hop);
        putAddr(out, src);
        putAddr(out, dst);
        for (byte[] h : chain) {
            out.writeBytes(h);
        }
        out.writeBytes(l4);
        if ((breaks & 16) != 0) {
            out.writeBytes(in.bytes(in.u8() % 64));
        }
        byte[] f = out.toByteArray();
        if ((breaks & 32) != 0) {
            f = Arrays.copyOf(f, Math.max(0, f.length - 1 - in.u8() % 60));
        }
        if ((breaks & 2) != 0 && f.length > l3) {
            f[l3] = (byte) (in.u8() & 0xf0);
        }
        return f;
    }

    /**
     * A neighbour-discovery message as a node sends it: hop limit 255 (unless the input says otherwise), from one
     * of the addresses worth picking to another, no extension headers, checksum right unless broken.
     */
    static byte[] ndisc(FuzzBytes in, FrameScript.Context ctx) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(96);
        long[] src = addr(in, ctx);
        long[] dst = addr(in, ctx);
        ethernet(out, in, ctx, dst);
        int hopSel = in.u8();
        int hop = hopSel < 240 ? 255 : in.u8();
        int type = 133 + in.u8() % 5;
        byte[] body = ndBody(in, ctx, type);
        int breaks = in.u8();
        if ((breaks & 4) == 0) {
            fixL4(body, 0, body.length, ICMPV6, src, dst);
        }
        put32(out, 6 << 28);
        put16(out, body.length);
        put8(out, ICMPV6);
        put8(out, hop);
        putAddr(out, src);
        putAddr(out, dst);
        out.writeBytes(body);
        byte[] f = out.toByteArray();
        if ((breaks & 32) != 0) {
            f = Arrays.copyOf(f, Math.max(0, f.length - 1 - in.u8() % 40));
        }
        return f;
    }

    /**
     * A UDP or ICMPv6 echo datagram cut into fragments at chosen 8-byte boundaries, each behind a fragment header
     * (optionally after a hop-by-hop header), sent in a chosen order, possibly duplicated, left out, moved to
     * overlap its neighbour, or with M cleared early; an atomic fragment when the datagram is one piece.
     */
    static List<byte[]> fragments(FuzzBytes in, FrameScript.Context ctx) {
        long[] src = addr(in, ctx);
        long[] dst = addr(in, ctx);
        ByteArrayOutputStream eth = new ByteArrayOutputStream(18);
        ethernet(eth, in, ctx, dst);
        byte[] ethHeader = eth.toByteArray();
        int flags = in.u8();
        boolean icmp = (flags & 1) != 0;
        boolean hopByHop = (flags & 2) != 0;
        int id = in.u32();
        int hop = 1 + in.u8() % 64;
        int payloadLen = 8 + in.u16() % 4000;
        byte[] l4 = new byte[payloadLen];
        for (int i = 0; i < l4.length; i++) {
            l4[i] = (byte) (i * 7);
        }
        int proto = icmp ? ICMPV6 : UDP;
        if (icmp) {
            l4[0] = (byte) 128;
            l4[1] = 0;
        } else {
            put16at(l4, 0, 5000);
            put16at(l4, 2, in.u8() < 128 ? 7 : 9);
            put16at(l4, 4, payloadLen);
        }
        fixL4(l4, 0, payloadLen, proto, src, dst);
        int n = 1 + in.u8() % 8;
        List<Integer> cuts = new ArrayList<>();
        cuts.add(0);
        for (int i = 1; i < n; i++) {
            cuts.add((payloadLen * in.u8() / 256) & ~7);
        }
        cuts.add(payloadLen);
        cuts.sort(Integer::compare);
        List<byte[]> frags = new ArrayList<>();
        List<Integer> keys = new ArrayList<>();
        for (int i = 0; i + 1 < cuts.size(); i++) {
            int off = cuts.get(i);
            int end = cuts.get(i + 1);
            if (end <= off && i + 2 < cuts.size()) {
                continue;
            }
            int mode = in.u8();
            if ((mode & 1) != 0) {
                continue;
            }
            if ((mode & 2) != 0 && off >= 8) {
                off -= 8;
            }
            boolean more = end < payloadLen && (mode & 4) == 0;
            ByteArrayOutputStream f = new ByteArrayOutputStream();
            f.writeBytes(ethHeader);
            int ext = (hopByHop ? 8 : 0) + 8;
            put32(f, 6 << 28);
            put16(f, ext + end - off);
            put8(f, hopByHop ? HOP : FRAGMENT);
            put8(f, hop);
            putAddr(f, src);
            putAddr(f, dst);
            if (hopByHop) {
                // Router alert (MLD), then PadN to 8 bytes.
                f.writeBytes(new byte[] {FRAGMENT, 0, 5, 2, 0, 0, 1, 0});
            }
            f.writeBytes(fragmentHeader(proto, off, more, id));
            f.write(l4, off, end - off);
            int copies = (mode & 8) != 0 ? 2 : 1;
            byte[] frame = f.toByteArray();
            for (int c = 0; c < copies; c++) {
                frags.add(frame);
                keys.add(in.u8());
            }
        }
        Integer[] idx = new Integer[frags.size()];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, (a, b) -> Integer.compare(keys.get(a), keys.get(b)));
        List<byte[]> ordered = new ArrayList<>();
        for (int i : idx) {
            ordered.add(frags.get(i));
        }
        return ordered;
    }
}
