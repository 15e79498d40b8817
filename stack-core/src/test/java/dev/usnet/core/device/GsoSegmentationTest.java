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
}
