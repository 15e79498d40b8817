package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PacketBuilderTest {
    private static final int LOCAL = 0xC6120001;
    private static final int REMOTE = 0xC6120002;
    private static final byte[] LOCAL_BYTES = {(byte) 198, 18, 0, 1};
    private static final byte[] REMOTE_BYTES = {(byte) 198, 18, 0, 2};
    private static final byte[] LOCAL6 = Ipv6.parse("fd00:198:18::1");
    private static final byte[] REMOTE6 = Ipv6.parse("2001:db8::2");

    @Test
    void tcpSegmentsRoundTripWithValidChecksumsAndPaddedOptions() {
        List<TcpOptionSpec> opts = List.of(new TcpOptionSpec.Mss(1000), new TcpOptionSpec.SackPermitted(),
                new TcpOptionSpec.WindowScale(7));
        byte[] p = new PacketBuilder().tcp(REMOTE_BYTES, LOCAL_BYTES, 2, 48000, 8080, 0xFFFF_FFF0L, 1234, TcpFlags.SYN, 32792, 0,
                opts, 0);
        assertTrue(PacketBuilder.checksumsValid(p));
        assertEquals(20 + 20 + 12, p.length, "9 option bytes padded to 12");
        LivePacket d = LivePacket.decode(p, 5);
        assertArrayEquals(REMOTE_BYTES, d.src());
        assertEquals(8080, d.dstPort());
        assertEquals(0xFFFF_FFF0L, d.seq());
        assertEquals(2, d.ecn());
        assertEquals(List.of(new TcpOptionSpec.Mss(1000), new TcpOptionSpec.SackPermitted(),
                new TcpOptionSpec.WindowScale(7), new TcpOptionSpec.Eol()), d.options());
        p[30] ^= 1;
        assertFalse(PacketBuilder.checksumsValid(p));
    }

    @Test
    void icmpFragNeededQuotesTheStacksSegment() {
        byte[] p = new PacketBuilder().icmp(REMOTE, LOCAL, 3, 4, 1200, LOCAL, REMOTE, 8080, 48000, 1_000_001, 1460);
        assertTrue(PacketBuilder.checksumsValid(p));
        assertEquals(1, p[9], "IP protocol ICMP");
        assertEquals(3, p[20]);
        assertEquals(4, p[21]);
        assertEquals(1200, LivePacket.u16(p, 26), "next-hop MTU");
        int q = 28;
        assertEquals(0x45, p[q]);
        assertEquals(20 + 20 + 1460, LivePacket.u16(p, q + 2), "the quoted packet's own length");
        assertEquals(6, p[q + 9]);
        assertEquals(LOCAL, (int) LivePacket.u32(p, q + 12), "quoted from the stack");
        assertEquals(8080, LivePacket.u16(p, q + 20));
        assertEquals(48000, LivePacket.u16(p, q + 22));
        assertEquals(1_000_001, LivePacket.u32(p, q + 24));
        assertEquals(20 + 8 + 28, p.length, "IP header, ICMP header, quoted IP header and 8 bytes of TCP");
    }

    /** The one's complement sum over RFC 8200's pseudo-header and {@code len} bytes at {@code at}, folded. */
    private static int ipv6Checksum(byte[] p, int at, int len, int nextHeader) {
        long sum = 0;
        for (int i = 8; i < 40; i += 2) {
            sum += (p[i] & 255) << 8 | (p[i + 1] & 255);
        }
        sum += len + nextHeader;
        for (int i = at; i < at + len; i += 2) {
            sum += (p[i] & 255) << 8 | (i + 1 < at + len ? p[i + 1] & 255 : 0);
        }
        while (sum >>> 16 != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return (int) (~sum & 0xFFFF);
    }

    @Test
    void tcpOverIpv6HasAnIpv6HeaderAndThePseudoHeaderChecksum() {
        List<TcpOptionSpec> opts = List.of(new TcpOptionSpec.Mss(1460), new TcpOptionSpec.SackPermitted(),
                new TcpOptionSpec.WindowScale(7));
        byte[] p = new PacketBuilder().tcp(REMOTE6, LOCAL6, 1, 48000, 8080, 7, 0, TcpFlags.SYN, 32792, 0, opts, 3);
        assertEquals(40 + 20 + 12 + 3, p.length);
        assertEquals(0x60, p[0] & 0xF0, "version 6");
        assertEquals(1, p[1] >> 4 & 3, "ECN bits in the traffic class");
        assertEquals(20 + 12 + 3, LivePacket.u16(p, 4), "payload length: TCP header, options and data");
        assertEquals(6, p[6], "next header TCP");
        assertEquals(64, p[7], "hop limit");
        assertEquals(0, ipv6Checksum(p, 40, p.length - 40, 6), "TCP checksum over the IPv6 pseudo-header");
        assertTrue(PacketBuilder.checksumsValid(p));
        LivePacket d = LivePacket.decode(p, 9);
        assertTrue(d.ipv6() && d.tcp());
        assertArrayEquals(REMOTE6, d.src());
        assertArrayEquals(LOCAL6, d.dst());
        assertEquals(1, d.ecn());
        assertEquals(3, d.payloadLength());
        assertEquals(new TcpOptionSpec.Mss(1460), d.options().get(0));
        p[50] ^= 1;
        assertFalse(PacketBuilder.checksumsValid(p));
    }

    @Test
    void icmpv6PacketTooBigQuotesTheStacksIpv6Segment() {
        byte[] p = new PacketBuilder().icmpv6(REMOTE6, LOCAL6, 2, 0, 1280, LOCAL6, REMOTE6, 8080, 48000, 1_000_001,
                1440);
        assertEquals(40 + 8 + 40 + 8, p.length, "IPv6 header, ICMPv6 header, quoted IPv6 header, 8 bytes of TCP");
        assertEquals(58, p[6], "next header ICMPv6");
        assertEquals(8 + 40 + 8, LivePacket.u16(p, 4));
        assertEquals(0, ipv6Checksum(p, 40, p.length - 40, 58), "ICMPv6 checksum covers the pseudo-header");
        assertTrue(PacketBuilder.checksumsValid(p));
        assertEquals(2, p[40], "type packet too big");
        assertEquals(1280, LivePacket.u32(p, 44), "the MTU is a 32-bit field");
        int q = 48;
        assertEquals(0x60, p[q] & 0xF0);
        assertEquals(20 + 1440, LivePacket.u16(p, q + 4), "the quoted packet's own payload length");
        assertArrayEquals(LOCAL6, java.util.Arrays.copyOfRange(p, q + 8, q + 24), "quoted from the stack");
        assertEquals(8080, LivePacket.u16(p, q + 40));
        assertEquals(1_000_001, LivePacket.u32(p, q + 44));
        LivePacket d = LivePacket.decode(p, 0);
        assertTrue(d.icmp());
        assertEquals(2, d.icmpType());
    }

    @Test
    void ipv6AddressesFormatAsIpPrintsThem() {
        assertEquals("fd00:198:18::1", Ipv6.format(LOCAL6));
        assertEquals("2001:db8::2", Ipv6.format(REMOTE6));
        assertEquals("::", Ipv6.format(new byte[16]));
        assertEquals("1:0:2::3", Ipv6.format(Ipv6.parse("1:0:2:0:0:0:0:3")));
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 255, (byte) 255, (byte) 198, 18, 0, 1},
                Ipv6.mappedFromIpv4(LOCAL));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> Ipv6.parse("198.18.0.1"));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> Ipv6.parse("fd00::g"));
    }
}
