package dev.usnet.core.fuzz;

import dev.usnet.core.wire.Checksum;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A fuzz input read as a script of frames for a namespace under test: raw frames, or frames built from fields
 * (Ethernet with VLAN tags, IPv4 with options, ICMP, UDP, TCP with options, ARP; IPv6 with extension headers,
 * ICMPv6 with neighbour-discovery options, neighbour solicitations and advertisements), whole datagrams of either
 * family cut into fragments sent in any order with duplicates, overlaps and gaps, and pauses of virtual time
 * between them. Built
 * frames get correct lengths and checksums unless the script says to break one, so the fuzzer reaches the code
 * behind the checksum checks as well as the checks. Addresses and MACs are picked from the target's own
 * (its ports, hosts, broadcast, multicast, martians) or given raw.
 */
public final class FrameScript {
    /** Where the script goes: a frame into a port, or time passing. */
    public interface Sink {
        void frame(int port, byte[] frame);

        void advance(long nanos);
    }

    /**
     * The target's ports and the addresses worth picking: MACs, IPv4 addresses, and IPv6 addresses as pairs of
     * longs (high half, low half) — the target's own, its neighbours', link-local ones, routes' destinations.
     */
    public record Context(int ports, long[] macs, int[] addrs, long[] addrs6) {}

    static final int OP_RAW = 0;
    static final int OP_IPV4 = 1;
    static final int OP_ARP = 2;
    static final int OP_TIME = 3;
    static final int OP_FRAGMENTS = 4;
    static final int OP_IPV6 = 5;
    static final int OP_FRAGMENTS6 = 6;
    static final int OP_NDISC = 7;
    /** Op codes 0-4 keep their meaning from before IPv6 (the corpus's built and fixture seeds use them). */
    private static final int OPS = 8;

    /** Upper bound of steps per input, so one input stays one small unit of work. */
    public static final int MAX_STEPS = 48;

    private FrameScript() {}

    /** Runs the script in {@code in} against {@code sink}; returns the number of steps. */
    public static int run(FuzzBytes in, Context ctx, Sink sink) {
        int steps = 0;
        while (in.hasMore() && steps < MAX_STEPS) {
            steps++;
            switch (in.u8() % OPS) {
                case OP_RAW -> {
                    int port = in.choose(ctx.ports);
                    sink.frame(port, in.bytes(in.u16() % 1600));
                }
                case OP_IPV4 -> {
                    int port = in.choose(ctx.ports);
                    sink.frame(port, ipv4(in, ctx));
                }
                case OP_ARP -> {
                    int port = in.choose(ctx.ports);
                    sink.frame(port, arp(in, ctx));
                }
                case OP_TIME -> sink.advance(1L << (in.u8() % 37));
                case OP_FRAGMENTS -> {
                    int port = in.choose(ctx.ports);
                    for (byte[] f : fragments(in, ctx)) {
                        sink.frame(port, f);
                    }
                }
                case OP_IPV6 -> {
                    int port = in.choose(ctx.ports);
                    sink.frame(port, Ipv6Frames.ipv6(in, ctx));
                }
                case OP_FRAGMENTS6 -> {
                    int port = in.choose(ctx.ports);
                    for (byte[] f : Ipv6Frames.fragments(in, ctx)) {
                        sink.frame(port, f);
                    }
                }
                default -> {
                    int port = in.choose(ctx.ports);
                    sink.frame(port, Ipv6Frames.ndisc(in, ctx));
                }
            }
        }
        return steps;
    }

    /**
     * A script of IPv6 frames alone: raw frames with the IPv6 EtherType, built packets, fragments, ND messages and
     * pauses, for the target that feeds one namespace's IPv6 input as fast as it goes.
     */
    public static int runIpv6(FuzzBytes in, Context ctx, Sink sink) {
        int steps = 0;
        while (in.hasMore() && steps < MAX_STEPS) {
            steps++;
            int op = in.u8() % 5;
            if (op == 4) {
                sink.advance(1L << (in.u8() % 37));
                continue;
            }
            int port = in.choose(ctx.ports);
            switch (op) {
                case 0 -> {
                    byte[] f = in.bytes(in.u16() % 1600);
                    if (f.length >= 14) {
                        put16at(f, 12, Ipv6Frames.ETH_P_IPV6);
                    }
                    sink.frame(port, f);
                }
                case 1 -> sink.frame(port, Ipv6Frames.ipv6(in, ctx));
                case 2 -> {
                    for (byte[] f : Ipv6Frames.fragments(in, ctx)) {
                        sink.frame(port, f);
                    }
                }
                default -> sink.frame(port, Ipv6Frames.ndisc(in, ctx));
            }
        }
        return steps;
    }

