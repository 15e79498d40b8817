package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One ping answered: an echo request refilled into a fresh pooled packet, {@code Device.receive} on eth0 →
 * {@code l2Receive} → {@code IpInput.rcv} (local delivery) → {@code Icmp.rcv} (checksum, the
 * {@code icmp_echo_ignore_*} knobs) → the echo reply built, routed and sent through a static neighbour →
 * {@code Device.transmit} on eth0 → a sink frees it. The path reads its knobs by declaration, so with
 * {@code -prof gc} it shows what the whole round allocates per request: nothing.
 *
 * <p>{@code payload} is the echo data in bytes (56: ping's default; 1472: a full 1500-byte datagram). The whole
 * request, payload included, is written from the template, because ICMP's checksum covers the payload.
 */
@State(Scope.Thread)
public class IcmpEchoBench extends UsnetBench {
    static final long MAC_HOST = 0x02_00_00_00_aa_01L;
    static final long MAC_PEER = 0x02_00_00_00_bb_02L;
    static final int HOST = Ipv4Addr.parse("198.18.1.1");
    static final int PEER = Ipv4Addr.parse("198.18.1.2");

    @Param({"56", "1472"})
    int payload;

    private NetStack host;
    private SinkDevice eth0;
    private Frames.Template request;
    private int frameLen;
    private long invocations;

    @Setup(Level.Trial)
    public void setup() {
        // Virtual time never advances: no timer (neighbour, peer limits) runs during the measurement.
        host = new NetStack("bench-echo", new VirtualScheduler(1_000_000_000L), 1);
        eth0 = new SinkDevice("eth0", MAC_HOST);
        host.register(eth0);
        eth0.setUp(true);
        host.devinet().add(eth0, HOST, 24);
        host.neigh().addPermanent(eth0, PEER, MAC_PEER);
        request = echoRequest(payload);
        frameLen = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + IcmpPacket.HEADER_LEN + payload;
        verify();
    }

    /** The whole frame of an echo request from the peer to the host, checksums valid. */
    private static Frames.Template echoRequest(int payload) {
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

    /** One request through the measured path, its reply inspected at the sink. */
    private void verify() {
        long echosBefore = host.mib().get(Mib.IcmpInEchos);
        long repliesBefore = host.mib().get(Mib.IcmpOutEchoReps);
        eth0.inspect = true;
        eth0.receive(Frames.refill(request, frameLen));
        eth0.inspect = false;
        invocations++;
        check(host.mib().get(Mib.IcmpInEchos) == echosBefore + 1, "the echo request was not received");
        check(host.mib().get(Mib.IcmpOutEchoReps) == repliesBefore + 1, "no echo reply was sent");
        check(eth0.frames == invocations, "the reply did not come out of eth0");
        check(host.drops().total() == 0, "drops on the echo path: " + host.drops().snapshot());
        check(eth0.lastLength == frameLen, "reply length " + eth0.lastLength + " != request length " + frameLen);
        check(eth0.lastDst == MAC_PEER && eth0.lastSrc == MAC_HOST,
                "reply MACs wrong: " + Frames.mac(eth0.lastDst) + " " + Frames.mac(eth0.lastSrc));
        check(eth0.lastTtl == 64, "reply TTL " + eth0.lastTtl + ", expected net.ipv4.ip_default_ttl (64)");
        check(eth0.lastIpChecksumOk, "reply IPv4 header checksum invalid");
        check(eth0.lastRefCntAfterRelease == 0, "the reply's buffer is still referenced after the sink freed it");
    }

    @Benchmark
    public void echo() {
        eth0.receive(Frames.refill(request, frameLen));
        invocations++;
    }

    /** Every request of the iteration must have been answered, none dropped. */
    @TearDown(Level.Iteration)
    public void checkIteration() {
        check(eth0.frames == invocations, "eth0 sent " + eth0.frames + " replies for " + invocations + " requests");
        check(host.drops().total() == 0, "drops on the echo path: " + host.drops().snapshot());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
    }
}
