package dev.usnet.tools.packetdrill.usnet;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * IPv4/TCP packets for driving the usnet target by hand, built and parsed here byte by byte (independent of usnet's
 * own wire code, so a test checks that code rather than reusing it): the remote host's segments with correct
 * checksums, and the fields of what the stack sent.
 */
final class TestPackets {
    static final int FIN = 0x01;
    static final int SYN = 0x02;
    static final int RST = 0x04;
    static final int PSH = 0x08;
    static final int ACK = 0x10;

    private TestPackets() {}

    static int ip(String dotted) {
        String[] p = dotted.split("\\.");
        return Integer.parseInt(p[0]) << 24 | Integer.parseInt(p[1]) << 16 | Integer.parseInt(p[2]) << 8 | Integer.parseInt(p[3]);
    }

    /** TCP options in wire order, built by the caller: {@code new Options().mss(1460).sackOk().ts(1, 0).nop().wscale(7)}. */
    static final class Options {
        private final ByteArrayOutputStream b = new ByteArrayOutputStream();

        Options mss(int mss) {
            b.write(2);
            b.write(4);
            b.write(mss >> 8);
            b.write(mss);
            return this;
        }

        Options sackOk() {
            b.write(4);
            b.write(2);
            return this;
        }

        Options ts(long val, long ecr) {
            b.write(8);
            b.write(10);
            for (long v : new long[] {val, ecr}) {
                b.write((int) (v >> 24));
                b.write((int) (v >> 16));
                b.write((int) (v >> 8));
                b.write((int) v);
            }
            return this;
        }

        Options nop() {
            b.write(1);
            return this;
        }

        Options wscale(int shift) {
            b.write(3);
            b.write(3);
            b.write(shift);
            return this;
        }

        byte[] bytes() {
            byte[] raw = b.toByteArray();
            byte[] padded = new byte[(raw.length + 3) / 4 * 4];
            System.arraycopy(raw, 0, padded, 0, raw.length);
            return padded;
        }
    }

    /** An IPv4 packet carrying a TCP segment with {@code payload} zero bytes, both checksums filled in. */
    static byte[] tcp(int src, int dst, int sport, int dport, int flags, long seq, long ack, int window, Options opts,
            int payload) {
        byte[] o = opts == null ? new byte[0] : opts.bytes();
        int tcpLen = 20 + o.length + payload;
        ByteBuffer b = ByteBuffer.allocate(20 + tcpLen);
        b.put((byte) 0x45).put((byte) 0).putShort((short) (20 + tcpLen)).putShort((short) 0).putShort((short) 0x4000)
                .put((byte) 64).put((byte) 6).putShort((short) 0).putInt(src).putInt(dst);
        b.putShort(10, (short) checksum(b.array(), 0, 20, 0));
        b.position(20);
        b.putShort((short) sport).putShort((short) dport).putInt((int) seq).putInt((int) ack)
                .put((byte) ((20 + o.length) / 4 << 4)).put((byte) flags).putShort((short) window)
                .putShort((short) 0).putShort((short) 0).put(o);
        long pseudo = (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + 6 + tcpLen;
        b.putShort(20 + 16, (short) checksum(b.array(), 20, tcpLen, pseudo));
        return b.array();
    }

    static int checksum(byte[] a, int off, int len, long initial) {
        long sum = initial;
        for (int i = 0; i < len; i += 2) {
            int hi = a[off + i] & 0xff;
            int lo = i + 1 < len ? a[off + i + 1] & 0xff : 0;
            sum += hi << 8 | lo;
        }
        while (sum >> 16 != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (int) ~sum & 0xffff;
    }

    /** A TCP segment the stack sent, parsed; {@code checksumsOk} says both checksums verify. */
    record Segment(int src, int dst, int sport, int dport, long seq, long ack, int flags, int window, int payload,
                   int mss, int wscale, boolean sackOk, long tsVal, long tsEcr, boolean hasTs, int ipLength,
                   boolean checksumsOk, String optionOrder) {
        boolean has(int flag) {
            return (flags & flag) != 0;
        }
    }

    static Segment parse(byte[] p) {
        ByteBuffer b = ByteBuffer.wrap(p);
        int ihl = (p[0] & 0x0f) * 4;
        int total = b.getShort(2) & 0xffff;
        if ((p[0] >> 4) != 4 || p[9] != 6 || total != p.length) {
            throw new AssertionError("not an IPv4 TCP packet of its stated length: " + java.util.Arrays.toString(p));
        }
        int src = b.getInt(12);
        int dst = b.getInt(16);
        int tcpLen = total - ihl;
        long pseudo = (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + 6 + tcpLen;
        boolean ok = checksum(p, 0, ihl, 0) == 0 && checksum(p, ihl, tcpLen, pseudo) == 0;
        int doff = (p[ihl + 12] >> 4 & 0xf) * 4;
        int mss = -1;
        int wscale = -1;
        boolean sack = false;
        boolean hasTs = false;
        long tsVal = 0;
        long tsEcr = 0;
        StringBuilder order = new StringBuilder();
        for (int i = ihl + 20; i < ihl + doff; ) {
            int kind = p[i] & 0xff;
            if (kind == 0) {
                break;
            }
            if (kind == 1) {
                order.append("nop,");
                i++;
                continue;
            }
            int len = p[i + 1] & 0xff;
            switch (kind) {
                case 2 -> {
                    mss = b.getShort(i + 2) & 0xffff;
                    order.append("mss,");
                }
                case 3 -> {
                    wscale = p[i + 2] & 0xff;
                    order.append("wscale,");
                }
                case 4 -> {
                    sack = true;
                    order.append("sackOK,");
                }
                case 8 -> {
                    hasTs = true;
                    tsVal = b.getInt(i + 2) & 0xffff_ffffL;
                    tsEcr = b.getInt(i + 6) & 0xffff_ffffL;
                    order.append("TS,");
                }
                default -> order.append("opt").append(kind).append(',');
            }
            i += len;
        }
        return new Segment(src, dst, b.getShort(ihl) & 0xffff, b.getShort(ihl + 2) & 0xffff,
                b.getInt(ihl + 4) & 0xffff_ffffL, b.getInt(ihl + 8) & 0xffff_ffffL, p[ihl + 13] & 0xff,
                b.getShort(ihl + 14) & 0xffff, tcpLen - doff, mss, wscale, sack, tsVal, tsEcr, hasTs, total, ok,
                order.length() == 0 ? "" : order.substring(0, order.length() - 1));
    }
}