    static long mac(FuzzBytes in, Context ctx) {
        int n = ctx.macs.length;
        int s = in.u8() % (n + 5);
        if (s < n) {
            return ctx.macs[s];
        }
        return switch (s - n) {
            case 0 -> 0xffff_ffff_ffffL;
            case 1 -> 0x0100_5e00_0000L | in.u8();
            case 2 -> 0x0180_c200_0000L | (in.u8() & 0x1f);
            case 3 -> 0L;
            default -> in.u48();
        };
    }

    static int addr(FuzzBytes in, Context ctx) {
        int n = ctx.addrs.length;
        int s = in.u8() % (n + 8);
        if (s < n) {
            return ctx.addrs[s];
        }
        return switch (s - n) {
            case 0 -> 0xffff_ffff;
            case 1 -> 0;
            case 2 -> 0x7f00_0001;
            case 3 -> 0xe000_0001;
            case 4 -> 0xf000_0001;
            case 5 -> 0xc612_0000 | in.u16();
            case 6 -> 0xc613_0000 | in.u16();
            default -> in.u32();
        };
    }

    /** Ethernet header (with 0-2 VLAN tags) followed by {@code type}. */
    static void ethernet(ByteArrayOutputStream out, FuzzBytes in, Context ctx, int type) {
        long dst = mac(in, ctx);
        long src = mac(in, ctx);
        put48(out, dst);
        put48(out, src);
        int tags = in.u8();
        for (int i = 0; i < (tags & 3) && i < 2; i++) {
            put16(out, (tags & 4) != 0 && i == 0 ? 0x88a8 : 0x8100);
            put16(out, in.u16());
        }
        put16(out, (tags & 0x80) != 0 ? in.u16() : type);
    }

