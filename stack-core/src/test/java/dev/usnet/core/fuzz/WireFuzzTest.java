package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.IpOptions;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.ArpPacket;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.FrameDescriber;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.NdOption;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * The wire parsers alone, as fast as they go: a frame's bytes through the Ethernet, ARP, IPv4, IP-options, ICMP,
 * UDP, TCP, IPv6, ICMPv6 and neighbour-discovery option views and the frame describer (logs, replay differences),
 * and a valid options header through the option handlers a router runs (record route and timestamp on input, the
 * forward fill-in, the echo into a reply, blanking for fragments). Nothing may throw; a header a check accepts has lengths within the frame; the option
 * handlers write nothing outside the IP header.
 */
class WireFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void wire(byte[] data) {
        ByteBuf b = Unpooled.wrappedBuffer(data);
        int len = data.length;
        FrameDescriber.describe(b, 0, len);
        EthernetFrame eth = new EthernetFrame();
        if (eth.check(b, 0, len) != null) {
            return;
        }
        int l3 = EthernetFrame.HEADER_LEN;
        int avail = len - l3;
        switch (eth.outerType()) {
            case EthernetFrame.ETH_P_ARP -> {
                ArpPacket arp = new ArpPacket();
                if (arp.check(b, l3, avail) == null) {
                    arp.op();
                    arp.sha();
                    arp.spa();
                    arp.tha();
                    arp.tpa();
                }
            }
            case EthernetFrame.ETH_P_IP -> ipv4(b, data, l3, avail);
            case EthernetFrame.ETH_P_IPV6 -> ipv6(b, l3, avail);
            default -> { }
        }
    }

    private static void ipv6(ByteBuf b, int l3, int avail) {
        Ipv6Packet ip = new Ipv6Packet();
        if (ip.check(b, l3, avail) != null) {
            return;
        }
        int plen = ip.payloadLength();
        if (Ipv6Packet.HEADER_LEN + plen > avail) {
            throw new AssertionError("accepted IPv6 payload length " + plen + " in " + avail + " bytes");
        }
        ip.src().toString();
        ip.dst().toString();
        if (ip.nextHeader() != Ipv6Packet.NEXTHDR_ICMPV6) {
            return;
        }
        int l4 = l3 + Ipv6Packet.HEADER_LEN;
        Icmpv6Packet icmp = new Icmpv6Packet();
        if (icmp.check(b, l3, l4, plen) != null) {
            return;
        }
        icmp.type();
        icmp.restWord();
        if (Icmpv6Packet.isNeighbourDiscovery(icmp.type())) {
            // Options follow the fixed part: 24 bytes for solicitations and advertisements, fewer for the others.
            int fixed = icmp.type() == Icmpv6Packet.NEIGHBOUR_SOLICITATION
                    || icmp.type() == Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT ? 24 : 8;
            if (plen < fixed) {
                return;
            }
            NdOption o = new NdOption().start(b, l4 + fixed, l4 + plen);
            int walked = 0;
            while (o.next()) {
                if (o.offset() < l4 + fixed || o.offset() + o.length() > l4 + plen || o.length() < 8) {
                    throw new AssertionError("option at " + o.offset() + " of " + o.length() + " bytes outside the message");
                }
                o.linkAddress();
                if (++walked > plen / 8) {
                    throw new AssertionError("the option walk does not advance");
                }
            }
        }
    }

    private static void ipv4(ByteBuf b, byte[] data, int l3, int avail) {
        Ipv4Packet ip = new Ipv4Packet();
        if (ip.check(b, l3, avail) != null) {
            return;
        }
        int hl = ip.headerLength();
        int total = ip.totalLength();
        if (hl < 20 || hl > total || total > avail) {
            throw new AssertionError("accepted IPv4 header " + hl + "/" + total + " in " + avail + " bytes");
        }
        if (hl > 20 && IpOptions.validate(b, l3) == IpOptions.OK) {
            options(data, l3, hl);
        }
        int l4 = l3 + hl;
        int plen = total - hl;
        if (ip.fragOffset() != 0) {
            return;
        }
        switch (ip.protocol()) {
            case Ipv4Packet.PROTO_ICMP -> {
                IcmpPacket icmp = new IcmpPacket();
                if (icmp.check(b, l4, plen) == null) {
                    icmp.type();
                    icmp.code();
                    icmp.echoId();
                    icmp.echoSeq();
                }
            }
            case Ipv4Packet.PROTO_UDP -> {
                UdpDatagram udp = new UdpDatagram();
                if (udp.check(b, l4, plen, ip.src(), ip.dst()) == null
                        && (udp.payloadLength() < 0 || udp.payloadOffset() + udp.payloadLength() > l4 + plen)) {
                    throw new AssertionError("accepted UDP payload " + udp.payloadLength() + " beyond the datagram");
                }
            }
            case Ipv4Packet.PROTO_TCP -> {
                TcpSegment tcp = new TcpSegment();
                DropReason bad = tcp.check(b, l4, plen);
                if (bad == null && (tcp.headerLength() < 20 || tcp.payloadLength() < 0
                        || tcp.payloadOffset() + tcp.payloadLength() > l4 + plen)) {
                    throw new AssertionError("accepted TCP header " + tcp.headerLength() + " of " + plen + " bytes");
                }
                if (bad == null) {
                    tcp.checksumValid(ip.src(), ip.dst());
                }
            }
            default -> { }
        }
    }

    /** The options a router runs on a header validate() accepted, on a private copy of the frame. */
    private static void options(byte[] data, int l3, int hl) {
        Packet p = Packet.allocate(Buffers.HEADROOM, data.length);
        try {
            ByteBuf b = p.buf();
            b.writeBytes(data);
            int ip = p.start() + l3;
            p.setNetwork(ip);
            p.setTransport(ip + hl);
            byte[] before = new byte[data.length];
            b.getBytes(p.start(), before);
            IpOptions.compileInput(p, b, ip, 0xc612_0101, 12_345_678L, a -> a == 0xc612_0101);
            IpOptions.forward(p, b, ip, 0xc612_0201);
            byte[] out = new byte[40];
            int echoed = IpOptions.echo(p, b, ip, out, a -> a == 0xc612_0101);
            IpOptions.blankUncopied(b, ip);
            byte[] after = new byte[data.length];
            b.getBytes(p.start(), after);
            for (int i = 0; i < after.length; i++) {
                if ((i < l3 + 20 || i >= l3 + hl) && i != l3 + 10 && i != l3 + 11 && before[i] != after[i]) {
                    throw new AssertionError("IP option handling changed byte " + i + " outside the options");
                }
            }
            if ((echoed & 0xff) > 40) {
                throw new AssertionError("echoed " + (echoed & 0xff) + " bytes of options, more than 40");
            }
        } finally {
            p.release();
        }
    }
}
