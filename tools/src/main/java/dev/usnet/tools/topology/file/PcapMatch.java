package dev.usnet.tools.topology.file;

import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.wire.FrameDescriber;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.replay.FixtureComparator;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Compares a capture with an expected pcap frame by frame, in order, byte for byte, under the conformance rule
 * ({@link FixtureComparator#normalise}: an IPv4 packet whose source is an address of the topology is compared
 * without its identification and header checksum), optionally also without every packet's TTL (and so its header
 * checksum), and optionally with each frame's time since the first frame within a tolerance. Says where the first
 * difference is: the frame (1-based, as Wireshark numbers them), the byte, the field by its Wireshark name
 * ({@code ip.ttl}, {@code tcp.flags}, ...) and both values.
 *
 * @param own the topology's addresses: the sources whose packets usnet made
 * @param maskTtl compare without the IPv4 TTL and header checksum of every packet
 * @param timeToleranceNanos compare each frame's time since the first frame within this; negative: times are not
 *     compared
 */
public record PcapMatch(Set<Integer> own, boolean maskTtl, long timeToleranceNanos) {

    /** Null when {@code actual} matches {@code expected}; else what differs first, in lines. */
    public String difference(List<PcapRecord> expected, List<PcapRecord> actual) {
        int n = Math.min(expected.size(), actual.size());
        for (int i = 0; i < n; i++) {
            byte[] e = normalise(expected.get(i).data());
            byte[] a = normalise(actual.get(i).data());
            int at = firstDifferentByte(e, a);
            if (at >= 0) {
                String field = at < Math.min(e.length, a.length) ? fieldAt(e, at) : "frame length";
                String values = at < Math.min(e.length, a.length)
                        ? "expected " + valueAt(expected.get(i).data(), at) + ", got " + valueAt(actual.get(i).data(), at)
                        : "expected " + e.length + " bytes, got " + a.length;
                return "frame " + (i + 1) + " differs at byte " + at + " (" + field + "): " + values
                        + "\n  expected: " + describe(expected.get(i).data())
                        + "\n  got:      " + describe(actual.get(i).data());
            }
            if (timeToleranceNanos >= 0 && i > 0) {
                long te = expected.get(i).timestampNanos() - expected.getFirst().timestampNanos();
                long ta = actual.get(i).timestampNanos() - actual.getFirst().timestampNanos();
                if (Math.abs(te - ta) > timeToleranceNanos) {
                    return "frame " + (i + 1) + " is at " + seconds(ta) + " s after the first frame, expected "
                            + seconds(te) + " s (tolerance " + seconds(timeToleranceNanos) + " s)"
                            + "\n  frame:    " + describe(actual.get(i).data());
                }
            }
        }
        if (expected.size() == actual.size()) {
            return null;
        }
        String head = "the capture has " + actual.size() + " frame" + (actual.size() == 1 ? "" : "s") + ", expected "
                + expected.size() + (n == 0 ? "" : "; the first " + n + " agree");
        if (actual.size() < expected.size()) {
            return head + "\n  first missing, frame " + (n + 1) + ": " + describe(expected.get(n).data());
        }
        return head + "\n  first extra, frame " + (n + 1) + ": " + describe(actual.get(n).data());
    }

    private byte[] normalise(byte[] f) {
        byte[] c = FixtureComparator.normalise(f, own);
        if (!maskTtl) {
            return c;
        }
        int l3 = l3(c);
        if (l3 < 0) {
            return c;
        }
        if (c == f) {
            c = f.clone();
        }
        c[l3 + 8] = 0;
        c[l3 + 10] = 0;
        c[l3 + 11] = 0;
        return c;
    }

    public static int firstDifferentByte(byte[] e, byte[] a) {
        int n = Math.min(e.length, a.length);
        for (int i = 0; i < n; i++) {
            if (e[i] != a[i]) {
                return i;
            }
        }
        return e.length == a.length ? -1 : n;
    }

    /** The offset of the IPv4 header of an Ethernet frame (past one 802.1Q tag), -1 when it carries none. */
    private static int l3(byte[] f) {
        CaptureFilter.Frame fr = new CaptureFilter.Frame(f);
        return fr.ip() ? fr.l3 : -1;
    }

    /** A field's name and where it starts and ends in a frame, for the report of a difference. */
    private record Field(String name, int start, int end) {}

    /** The field byte {@code at} of {@code f} belongs to, by its Wireshark name. */
    public static String fieldAt(byte[] f, int at) {
        return field(f, at).name;
    }

