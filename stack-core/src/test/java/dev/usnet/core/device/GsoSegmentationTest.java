package dev.usnet.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class GsoSegmentationTest {

    /** A TCPv4 super-frame as a GSO TAP would deliver it: partial checksum, gso_size MSS. */
    static Packet superFrame(byte[] payload, int mss, int flags) {
        int len = 14 + 20 + 20 + payload.length;
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        int s = p.start();
        b.writerIndex(s + len);
        EthernetFrame.write(b, s, 0x0200_0000_0b02L, 0x0200_0000_0a01L, EthernetFrame.ETH_P_IP);
        int src = Ipv4Addr.parse("198.18.0.1");
        int dst = Ipv4Addr.parse("198.18.0.2");
        b.setShort(s + 34, 40000);
        b.setShort(s + 36, 5001);
        b.setInt(s + 38, 0xfffff000);
        b.setInt(s + 42, 77);
        b.setByte(s + 46, 5 << 4);
        b.setByte(s + 47, flags);
        b.setShort(s + 48, 65535);
        b.setShort(s + 50, ~Checksum.finish(Checksum.pseudoHeader(src, dst, 6, 20 + payload.length)) & 0xffff);
        b.setBytes(s + 54, payload);
        Ipv4Packet.writeHeader(b, s + 14, 0, 40 + payload.length, 0x1000, Ipv4Packet.FLAG_DF, 64, 6, src, dst);
        p.setGso(Packet.GSO_TCPV4, mss);
        p.setChecksum(ChecksumState.PARTIAL, s + 34, 16);
        return p;
    }

    @Test
    void superFramesAreSegmentedForDevicesWithoutGso() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            List<byte[]> got = new ArrayList<>();
            pair[1].setRxHandler((dev, p) -> {
                byte[] f = new byte[p.length()];
                p.buf().getBytes(p.start(), f);
                got.add(f);
                p.release();
                return true;
            });
            byte[] payload = new byte[10_000];
            new Random(5).nextBytes(payload);
            int flags = 0x08 | 0x10 | 0x01 | 0x80;
            pair[0].transmit(superFrame(payload, 1448, flags));
            net.settle();
            assertEquals(7, got.size(), "ceil(10000 / 1448) segments");
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            for (int i = 0; i < got.size(); i++) {
                byte[] f = got.get(i);
                ByteBuf fb = Unpooled.wrappedBuffer(f);
                assertTrue(f.length - 14 <= 1500, "each segment fits the MTU");
                assertTrue(Checksum.verify(fb, 14, 20), "IP checksum of segment " + i);
                int tcpLen = f.length - 34;
                long ph = Checksum.pseudoHeader(fb.getInt(26), fb.getInt(30), 6, tcpLen);
                assertEquals(0, Checksum.finish(Checksum.add(fb, 34, tcpLen, ph)), "TCP checksum of segment " + i);
                assertEquals(0x1000 + i, Frames.u16(f, 18), "IP ID increments");
                assertEquals(0xfffff000L + 1448L * i & 0xffffffffL, Frames.u32(f, 38) & 0xffffffffL, "sequence wraps correctly");
                int fl = f[47] & 0xff;
                assertEquals(i == 0, (fl & 0x80) != 0, "CWR only on the first");
                assertEquals(i == 6, (fl & 0x01) != 0, "FIN only on the last");
                assertEquals(i == 6, (fl & 0x08) != 0, "PSH only on the last");
                joined.write(f, 54, f.length - 54);
            }
            assertArrayEquals(payload, joined.toByteArray());
        }
    }

    @Test
    void devicesWithGsoGetTheSuperFrameWhole() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            pair[0].setGsoOffload(true);
            pair[0].setTxChecksumOffload(true);
            int[] frames = {0};
            pair[1].setRxHandler((dev, p) -> {
                frames[0]++;
                assertTrue(p.isGso());
                p.release();
                return true;
            });
            pair[0].transmit(superFrame(new byte[20_000], 1448, 0x10));
            net.settle();
            assertEquals(1, frames[0]);
        }
    }

    private static final byte[] SRC6 = {(byte) 0xfd, 0, 1, (byte) 0x98, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    private static final byte[] DST6 = {0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

    /**
     * The IPv6 pseudo-header sum written out word by word from RFC 8200 §8.1 (addresses, 32-bit upper-layer
     * length, three zero bytes and the next header), kept apart from the code under test.
     */
    private static long pseudoHeader6(byte[] src, byte[] dst, int length, int nextHeader) {
        long sum = 0;
        for (int i = 0; i < 16; i += 2) {
            sum += (src[i] & 0xff) << 8 | (src[i + 1] & 0xff);
            sum += (dst[i] & 0xff) << 8 | (dst[i + 1] & 0xff);
        }
        return sum + (length >>> 16) + (length & 0xffff) + nextHeader;
    }

    /** A TCPv6 super-frame as a GSO TAP would deliver it (VIRTIO_NET_HDR_GSO_TCPV6): partial checksum. */
    static Packet superFrame6(byte[] payload, int mss, int flags) {
        int tcpLen = 20 + payload.length;
        int len = 14 + 40 + tcpLen;
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        int s = p.start();
        b.writerIndex(s + len);
        EthernetFrame.write(b, s, 0x0200_0000_0b02L, 0x0200_0000_0a01L, 0x86dd);
        int ip = s + 14;
        b.setInt(ip, 0x6000_0000 | 0x12345); // version 6, traffic class 0, a flow label the segments keep
        b.setShort(ip + 4, tcpLen);
        b.setByte(ip + 6, 6);
        b.setByte(ip + 7, 64);
        b.setBytes(ip + 8, SRC6);
        b.setBytes(ip + 24, DST6);
        int t = ip + 40;
        b.setShort(t, 40000);
        b.setShort(t + 2, 5201);
        b.setInt(t + 4, 0xffff_f000);
        b.setInt(t + 8, 77);
        b.setByte(t + 12, 5 << 4);
        b.setByte(t + 13, flags);
        b.setShort(t + 14, 65535);
        b.setShort(t + 16, ~Checksum.finish(pseudoHeader6(SRC6, DST6, tcpLen, 6)) & 0xffff);
        b.setBytes(t + 20, payload);
        p.setGso(Packet.GSO_TCPV6, mss);
        p.setChecksum(ChecksumState.PARTIAL, t, 16);
        return p;
    }

    @Test
    void tcpv6SuperFrameOf64KibIsSegmentedIntoMssFramesWithIpv6Checksums() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            List<byte[]> got = new ArrayList<>();
            pair[1].setRxHandler((dev, p) -> {
                byte[] f = new byte[p.length()];
                p.buf().getBytes(p.start(), f);
                got.add(f);
                p.release();
                return true;
            });
            // The largest TCPv6 GSO payload: 65535 bytes of IPv6 payload minus the 20-byte TCP header.
            byte[] payload = new byte[65_515];
            new Random(6).nextBytes(payload);
            int mss = 1440; // MTU 1500 - 40 (IPv6) - 20 (TCP)
            int flags = 0x08 | 0x10 | 0x01 | 0x80;
            pair[0].transmit(superFrame6(payload, mss, flags));
            net.settle();
            int segs = (payload.length + mss - 1) / mss;
            assertEquals(46, segs);
            assertEquals(segs, got.size(), "ceil(65515 / 1440) segments");
            ByteArrayOutputStream joined = new ByteArrayOutputStream();
            for (int i = 0; i < got.size(); i++) {
                byte[] f = got.get(i);
                ByteBuf fb = Unpooled.wrappedBuffer(f);
                int expectedLen = i == segs - 1 ? payload.length - mss * (segs - 1) : mss;
                assertEquals(0x86dd, Frames.u16(f, 12), "EtherType IPv6");
                assertEquals(0x6001_2345, fb.getInt(14), "version, traffic class and flow label kept");
                assertEquals(20 + expectedLen, Frames.u16(f, 18), "IPv6 payload length of segment " + i);
                assertEquals(14 + 40 + 20 + expectedLen, f.length, "frame length of segment " + i);
                assertEquals(64, f[21] & 0xff, "hop limit kept");
                assertTrue(f.length - 14 <= 1500, "each segment fits the MTU");
                int tcpLen = f.length - 54;
                long ph = pseudoHeader6(SRC6, DST6, tcpLen, 6);
                assertEquals(0, Checksum.finish(Checksum.add(fb, 54, tcpLen, ph)), "TCP checksum of segment " + i);
                assertEquals(0xfffff000L + (long) mss * i & 0xffffffffL, Frames.u32(f, 58) & 0xffffffffL,
                        "sequence advances by the MSS and wraps");
                int fl = f[67] & 0xff;
                assertEquals(i == 0, (fl & 0x80) != 0, "CWR only on the first");
                assertEquals(i == segs - 1, (fl & 0x01) != 0, "FIN only on the last");
                assertEquals(i == segs - 1, (fl & 0x08) != 0, "PSH only on the last");
                joined.write(f, 74, f.length - 74);
            }
            assertArrayEquals(payload, joined.toByteArray());
        }
    }

    @Test
    void tcpv6SuperFrameWithAnExtensionHeaderIsNotSegmentedBlindly() {
        Packet p = superFrame6(new byte[5000], 1440, 0x10);
        // Next header: a destination options header instead of TCP.
        p.buf().setByte(p.start() + 14 + 6, 60);
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            VethEnd[] pair = net.link(a, "veth0", null, net.ns("b"), "veth1", null);
            assertEquals(false, GsoSegmentation.segment(pair[0], p));
            assertEquals(Packet.GSO_TCPV6, p.gsoType(), "left untouched");
        } finally {
            p.release();
        }
    }
}
