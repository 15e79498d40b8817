package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * One IPv6 ping answered by a router: an echo request refilled into a fresh pooled packet, {@code Device.receive}
 * on eth0 → {@code Ip6Input} (local delivery) → {@code Icmpv6} (checksum over the pseudo-header, echo) → the reply
 * built, routed through {@code Fib6} and sent through a static ND entry → {@code Device.transmit} on eth0 → a sink
 * frees it ({@link EchoBench}). With {@code -prof gc} it shows what a whole ping round allocates per request.
 *
 * <p>{@code payload} is the echo data in bytes (56: ping's default; 1452: a full 1500-byte packet). The whole
 * request is written from the template, because ICMPv6's checksum covers the payload.
 */
@State(Scope.Thread)
public class Icmpv6EchoBench extends EchoBench {
    static final Ipv6Addr HOST = Ipv6Addr.parse("2001:db8:1::1");
    static final Ipv6Addr PEER = Ipv6Addr.parse("2001:db8:1::2");

    @Param({"56", "1452"})
    int payload;

    @Override
    String hostName() {
        return "bench-echo6";
    }

    @Override
    void configure(NetStack host) {
        host.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        host.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        host.knobs().set("net.ipv6.conf.all.forwarding", "1");
    }

    @Override
    void addressAndNeighbour(NetStack host, SinkDevice eth0) {
        host.ipv6().addAddress(eth0, HOST, 64, true);
        host.ipv6().neigh().addPermanent(eth0, PEER.hi(), PEER.lo(), MAC_PEER);
    }

    @Override
    int frameLength() {
        return EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + Icmpv6Packet.HEADER_LEN + payload;
    }

    @Override
    Frames.Template echoRequest() {
        int icmpLen = Icmpv6Packet.HEADER_LEN + payload;
        int ip = EthernetFrame.HEADER_LEN;
        int icmp = ip + Ipv6Packet.HEADER_LEN;
        ByteBuf t = Unpooled.buffer(icmp + icmpLen).writerIndex(icmp + icmpLen);
        EthernetFrame.write(t, 0, MAC_HOST, MAC_PEER, EthernetFrame.ETH_P_IPV6);
        Ipv6Packet.writeHeader(t, ip, 0, 0, icmpLen, Ipv6Packet.NEXTHDR_ICMPV6, 64, PEER.hi(), PEER.lo(), HOST.hi(),
                HOST.lo());
        t.setByte(icmp + Icmpv6Packet.TYPE, Icmpv6Packet.ECHO_REQUEST);
        t.setShort(icmp + 4, 0x1d1d);
        t.setShort(icmp + 6, 1);
        for (int i = 0; i < payload; i++) {
            t.setByte(icmp + Icmpv6Packet.HEADER_LEN + i, i);
        }
        // RFC 8200 §8.1 pseudo-header: source, destination, upper-layer length, next header.
        long sum = Checksum.add(t, ip + Ipv6Packet.SRC, 32, 0);
        sum += icmpLen + Ipv6Packet.NEXTHDR_ICMPV6;
        sum = Checksum.add(t, icmp, icmpLen, sum);
        t.setShort(icmp + Icmpv6Packet.CHECKSUM, Checksum.finish(sum));
        return new Frames.Template(t.array());
    }

    @Override
    Mib echosIn() {
        return Mib.Icmp6InEchos;
    }

    @Override
    Mib repliesOut() {
        return Mib.Icmp6OutEchoReplies;
    }

    @Override
    void checkReplyHeader(SinkDevice sink) {
        check(sink.lastNextHeader == Ipv6Packet.NEXTHDR_ICMPV6, "reply next header " + sink.lastNextHeader);
        check(sink.lastHopLimit == 64, "reply hop limit " + sink.lastHopLimit + ", expected hop_limit (64)");
    }
}
