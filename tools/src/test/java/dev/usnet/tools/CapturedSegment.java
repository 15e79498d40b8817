package dev.usnet.tools;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One TCP segment over IPv4 or IPv6 read back from a pcap file, decoded here byte by byte (independently of usnet's
 * own wire views, so a capture of usnet is not judged by usnet's parser): addresses, ports, flags, the IP DF bit,
 * payload length and the TCP options in the order they appear.
 *
 * @param src         the IPv4 source address; over IPv6 the low 32 bits of it (enough to tell two hosts of one
 *                    subnet apart)
 * @param dst         the destination, as {@code src}
 * @param df          IPv4's don't-fragment bit; false over IPv6, which has no such bit (routers never fragment)
 * @param optionKinds every option's kind in wire order, NOPs included (Linux's SYN: 2, 4, 8, 1, 3)
 * @param mss         the MSS option, or -1
 * @param wscale      the window-scale shift, or -1
 * @param tsVal       TSval of the timestamp option, or -1 when there is none
 * @param tsEcr       TSecr of the timestamp option, or -1 when there is none
 * @param ipv6        whether the segment came over IPv6
 */
record CapturedSegment(int frameLen, int src, int dst, int srcPort, int dstPort, long seq, long ack, int flags,
        boolean df, int payloadLen, List<Integer> optionKinds, int mss, int wscale, boolean sackPermitted,
        long tsVal, long tsEcr, boolean ipv6) {
    static final int FIN = 0x01;
    static final int SYN = 0x02;
    static final int RST = 0x04;
    static final int ACK = 0x10;

    /** Linux's SYN and SYN-ACK option layout with everything on: MSS, SACK_PERM, TS, NOP, WS. */
    static final List<Integer> LINUX_SYN_OPTIONS = List.of(2, 4, 8, 1, 3);

    boolean syn() {
        return (flags & SYN) != 0;
    }

    boolean hasAck() {
        return (flags & ACK) != 0;
    }

    boolean hasTimestamp() {
        return tsVal >= 0;
    }

    /** The TCP segments of an Ethernet pcap file, in capture order (other frames skipped). */
    static List<CapturedSegment> read(Path pcap) throws IOException {
        List<CapturedSegment> out = new ArrayList<>();
        for (PcapRecord r : PcapReader.readAll(pcap)) {
            CapturedSegment s = parse(r.data(), r.originalLength());
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * Decodes an Ethernet II frame carrying IPv4/TCP or IPv6/TCP (no VLAN tag, no IPv6 extension headers); null for
     * anything else.
     */
    static CapturedSegment parse(byte[] frame, int origLen) {
        ByteBuffer b = ByteBuffer.wrap(frame);
        int ethertype = frame.length < 14 ? -1 : b.getShort(12) & 0xffff;
        int ip = 14;
        boolean ipv6 = ethertype == 0x86dd;
        int ihl;
        int totalLen;
        boolean df;
        int src;
        int dst;
        if (ethertype == 0x0800 && frame.length >= ip + 20) {
            int verIhl = b.get(ip) & 0xff;
            if (verIhl >> 4 != 4 || (b.get(ip + 9) & 0xff) != 6) {
                return null;
            }
            ihl = (verIhl & 0x0f) * 4;
            totalLen = b.getShort(ip + 2) & 0xffff;
            df = (b.getShort(ip + 6) & 0x4000) != 0;
            src = b.getInt(ip + 12);
            dst = b.getInt(ip + 16);
        } else if (ipv6 && frame.length >= ip + 40) {
            if ((b.get(ip) & 0xff) >> 4 != 6 || (b.get(ip + 6) & 0xff) != 6) {
                return null;
            }
            ihl = 40;
            totalLen = 40 + (b.getShort(ip + 4) & 0xffff);
            df = false;
            src = b.getInt(ip + 8 + 12);
            dst = b.getInt(ip + 24 + 12);
        } else {
            return null;
        }
        int t = ip + ihl;
        if (frame.length < t + 20) {
            return null;
        }
        int doff = ((b.get(t + 12) & 0xff) >> 4) * 4;
        int flags = b.get(t + 13) & 0x3f;
        List<Integer> kinds = new ArrayList<>();
        int mss = -1;
        int ws = -1;
        boolean sackPerm = false;
        long tsVal = -1;
        long tsEcr = -1;
        int i = t + 20;
        int end = Math.min(t + doff, frame.length);
        while (i < end) {
            int kind = b.get(i) & 0xff;
            kinds.add(kind);
            if (kind == 0) {
                break;
            }
            if (kind == 1) {
                i++;
                continue;
            }
            if (i + 1 >= end) {
                break;
            }
            int len = b.get(i + 1) & 0xff;
            if (len < 2 || i + len > end) {
                break;
            }
            switch (kind) {
                case 2 -> mss = len == 4 ? b.getShort(i + 2) & 0xffff : -1;
                case 3 -> ws = len == 3 ? b.get(i + 2) & 0xff : -1;
                case 4 -> sackPerm = len == 2;
                case 8 -> {
                    if (len == 10) {
                        tsVal = b.getInt(i + 2) & 0xffff_ffffL;
                        tsEcr = b.getInt(i + 6) & 0xffff_ffffL;
                    }
                }
                default -> { }
            }
            i += len;
        }
        return new CapturedSegment(origLen, src, dst, b.getShort(t) & 0xffff,
                b.getShort(t + 2) & 0xffff, b.getInt(t + 4) & 0xffff_ffffL, b.getInt(t + 8) & 0xffff_ffffL, flags, df,
                totalLen - ihl - doff, List.copyOf(kinds), mss, ws, sackPerm, tsVal, tsEcr, ipv6);
    }

    @Override
    public String toString() {
        StringBuilder f = new StringBuilder();
        String names = "FSRPAU";
        for (int k = 0; k < 6; k++) {
            if ((flags & 1 << k) != 0) {
                f.append(names.charAt(k));
            }
        }
        return String.format(Locale.ROOT, "%s:%d > %s:%d [%s] seq %d ack %d len %d%s opts %s%s%s%s", addr(src), srcPort,
                addr(dst), dstPort, f, seq, ack, payloadLen, df ? " DF" : "", optionKinds, mss >= 0 ? " mss " + mss : "",
                wscale >= 0 ? " wscale " + wscale : "", tsVal >= 0 ? " TS val " + tsVal + " ecr " + tsEcr : "");
    }

    private String addr(int a) {
        if (ipv6) {
            return String.format(Locale.ROOT, "...:%x:%x", a >>> 16, a & 0xffff);
        }
        return (a >>> 24) + "." + (a >> 16 & 0xff) + "." + (a >> 8 & 0xff) + "." + (a & 0xff);
    }
}
