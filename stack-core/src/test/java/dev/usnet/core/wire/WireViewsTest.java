package dev.usnet.core.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class WireViewsTest {
    private static final long A = 0x0200_0000_0001L;
    private static final long B = 0x0200_0000_0002L;

    @Test
    void ipv4CheckNamesEachDefect() {
        byte[] f = Frames.udp(A, B, "198.18.0.1", "198.18.0.2", 64, 10, 1, false);
        ByteBuf b = Unpooled.wrappedBuffer(f);
        Ipv4Packet ip = new Ipv4Packet();
        assertNull(ip.check(b, 14, f.length - 14));
        assertEquals(DropReason.PKT_TOO_SMALL, ip.check(b, 14, 19));

        byte[] v6 = f.clone();
        v6[14] = 0x65;
        assertEquals(DropReason.IP_VERSION, ip.check(Unpooled.wrappedBuffer(v6), 14, f.length - 14));

        byte[] ihl = f.clone();
        ihl[14] = 0x44;
        assertEquals(DropReason.IP_INHDR, ip.check(Unpooled.wrappedBuffer(ihl), 14, f.length - 14));

        byte[] csum = f.clone();
        csum[14 + 10] ^= 0x55;
        assertEquals(DropReason.IP_CSUM, ip.check(Unpooled.wrappedBuffer(csum), 14, f.length - 14));

        byte[] longer = f.clone();
        longer[14 + 3] = (byte) (longer[14 + 3] + 50);
        Frames.fixIpChecksum(longer);
        assertEquals(DropReason.IP_TRUNCATED, ip.check(Unpooled.wrappedBuffer(longer), 14, f.length - 14));
    }

    @Test
    void udpCheckValidatesLengthAndChecksum() {
        byte[] f = Frames.udp(A, B, "198.18.0.1", "198.18.0.2", 64, 33, 1, false);
        ByteBuf b = Unpooled.wrappedBuffer(f);
        UdpDatagram u = new UdpDatagram();
        int src = Ipv4Addr.parse("198.18.0.1");
        int dst = Ipv4Addr.parse("198.18.0.2");
        assertNull(u.check(b, 34, 41, src, dst));
        assertEquals(33, u.payloadLength());
        assertEquals(DropReason.UDP_CSUM, u.check(b, 34, 41, src, dst + 1));
        assertEquals(DropReason.UDP_MALFORMED, u.check(b, 34, 40, src, dst));
        assertEquals(DropReason.UDP_MALFORMED, u.check(b, 34, 7, src, dst));
    }

    @Test
    void arpCheckRejectsWrongTypesAndLengths() {
        ByteBuf b = Unpooled.buffer(28).writerIndex(28);
        ArpPacket.write(b, 0, ArpPacket.OP_REQUEST, A, 1, 0, 2);
        ArpPacket arp = new ArpPacket();
        assertNull(arp.check(b, 0, 28));
        assertEquals(DropReason.PKT_TOO_SMALL, arp.check(b, 0, 27));
        b.setByte(ArpPacket.HLEN, 8);
        assertEquals(DropReason.ARP_MALFORMED, arp.check(b, 0, 28));
        b.setByte(ArpPacket.HLEN, 6);
        b.setShort(ArpPacket.OP, 9);
        assertEquals(DropReason.ARP_MALFORMED, arp.check(b, 0, 28));
    }

    @Test
    void macAndAddressParsingRejectGarbageWithTheInput() {
        assertEquals(0x0200_0000_0affL, MacAddr.parse("02:00:00:00:0a:ff"));
        assertEquals("02:00:00:00:0a:ff", MacAddr.format(0x0200_0000_0affL));
        var e = assertThrows(IllegalArgumentException.class, () -> MacAddr.parse("02:00:00:0a:ff"));
        assertEquals(true, e.getMessage().contains("02:00:00:0a:ff"));
        assertThrows(IllegalArgumentException.class, () -> Ipv4Addr.parse("198.18.0.256"));
        assertThrows(IllegalArgumentException.class, () -> Ipv4Addr.parse("198.18.0"));
        assertEquals("198.18.0.1", Ipv4Addr.format(Ipv4Addr.parse("198.18.0.1")));
        assertEquals(1, MacAddr.linkLocalGroup(0x0180_c200_0001L));
        assertEquals(-1, MacAddr.linkLocalGroup(0x0180_c200_0010L));
    }
}