    /** An Ethernet/IPv4 frame; the last byte read says which parts to break (0: none). */
    static byte[] ipv4(FuzzBytes in, Context ctx) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        ethernet(out, in, ctx, 0x0800);
        int l3 = out.size();
        byte[] options = options(in, ctx);
        int tos = in.u8();
        int ttl = in.u8() ^ 64;
        int id = in.u16();
        int frag = in.u16();
        int protoSel = in.u8();
        int proto = switch (protoSel % 5) {
            case 0 -> 17;
            case 1 -> 6;
            case 2 -> 1;
            case 3 -> protoSel;
            default -> in.u8();
        };
        int src = addr(in, ctx);
        int dst = addr(in, ctx);
        byte[] l4 = switch (proto) {
            case 1 -> icmp(in, ctx);
            case 6 -> tcp(in);
            case 17 -> udp(in);
            default -> in.bytes(in.u8());
        };
        int breaks = in.u8();
        int hl = 20 + options.length;
        put8(out, 0x40 | ((breaks & 8) != 0 ? in.u8() & 0xf : hl / 4));
        put8(out, tos);
        put16(out, (breaks & 1) != 0 ? in.u16() : hl + l4.length);
        put16(out, id);
        put16(out, frag);
        put8(out, ttl);
        put8(out, proto);
        put16(out, 0);
        put32(out, src);
        put32(out, dst);
        out.writeBytes(options);
        out.writeBytes(l4);
        if ((breaks & 16) != 0) {
            out.writeBytes(in.bytes(in.u8() % 64));
        }
        byte[] f = out.toByteArray();
        if ((breaks & 4) == 0) {
            fixL4(f, l3 + hl, proto, src, dst, l4.length);
        }
        if ((breaks & 2) == 0) {
            fixIpHeader(f, l3, hl);
        }
        if ((breaks & 32) != 0) {
            f = Arrays.copyOf(f, Math.max(0, f.length - 1 - in.u8() % 40));
        }
        return f;
    }

    /** IP options: none, raw bytes, or one of record route, timestamp, source routes, router alert. */
    private static byte[] options(FuzzBytes in, Context ctx) {
        int kind = in.u8();
        if (kind < 128) {
            return new byte[0];
        }
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        int n = 1 + (kind & 3);
        for (int k = 0; k < n && o.size() < 40; k++) {
            int t = in.u8();
            switch (t % 7) {
                case 0 -> o.writeBytes(in.bytes(in.u8() % 41));
                case 1, 2, 3 -> {
                    int type = t % 7 == 1 ? 7 : t % 7 == 2 ? 131 : 137;
                    int slots = 1 + in.u8() % 9;
                    put8(o, type);
                    put8(o, 3 + 4 * slots);
                    put8(o, 4 + 4 * (in.u8() % (slots + 1)));
                    for (int i = 0; i < slots; i++) {
                        put32(o, addr(in, ctx));
                    }
                }
                case 4 -> {
                    int flags = in.u8() % 4;
                    int slots = 1 + in.u8() % 4;
                    int per = flags == 0 ? 4 : 8;
                    put8(o, 68);
                    put8(o, 4 + per * slots);
                    put8(o, 5 + per * (in.u8() % (slots + 1)));
                    put8(o, (in.u8() & 0xf0) | flags);
                    for (int i = 0; i < slots; i++) {
                        if (per == 8) {
                            put32(o, addr(in, ctx));
                        }
                        put32(o, in.u32());
                    }
                }
                case 5 -> {
                    put8(o, 148);
                    put8(o, 4);
                    put16(o, 0);
                }
                default -> put8(o, 1);
            }
        }
        byte[] b = o.toByteArray();
        if (b.length > 40) {
            b = Arrays.copyOf(b, 40);
        }
        // Pad to a multiple of 4 with END, as a sender must.
        return Arrays.copyOf(b, (b.length + 3) & ~3);
    }

    static byte[] udp(FuzzBytes in) {
        int sport = in.u16();
        int dsel = in.u8();
        int dport = switch (dsel % 4) {
            case 0 -> 7;
            case 1 -> 9;
            case 2 -> 53;
            default -> in.u16();
        };
        byte[] payload = in.bytes(in.u8());
        int lenBreak = in.u8();
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put16(o, sport);
        put16(o, dport);
        put16(o, lenBreak >= 0xf0 ? in.u16() : 8 + payload.length);
        put16(o, 0);
        o.writeBytes(payload);
        return o.toByteArray();
    }

    static byte[] tcp(FuzzBytes in) {
        int sport = in.u16();
        int dport = in.u8() < 128 ? 80 : in.u16();
        long seq = in.u32();
        long ack = in.u32();
        int flags = in.u8();
        int window = in.u16();
        int urg = in.u16();
        ByteArrayOutputStream opt = new ByteArrayOutputStream();
        int nopt = in.u8() % 6;
        for (int i = 0; i < nopt && opt.size() < 40; i++) {
            int t = in.u8();
            switch (t % 8) {
                case 0 -> {
                    put8(opt, 2);
                    put8(opt, 4);
                    put16(opt, in.u16());
                }
                case 1 -> {
                    put8(opt, 3);
                    put8(opt, 3);
                    put8(opt, in.u8() % 20);
                }
                case 2 -> {
                    put8(opt, 4);
                    put8(opt, 2);
                }
                case 3 -> {
                    put8(opt, 8);
                    put8(opt, 10);
                    put32(opt, in.u32());
                    put32(opt, in.u32());
                }
                case 4 -> {
                    int blocks = 1 + in.u8() % 4;
                    put8(opt, 5);
                    put8(opt, 2 + 8 * blocks);
                    for (int b = 0; b < blocks; b++) {
                        put32(opt, in.u32());
                        put32(opt, in.u32());
                    }
                }
                case 5 -> put8(opt, 1);
                case 6 -> put8(opt, 0);
                default -> opt.writeBytes(in.bytes(in.u8() % 12));
            }
        }
        byte[] options = opt.toByteArray();
        if (options.length > 40) {
            options = Arrays.copyOf(options, 40);
        }
        options = Arrays.copyOf(options, (options.length + 3) & ~3);
        byte[] payload = in.bytes(in.u8());
        int doff = in.u8() >= 0xf0 ? in.u8() & 0xf : (20 + options.length) / 4;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put16(o, sport);
        put16(o, dport);
        put32(o, (int) seq);
        put32(o, (int) ack);
        put8(o, doff << 4);
        put8(o, flags);
        put16(o, window);
        put16(o, 0);
        put16(o, urg);
        o.writeBytes(options);
        o.writeBytes(payload);
        return o.toByteArray();
    }

    private static byte[] icmp(FuzzBytes in, Context ctx) {
        int t = in.u8();
        int type = switch (t % 9) {
            case 0 -> 8;
            case 1 -> 0;
            case 2 -> 3;
            case 3 -> 11;
            case 4 -> 12;
            case 5 -> 5;
            case 6 -> 4;
            case 7 -> 13;
            default -> in.u8();
        };
        int code = in.u8() % 16;
        int rest = in.u32();
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        put8(o, type);
        put8(o, code);
        put16(o, 0);
        put32(o, rest);
        if (in.u8() < 128 && (type == 3 || type == 11 || type == 12 || type == 5 || type == 4)) {
            // An error quotes the datagram that caused it: an IP header and 8 bytes of its payload.
            byte[] quoted = ipv4(in, ctx);
            int cut = Math.min(quoted.length, 14 + 28 + in.u8() % 64);
            o.write(quoted, Math.min(14, quoted.length), Math.max(0, cut - 14));
        } else {
            o.writeBytes(in.bytes(in.u8()));
        }
        return o.toByteArray();
    }

    /** An Ethernet/ARP frame; a flags byte breaks its header fields. */
    static byte[] arp(FuzzBytes in, Context ctx) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64);
        ethernet(out, in, ctx, 0x0806);
        int breaks = in.u8();
        int opSel = in.u8();
        int op = opSel % 3 == 0 ? 1 : opSel % 3 == 1 ? 2 : in.u16();
        long sha = mac(in, ctx);
        int spa = addr(in, ctx);
        long tha = mac(in, ctx);
        int tpa = addr(in, ctx);
        put16(out, (breaks & 1) != 0 ? in.u16() : 1);
        put16(out, (breaks & 2) != 0 ? in.u16() : 0x0800);
        put8(out, (breaks & 4) != 0 ? in.u8() : 6);
        put8(out, (breaks & 8) != 0 ? in.u8() : 4);
        put16(out, op);
        put48(out, sha);
        put32(out, spa);
        put48(out, tha);
        put32(out, tpa);
        byte[] f = out.toByteArray();
        if ((breaks & 16) != 0) {
            f = Arrays.copyOf(f, Math.max(0, f.length - 1 - in.u8() % 30));
        }
        if ((breaks & 32) != 0) {
            f = Arrays.copyOf(f, 60);
        }
        return f;
    }

    /**
     * A UDP or ICMP datagram cut into fragments at chosen 8-byte boundaries, sent in a chosen order, each
     * possibly duplicated, left out, moved to overlap its neighbour, or with MF cleared early.
     */
    static List<byte[]> fragments(FuzzBytes in, Context ctx) {
        long dstMac = mac(in, ctx);
        long srcMac = mac(in, ctx);
        int src = addr(in, ctx);
        int dst = addr(in, ctx);
        boolean icmp = (in.u8() & 1) != 0;
        int id = in.u16();
        int ttl = 1 + in.u8() % 64;
        int payloadLen = 8 + in.u16() % 4000;
        byte[] l4 = new byte[payloadLen];
        for (int i = 0; i < l4.length; i++) {
            l4[i] = (byte) (i * 7);
        }
        if (icmp) {
            l4[0] = 8;
        } else {
            put16at(l4, 0, 5000);
            put16at(l4, 2, in.u8() < 128 ? 7 : 9);
            put16at(l4, 4, payloadLen);
        }
        fixL4(l4, 0, icmp ? 1 : 17, src, dst, payloadLen);
        int n = 1 + in.u8() % 8;
        List<Integer> cuts = new ArrayList<>();
        cuts.add(0);
        for (int i = 1; i < n; i++) {
            cuts.add(((payloadLen * in.u8() / 256) & ~7));
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
            boolean mf = end < payloadLen && (mode & 4) == 0;
            byte[] f = new byte[14 + 20 + (end - off)];
            put48at(f, 0, dstMac);
            put48at(f, 6, srcMac);
            put16at(f, 12, 0x0800);
            f[14] = 0x45;
            put16at(f, 16, 20 + end - off);
            put16at(f, 18, id);
            put16at(f, 20, (mf ? 0x2000 : 0) | (off / 8));
            f[22] = (byte) ttl;
            f[23] = (byte) (icmp ? 1 : 17);
            put32at(f, 26, src);
            put32at(f, 30, dst);
            System.arraycopy(l4, off, f, 34, end - off);
            fixIpHeader(f, 14, 20);
            int copies = (mode & 8) != 0 ? 2 : 1;
            for (int c = 0; c < copies; c++) {
                frags.add(f);
                keys.add(in.u8());
            }
        }
        // Send in the order of the keys read for each (a stable sort: equal keys keep the datagram's order).
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

    static void fixIpHeader(byte[] f, int off, int hl) {
        if (f.length < off + hl || hl < 20) {
            return;
        }
        f[off + 10] = 0;
        f[off + 11] = 0;
        ByteBuf b = Unpooled.wrappedBuffer(f);
        put16at(f, off + 10, Checksum.compute(b, off, hl));
    }

    static void fixL4(byte[] f, int off, int proto, int src, int dst, int len) {
        int field = switch (proto) {
            case 1 -> 2;
            case 6 -> 16;
            case 17 -> 6;
            default -> -1;
        };
        if (field < 0 || len < field + 2 || f.length < off + len) {
            return;
        }
        f[off + field] = 0;
        f[off + field + 1] = 0;
        ByteBuf b = Unpooled.wrappedBuffer(f);
        long sum = proto == 1 ? 0 : Checksum.pseudoHeader(src, dst, proto, len);
        int c = Checksum.finish(Checksum.add(b, off, len, sum));
        if (proto == 17 && c == 0) {
            c = 0xffff;
        }
        put16at(f, off + field, c);
    }

    static void put8(ByteArrayOutputStream o, int v) {
        o.write(v & 0xff);
    }

    static void put16(ByteArrayOutputStream o, int v) {
        o.write((v >>> 8) & 0xff);
        o.write(v & 0xff);
    }

    static void put32(ByteArrayOutputStream o, int v) {
        put16(o, v >>> 16);
        put16(o, v);
    }

    static void put48(ByteArrayOutputStream o, long v) {
        put16(o, (int) (v >>> 32));
        put32(o, (int) v);
    }

    static void put16at(byte[] f, int off, int v) {
        f[off] = (byte) (v >>> 8);
        f[off + 1] = (byte) v;
    }

    static void put32at(byte[] f, int off, int v) {
        put16at(f, off, v >>> 16);
        put16at(f, off + 2, v);
    }

    static void put48at(byte[] f, int off, long v) {
        put16at(f, off, (int) (v >>> 32));
        put32at(f, off + 2, (int) v);
    }

    /** Writes scripts: seeds for a corpus. */
    public static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final int timeOp;

        /** A script for {@link #run}. */
        public Writer() {
            this(false);
        }

        /** A script for {@link #runIpv6} when {@code ipv6Only} (its pause has another op code), else for {@link #run}. */
        public Writer(boolean ipv6Only) {
            timeOp = ipv6Only ? 4 : OP_TIME;
        }

        /** A raw frame into {@code port} (at most 1599 bytes). */
        public Writer raw(int port, byte[] frame) {
            if (frame.length >= 1600) {
                throw new IllegalArgumentException("raw frames are at most 1599 bytes");
            }
            out.write(OP_RAW);
            out.write(port);
            put16(out, frame.length);
            out.writeBytes(frame);
            return this;
        }

        /** Virtual time passes: 2^{@code log2} ns. */
        public Writer advance(int log2) {
            out.write(timeOp);
            out.write(log2);
            return this;
        }

        /** Script bytes as they are (a built frame's fields, say). */
        public Writer bytes(int... b) {
            for (int x : b) {
                out.write(x);
            }
            return this;
        }

        public byte[] toByteArray() {
            return out.toByteArray();
        }
    }
}
