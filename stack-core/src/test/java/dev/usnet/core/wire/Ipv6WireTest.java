package dev.usnet.core.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.DropReason;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class Ipv6WireTest {
    /** An echo request 2001:db8:1::2 > 2001:db8:1::1, id 0x1234 seq 1, "ping", as an independent encoder wrote it. */
    private static final String ECHO_REQUEST = "60000000000c3a4020010db800010000000000000000000220010db8000100000000"
            + "0000000000018000333c1234000170696e67";

    @ParameterizedTest
    @CsvSource({
        "2001:db8::1, 2001:db8::1",
        "2001:0db8:0000:0000:0000:0000:0002:0001, 2001:db8::2:1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "1:0:0:2:0:0:0:3, 1:0:0:2::3",
        "0:0:0:0:0:1:0:0, ::1:0:0",
        "::, ::",
        "::1, ::1",
        "FE80::AB, fe80::ab",
        "1:2:3:4:5:6:7::, 1:2:3:4:5:6:7:0",
        "::ffff:198.18.0.1, ::ffff:198.18.0.1",
        "::ffff:0:0, ::ffff:0.0.0.0",
        "::1.2.3.4, ::1.2.3.4",
        "::0.0.1.2, ::102",
        "fd00:1:2:3:4:5:6.7.8.9, fd00:1:2:3:4:5:607:809",
    })
    void parsesAndPrintsAsTheCLibrary(String in, String printed) {
        Ipv6Addr a = Ipv6Addr.parse(in);
        assertEquals(printed, a.toString());
        assertEquals(a, Ipv6Addr.parse(printed));
    }

    @ParameterizedTest
    @ValueSource(strings = {":::", "1::2::3", "2001:db8", "12345::", "g::", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", ":1::",
        "1::2:", "1.2.3.4", "::1.2.3", "1:2:3:4:5:6:7:1.2.3.4", "", "1:2:3:4:5:6:7:8::"})
    void refusesWhatIsNotAnAddress(String in) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Ipv6Addr.parse(in));
        assertTrue(e.getMessage().contains("'" + in + "'"), e.getMessage());
    }

    @Test
    void linkLocalFromMacIsModifiedEui64() {
        assertEquals("fe80::ff:fe00:c001", Ipv6Addr.linkLocalFromMac(0x0200_0000_c001L).toString());
        assertEquals("fe80::211:22ff:fe33:4455", Ipv6Addr.linkLocalFromMac(0x0011_2233_4455L).toString());
        assertTrue(Ipv6Addr.parse("fe80::1").isLinkLocal());
        assertTrue(Ipv6Addr.parse("febf::1").isLinkLocal());
        assertFalse(Ipv6Addr.parse("fec0::1").isLinkLocal());
    }

    @Test
    void solicitedNodeAndMulticastMac() {
        Ipv6Addr t = Ipv6Addr.parse("2001:db8:1::12:3456");
        Ipv6Addr sn = Ipv6Addr.solicitedNode(t.lo());
        assertEquals("ff02::1:ff12:3456", sn.toString());
        assertTrue(Ipv6Addr.isSolicitedNode(sn.hi(), sn.lo()));
        assertFalse(Ipv6Addr.isSolicitedNode(Ipv6Addr.ALL_NODES.hi(), Ipv6Addr.ALL_NODES.lo()));
        assertEquals("33:33:ff:12:34:56", MacAddr.format(Ipv6Addr.multicastMac(sn.lo())));
        assertEquals(Ipv6Addr.SCOPE_LINK_LOCAL, Ipv6Addr.multicastScope(sn.hi()));
        assertEquals(Ipv6Addr.SCOPE_GLOBAL, Ipv6Addr.multicastScope(Ipv6Addr.parse("ff0e::1").hi()));
    }

    @Test
    void prefixesAndOrder() {
        Ipv6Addr a = Ipv6Addr.parse("2001:db8:1:2:3:4:5:6");
        assertEquals("2001:db8:1::", a.prefix(48).toString());
        assertEquals("2001:db8:1:2:3::", a.prefix(80).toString());
        assertEquals(a, a.prefix(128));
        assertEquals(Ipv6Addr.ANY, a.prefix(0));
        Ipv6Addr b = Ipv6Addr.parse("2001:db8:1:2:3:4:ffff:0");
        assertTrue(a.prefixMatches(96, b.hi(), b.lo()));
        assertFalse(a.prefixMatches(97, b.hi(), b.lo()));
        assertTrue(Ipv6Addr.parse("ffff::").compareTo(Ipv6Addr.parse("::1")) > 0, "compared unsigned");
    }

    @Test
    void echoRequestFromAnIndependentEncoderChecksAndReads() {
        ByteBuf b = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(ECHO_REQUEST));
        Ipv6Packet ip = new Ipv6Packet();
        assertNull(ip.check(b, 0, b.readableBytes()));
        assertEquals("2001:db8:1::2", ip.src().toString());
        assertEquals("2001:db8:1::1", ip.dst().toString());
        assertEquals(64, ip.hopLimit());
        assertEquals(Ipv6Packet.NEXTHDR_ICMPV6, ip.nextHeader());
        Icmpv6Packet icmp = new Icmpv6Packet();
        assertNull(icmp.check(b, 0, ip.payloadOffset(), ip.payloadLength()));
        assertEquals(Icmpv6Packet.ECHO_REQUEST, icmp.type());
        assertEquals(0x1234, icmp.echoId());
        assertEquals(1, icmp.echoSeq());

        int sum = b.getUnsignedShort(40 + Icmpv6Packet.CHECKSUM);
        Icmpv6Packet.fillChecksum(b, 0, 40, ip.payloadLength());
        assertEquals(0x333c, sum);
        assertEquals(sum, b.getUnsignedShort(40 + Icmpv6Packet.CHECKSUM), "our checksum equals the encoder's");

        b.setByte(45, b.getByte(45) ^ 1);
        assertEquals(DropReason.ICMP_CSUM, icmp.check(b, 0, 40, ip.payloadLength()));
    }

    @Test
    void pseudoHeaderFromLongsEqualsFromBytes() {
        ByteBuf b = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(ECHO_REQUEST));
        Ipv6Packet ip = new Ipv6Packet().wrap(b, 0);
        long fromBytes = Ipv6Packet.pseudoHeaderSum(b, 0, 12, 58);
        long fromLongs = Ipv6Packet.pseudoHeaderSum(ip.srcHi(), ip.srcLo(), ip.dstHi(), ip.dstLo(), 12, 58);
        assertEquals(Checksum.finish(fromBytes), Checksum.finish(fromLongs));
    }

    @Test
    void fixedHeaderCheckNamesEachDefect() {
        byte[] f = ByteBufUtil.decodeHexDump(ECHO_REQUEST);
        Ipv6Packet ip = new Ipv6Packet();
        assertEquals(DropReason.PKT_TOO_SMALL, ip.check(Unpooled.wrappedBuffer(f), 0, 39));
        byte[] v4 = f.clone();
        v4[0] = 0x40;
        assertEquals(DropReason.IP_VERSION, ip.check(Unpooled.wrappedBuffer(v4), 0, f.length));
        assertEquals(DropReason.IP_TRUNCATED, ip.check(Unpooled.wrappedBuffer(f), 0, f.length - 1));
    }

    @Test
    void writtenHeaderReadsBack() {
        ByteBuf b = Unpooled.buffer(40).writerIndex(40);
        Ipv6Addr s = Ipv6Addr.parse("fd00::1");
        Ipv6Addr d = Ipv6Addr.parse("fd00::2");
        Ipv6Packet.writeHeader(b, 0, 0xb8, 0xabcde, 8, 17, 255, s.hi(), s.lo(), d.hi(), d.lo());
        Ipv6Packet ip = new Ipv6Packet().wrap(b, 0);
        assertEquals(0xb8, ip.trafficClass());
        assertEquals(0xabcde, ip.flowLabel());
        assertEquals(255, ip.hopLimit());
        ip.decrementHopLimit();
        assertEquals(254, ip.hopLimit());
        assertEquals(s, ip.src());
        assertEquals(d, ip.dst());
    }

    @Test
    void ndOptionsWalkAndRefuseZeroLength() {
        ByteBuf b = Unpooled.buffer(32).writerIndex(24);
        NdOption.writeLinkAddress(b, 0, NdOption.SOURCE_LL_ADDR, 0x0200_0000_0001L);
        b.setByte(8, NdOption.MTU);
        b.setByte(9, 1);
        b.setInt(12, 1280);
        b.setByte(16, 99);
        b.setByte(17, 1);
        NdOption o = new NdOption().start(b, 0, 24);
        assertTrue(o.next());
        assertEquals(NdOption.SOURCE_LL_ADDR, o.type());
        assertEquals(0x0200_0000_0001L, o.linkAddress());
        assertTrue(o.next());
        assertEquals(NdOption.MTU, o.type());
        assertTrue(o.next());
        assertEquals(99, o.type(), "unknown options are walked over, not refused");
        assertFalse(o.next());
        assertFalse(o.malformed());

        b.setByte(9, 0);
        o.start(b, 0, 24);
        assertTrue(o.next());
        assertFalse(o.next());
        assertTrue(o.malformed(), "length zero ends the walk as malformed");
        b.setByte(9, 3);
        o.start(b, 0, 24);
        assertTrue(o.next());
        assertFalse(o.next());
        assertTrue(o.malformed(), "an option running past the message is malformed");
    }

    @Test
    void describesIpv6Frames() {
        byte[] ip = ByteBufUtil.decodeHexDump(ECHO_REQUEST);
        ByteBuf f = Unpooled.buffer(14 + ip.length);
        MacAddr.set(f, 0, 0x0200_0000_0002L);
        MacAddr.set(f, 6, 0x0200_0000_0001L);
        f.setShort(12, EthernetFrame.ETH_P_IPV6);
        f.setBytes(14, ip);
        f.writerIndex(14 + ip.length);
        assertEquals("02:00:00:00:00:01 > 02:00:00:00:00:02, IPv6 2001:db8:1::2 > 2001:db8:1::1 hlim 64 plen 12: "
                + "ICMPv6 type 128 code 0, length 66", FrameDescriber.describe(f, 0, f.writerIndex()));
    }
}
