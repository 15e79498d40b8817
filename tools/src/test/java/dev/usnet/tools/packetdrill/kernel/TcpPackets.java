package dev.usnet.tools.packetdrill.kernel;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/** Hand-built IPv4/TCP packets with correct checksums, and a parser for what the kernel sends, for the tests. */
final class TcpPackets {
    static final int FIN = 0x01;
    static final int SYN = 0x02;
    static final int RST = 0x04;
    static final int PSH = 0x08;
    static final int ACK = 0x10;

    private TcpPackets() {}

    /** TCP options as bytes, built in the order of the calls. */
    static final class Options {
        private final ByteArrayOutputStream b = new ByteArrayOutputStream();

        Options mss(int mss) {
            b.write(2);
            b.write(4);
            b.write(mss >>> 8);
            b.write(mss);
            return this;
        }

        Options sackOk() {
            b.write(4);
            b.write(2);
            return this;
        }

        Options timestamp(long val, long ecr) {
            b.write(8);
            b.write(10);
            for (int s = 24; s >= 0; s -= 8) {
                b.write((int) (val >>> s));
            }
            for (int s = 24; s >= 0; s -= 8) {
                b.write((int) (ecr >>> s));
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
            while (b.size() % 4 != 0) {
                b.write(0);
            }
            return b.toByteArray();
        }
    }

    /** An IPv4 packet (DF, TTL 64) carrying a TCP segment with {@code payloadLen} zero bytes. */
    static byte[] tcp(int srcIp, int dstIp, int srcPort, int dstPort, long seq, long ack, int flags, int window,
                      byte[] options, int payloadLen) {
        int tcpLen = 20 + options.length + payloadLen;
        ByteBuffer p = ByteBuffer.allocate(20 + tcpLen);
        p.put((byte) 0x45).put((byte) 0).putShort((short) (20 + tcpLen)).putShort((short) 0x1234)
                .putShort((short) 0x4000).put((byte) 64).put((byte) 6).putShort((short) 0).putInt(srcIp).putInt(dstIp);
        p.putShort(10, checksum(p.array(), 0, 20, 0));
        p.putShort((short) srcPort).putShort((short) dstPort).putInt((int) seq).putInt((int) ack)
                .put((byte) ((20 + options.length) / 4 << 4)).put((byte) flags).putShort((short) window)
                .putShort((short) 0).putShort((short) 0).put(options);
        long pseudo = (srcIp >>> 16) + (srcIp & 0xffff) + (dstIp >>> 16) + (dstIp & 0xffff) + 6 + tcpLen;
        p.putShort(20 + 16, checksum(p.array(), 20, tcpLen, pseudo));
        return p.array();
    }

    /** The Internet checksum of {@code len} bytes at {@code off}, starting from the partial sum {@code sum}. */
    static short checksum(byte[] b, int off, int len, long sum) {
        for (int i = 0; i + 1 < len; i += 2) {
            sum += ((b[off + i] & 0xff) << 8) | (b[off + i + 1] & 0xff);
        }
        if (len % 2 == 1) {
            sum += (b[off + len - 1] & 0xff) << 8;
        }
        while (sum >>> 16 != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (short) ~sum;
    }

    /** A parsed IPv4/TCP packet. Options by kind; -1 where absent. */
    record Tcp(int srcIp, int dstIp, int srcPort, int dstPort, long seq, long ack, int flags, int window,
               int mss, int wscale, boolean sackOk, long tsVal, long tsEcr, int payloadLen, boolean checksumsOk) {
        boolean has(int f) {
            return (flags & f) == f;
        }
    }

    static Tcp parse(byte[] p) {
        ByteBuffer b = ByteBuffer.wrap(p);
        if ((p[0] & 0xf0) != 0x40 || p[9] != 6) {
            throw new AssertionError("not IPv4/TCP: version " + (p[0] >>> 4 & 15) + " protocol " + p[9]);
        }
        int ihl = (p[0] & 15) * 4;
        int total = b.getShort(2) & 0xffff;
        int src = b.getInt(12);
        int dst = b.getInt(16);
        int t = ihl;
        int doff = (p[t + 12] >>> 4 & 15) * 4;
        int mss = -1;
        int ws = -1;
        boolean sack = false;
        long tsv = -1;
        long tse = -1;
        for (int o = t + 20; o < t + doff; ) {
            int kind = p[o] & 0xff;
            if (kind == 0) {
                break;
            }
            if (kind == 1) {
                o++;
                continue;
            }
            int len = p[o + 1] & 0xff;
            switch (kind) {
                case 2 -> mss = b.getShort(o + 2) & 0xffff;
                case 3 -> ws = p[o + 2] & 0xff;
                case 4 -> sack = true;
                case 8 -> {
                    tsv = b.getInt(o + 2) & 0xffffffffL;
                    tse = b.getInt(o + 6) & 0xffffffffL;
                }
                default -> { }
            }
            o += Math.max(len, 2);
        }
        int tcpLen = total - ihl;
        long pseudo = (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff) + 6 + tcpLen;
        boolean ok = checksum(p, 0, ihl, 0) == 0 && checksum(p, t, tcpLen, pseudo) == 0;
        return new Tcp(src, dst, b.getShort(t) & 0xffff, b.getShort(t + 2) & 0xffff, b.getInt(t + 4) & 0xffffffffL,
                b.getInt(t + 8) & 0xffffffffL, p[t + 13] & 0x3f, b.getShort(t + 14) & 0xffff, mss, ws, sack, tsv, tse,
                tcpLen - doff, ok);
    }
}
