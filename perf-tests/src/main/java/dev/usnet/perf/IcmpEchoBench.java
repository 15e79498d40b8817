package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * One ping answered: an echo request refilled into a fresh pooled packet, {@code Device.receive} on eth0 →
 * {@code l2Receive} → {@code IpInput.rcv} (local delivery) → {@code Icmp.rcv} (checksum, the
 * {@code icmp_echo_ignore_*} knobs) → the echo reply built, routed and sent through a static neighbour →
 * {@code Device.transmit} on eth0 → a sink frees it ({@link EchoBench}). With {@code -prof gc} it shows what the
 * whole round allocates per request: nothing.
 *
 * <p>{@code payload} is the echo data in bytes (56: ping's default; 1472: a full 1500-byte datagram). The whole
 * request, payload included, is written from the template, because ICMP's checksum covers the payload.
 */
@State(Scope.Thread)
public class IcmpEchoBench extends EchoBench {
    static final int HOST = Ipv4Addr.parse("198.18.1.1");
    static final int PEER = Ipv4Addr.parse("198.18.1.2");

    @Param({"56", "1472"})
    int payload;

    @Override
    String hostName() {
        return "bench-echo";
    }

    @Override
    void configure(NetStack host) {
    }

    @Override
    void addressAndNeighbour(NetStack host, SinkDevice eth0) {
        host.devinet().add(eth0, HOST, 24);
        host.neigh().addPermanent(eth0, PEER, MAC_PEER);
    }

    @Override
    int frameLength() {
        return EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + IcmpPacket.HEADER_LEN + payload;
    }

    @Override
    Frames.Template echoRequest() {
        int icmpLen = IcmpPacket.HEADER_LEN + payload;
        int ipLen = Ipv4Packet.MIN_HEADER_LEN + icmpLen;
        ByteBuf t = Unpooled.buffer(EthernetFrame.HEADER_LEN + ipLen).writerIndex(EthernetFrame.HEADER_LEN + ipLen);
        EthernetFrame.write(t, 0, MAC_HOST, MAC_PEER, EthernetFrame.ETH_P_IP);
        Ipv4Packet.writeHeader(t, EthernetFrame.HEADER_LEN, 0, ipLen, 0x4242, 0, 64, Ipv4Packet.PROTO_ICMP, PEER, HOST);
        int icmp = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN;
        t.setByte(icmp + IcmpPacket.TYPE, IcmpPacket.ECHO);
        t.setShort(icmp + 4, 0x1d1d);
        t.setShort(icmp + 6, 1);
        for (int i = 0; i < payload; i++) {
            t.setByte(icmp + IcmpPacket.HEADER_LEN + i, i);
        }
        t.setShort(icmp + IcmpPacket.CHECKSUM, Checksum.compute(t, icmp, icmpLen));
        return new Frames.Template(t.array());
    }

    @Override
    Mib echosIn() {
        return Mib.IcmpInEchos;
    }

    @Override
    Mib repliesOut() {
        return Mib.IcmpOutEchoReps;
    }

    @Override
    void checkReplyHeader(SinkDevice sink) {
        check(sink.lastTtl == 64, "reply TTL " + sink.lastTtl + ", expected net.ipv4.ip_default_ttl (64)");
        check(sink.lastIpChecksumOk, "reply IPv4 header checksum invalid");
    }
}