    private static Field field(byte[] f, int at) {
        if (at < 6) {
            return new Field("eth.dst", 0, 6);
        }
        if (at < 12) {
            return new Field("eth.src", 6, 12);
        }
        CaptureFilter.Frame fr = new CaptureFilter.Frame(f);
        if (fr.l3 == 18 && at < 18) {
            return at < 14 ? new Field("vlan.etype", 12, 14) : at < 16 ? new Field("vlan.id", 14, 16)
                    : new Field("eth.type", 16, 18);
        }
        if (at < fr.l3) {
            return new Field("eth.type", 12, 14);
        }
        int o = at - fr.l3;
        if (fr.arp()) {
            String[] names = {"arp.hw.type", "arp.proto.type", "arp.hw.size", "arp.proto.size", "arp.opcode",
                    "arp.src.hw_mac", "arp.src.proto_ipv4", "arp.dst.hw_mac", "arp.dst.proto_ipv4"};
            int[] starts = {0, 2, 4, 5, 6, 8, 14, 18, 24, 28};
            for (int k = 0; k < names.length; k++) {
                if (o < starts[k + 1]) {
                    return new Field(names[k], fr.l3 + starts[k], fr.l3 + starts[k + 1]);
                }
            }
            return new Field("eth.padding", fr.l3 + 28, f.length);
        }
        if (!fr.ip()) {
            return new Field("eth.payload", fr.l3, f.length);
        }
        int ihl = (f[fr.l3] & 0x0f) * 4;
        int totalEnd = Math.min(f.length, fr.l3 + CaptureFilter.u16(f, fr.l3 + 2));
        if (o < 20) {
            String[] names = {"ip.version/ip.hdr_len", "ip.dsfield", "ip.len", "ip.id", "ip.flags/ip.frag_offset",
                    "ip.ttl", "ip.proto", "ip.checksum", "ip.src", "ip.dst"};
            int[] starts = {0, 1, 2, 4, 6, 8, 9, 10, 12, 16, 20};
            for (int k = 0; k < names.length; k++) {
                if (o < starts[k + 1]) {
                    return new Field(names[k], fr.l3 + starts[k], fr.l3 + starts[k + 1]);
                }
            }
        }
        if (o < ihl) {
            return new Field("ip.options", fr.l3 + 20, fr.l3 + ihl);
        }
        if (at >= totalEnd) {
            return new Field("eth.padding", totalEnd, f.length);
        }
        int l4 = fr.l4;
        if (l4 < 0) {
            return new Field("ip.fragment", fr.l3 + ihl, totalEnd);
        }
        int t = at - l4;
        switch (fr.proto) {
            case 6 -> {
                String[] names = {"tcp.srcport", "tcp.dstport", "tcp.seq", "tcp.ack", "tcp.hdr_len", "tcp.flags",
                        "tcp.window_size", "tcp.checksum", "tcp.urgent_pointer"};
                int[] starts = {0, 2, 4, 8, 12, 13, 14, 16, 18, 20};
                for (int k = 0; k < names.length; k++) {
                    if (t < starts[k + 1]) {
                        return new Field(names[k], l4 + starts[k], l4 + starts[k + 1]);
                    }
                }
                int doff = l4 + 12 < f.length ? ((f[l4 + 12] & 0xf0) >> 4) * 4 : 20;
                return t < doff ? new Field("tcp.options", l4 + 20, l4 + doff) : new Field("tcp.payload", l4 + doff, totalEnd);
            }
            case 17 -> {
                String[] names = {"udp.srcport", "udp.dstport", "udp.length", "udp.checksum"};
                return t < 8 ? new Field(names[t / 2], l4 + t / 2 * 2, l4 + t / 2 * 2 + 2) : new Field("udp.payload", l4 + 8, totalEnd);
            }
            case 1 -> {
                if (t < 4) {
                    return t == 0 ? new Field("icmp.type", l4, l4 + 1) : t == 1 ? new Field("icmp.code", l4 + 1, l4 + 2)
                            : new Field("icmp.checksum", l4 + 2, l4 + 4);
                }
                int type = f[l4] & 0xff;
                if (t < 8) {
                    boolean echo = type == 0 || type == 8;
                    return echo ? (t < 6 ? new Field("icmp.ident", l4 + 4, l4 + 6) : new Field("icmp.seq", l4 + 6, l4 + 8))
                            : new Field("icmp.rest_of_header", l4 + 4, l4 + 8);
                }
                // An error quotes the packet that caused it: name the quoted header's field.
                boolean error = type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
                if (error && t < 28) {
                    String[] names = {"icmp.ip.version/hdr_len", "icmp.ip.dsfield", "icmp.ip.len", "icmp.ip.id",
                            "icmp.ip.flags/frag_offset", "icmp.ip.ttl", "icmp.ip.proto", "icmp.ip.checksum", "icmp.ip.src",
                            "icmp.ip.dst"};
                    int[] starts = {8, 9, 10, 12, 14, 16, 17, 18, 20, 24, 28};
                    for (int k = 0; k < names.length; k++) {
                        if (t < starts[k + 1]) {
                            return new Field(names[k], l4 + starts[k], l4 + starts[k + 1]);
                        }
                    }
                }
                return new Field(error ? "icmp.quoted" : "icmp.data", l4 + 8, totalEnd);
            }
            default -> {
                return new Field("ip.payload", l4, totalEnd);
            }
        }
    }

    /** The value of the field byte {@code at} belongs to: an address as such, a number in decimal and hex, bytes in hex. */
    public static String valueAt(byte[] f, int at) {
        Field fd = field(f, at);
        int len = Math.min(fd.end, f.length) - fd.start;
        if (len == 6 && fd.name.contains("mac") || fd.name.equals("eth.dst") || fd.name.equals("eth.src")) {
            return MacAddr.format(CaptureFilter.u48(f, fd.start));
        }
        if (len == 4 && (fd.name.endsWith("src") || fd.name.endsWith("dst") || fd.name.endsWith("proto_ipv4"))) {
            return Ipv4Addr.format(CaptureFilter.u32(f, fd.start));
        }
        if (len >= 1 && len <= 4) {
            long v = 0;
            for (int k = 0; k < len; k++) {
                v = (v << 8) | (f[fd.start + k] & 0xff);
            }
            return v + String.format(Locale.ROOT, " (0x%0" + (len * 2) + "x)", v);
        }
        // A longer field: its bytes from the first that differs, at most 16.
        StringBuilder sb = new StringBuilder("byte " + (at - fd.start) + " of " + len + ": ");
        for (int k = at; k < Math.min(f.length, Math.min(fd.end, at + 16)); k++) {
            sb.append(String.format(Locale.ROOT, "%02x", f[k] & 0xff));
        }
        return sb.toString();
    }

    private static String describe(byte[] f) {
        return FrameDescriber.describe(Unpooled.wrappedBuffer(f), 0, f.length);
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.6f", nanos / 1e9);
    }
}
