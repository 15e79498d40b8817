package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PacketBuilderTest {
    private static final int LOCAL = 0xC6120001;
    private static final int REMOTE = 0xC6120002;

    @Test
    void tcpSegmentsRoundTripWithValidChecksumsAndPaddedOptions() {
        List<TcpOptionSpec> opts = List.of(new TcpOptionSpec.Mss(1000), new TcpOptionSpec.SackPermitted(),
                new TcpOptionSpec.WindowScale(7));
        byte[] p = new PacketBuilder().tcp(REMOTE, LOCAL, 2, 48000, 8080, 0xFFFF_FFF0L, 1234, TcpFlags.SYN, 32792, 0,
                opts, 0);
        assertTrue(PacketBuilder.checksumsValid(p));
        assertEquals(20 + 20 + 12, p.length, "9 option bytes padded to 12");
        LivePacket d = LivePacket.decode(p, 5);
        assertEquals(REMOTE, d.src());
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
}
