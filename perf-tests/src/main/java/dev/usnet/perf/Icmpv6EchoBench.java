package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
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
 * One IPv6 ping answered by a router: an echo request refilled into a fresh pooled packet, {@code Device.receive}
 * on eth0 → {@code Ip6Input} (local delivery) → {@code Icmpv6} (checksum over the pseudo-header, echo) → the reply
 * built, routed through {@code Fib6} and sent through a static ND entry → {@code Device.transmit} on eth0 → a sink
 * frees it. With {@code -prof gc} it shows what a whole ping round allocates per request.
 *
 * <p>{@code payload} is the echo data in bytes (56: ping's default; 1452: a full 1500-byte packet). The whole
 * request is written from the template, because ICMPv6's checksum covers the payload.
 */
@State(Scope.Thread)
public class Icmpv6EchoBench extends UsnetBench {
    static final long MAC_HOST = 0x02_00_00_00_aa_01L;
    static final long MAC_PEER = 0x02_00_00_00_bb_02L;
    static final Ipv6Addr HOST = Ipv6Addr.parse("2001:db8:1::1");
    static final Ipv6Addr PEER = Ipv6Addr.parse("2001:db8:1::2");

    @Param({"56", "1452"})
    int payload;

    private NetStack host;
    private SinkDevice eth0;
    private Frames.Template request;
    private int frameLen;
    private long invocations;
    private long baseline;

    @Setup(Level.Trial)
    public void setup() {
        // Virtual time never advances: no timer (ND, MLD, DAD, ICMPv6 rate limits) runs during the measurement.
        host = new NetStack("bench-echo6", new VirtualScheduler(1_000_000_000L), 1);
        host.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        host.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        host.knobs().set("net.ipv6.conf.all.forwarding", "1");
        eth0 = new SinkDevice("eth0", MAC_HOST);
        host.register(eth0);
        eth0.setUp(true);
        host.ipv6().addAddress(eth0, HOST, 64, true);
        host.ipv6().neigh().addPermanent(eth0, PEER.hi(), PEER.lo(), MAC_PEER);
        baseline = eth0.frames;
        request = echoRequest(payload);
        frameLen = EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + Icmpv6Packet.HEADER_LEN + payload;
        verify();
    }

    /** The whole frame of an echo request from the peer to the host, checksum valid. */
    private static Frames.Template echoRequest(int payload) {
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

    /** One request through the measured path, its reply inspected at the sink. */
    private void verify() {
        long echosBefore = host.mib().get(Mib.Icmp6InEchos);
        long repliesBefore = host.mib().get(Mib.Icmp6OutEchoReplies);
        eth0.inspect = true;
        eth0.receive(Frames.refill(request, frameLen));
        eth0.inspect = false;
        invocations++;
        check(host.mib().get(Mib.Icmp6InEchos) == echosBefore + 1, "the echo request was not received");
        check(host.mib().get(Mib.Icmp6OutEchoReplies) == repliesBefore + 1, "no echo reply was sent");
        check(eth0.frames - baseline == invocations, "the reply did not come out of eth0");
        check(host.drops().total() == 0, "drops on the echo path: " + host.drops().snapshot());
        check(eth0.lastLength == frameLen, "reply length " + eth0.lastLength + " != request length " + frameLen);
        check(eth0.lastDst == MAC_PEER && eth0.lastSrc == MAC_HOST,
                "reply MACs wrong: " + Frames.mac(eth0.lastDst) + " " + Frames.mac(eth0.lastSrc));
        check(eth0.lastNextHeader == Ipv6Packet.NEXTHDR_ICMPV6, "reply next header " + eth0.lastNextHeader);
        check(eth0.lastHopLimit == 64, "reply hop limit " + eth0.lastHopLimit + ", expected hop_limit (64)");
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
        check(eth0.frames - baseline == invocations,
                "eth0 sent " + (eth0.frames - baseline) + " replies for " + invocations + " requests");
        check(host.drops().total() == 0, "drops on the echo path: " + host.drops().snapshot());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        host.close();
    }
}
