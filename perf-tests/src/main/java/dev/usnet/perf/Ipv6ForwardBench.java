package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Per-packet IPv6 forwarding through a router namespace ({@code net.ipv6.conf.all.forwarding=1}):
 * {@code Device.receive} on the ingress port → eth demux → {@code Ip6Input} (header check, extension-header walk,
 * {@code Fib6} lookup) → {@code Ip6Forward.forward} (scope checks, MTU, COW per {@code usnet.forward.cow}, hop limit
 * decrement) → the ND table's static entry → {@code Device.transmit} → a sink driver that frees the packet.
 *
 * <p>{@code ipLen} counts the 40-byte fixed header (64, 1500, and 65535, the largest IPv4 datagram, for comparison
 * with {@link Ipv4ForwardBench}; both ports have MTU 65535 so nothing is too big). The refill writes 62 header
 * bytes (Ethernet, IPv6, UDP) into a fresh pooled packet, hop limit 64 again, payload not written. With
 * {@code shared=true} a {@code cloneShared()} of the packet is held while it is forwarded, as TCP's retransmit
 * queue would, and released afterwards: the same copy-on-write question as IPv4's TTL edit.
 */
@State(Scope.Thread)
public class Ipv6ForwardBench extends UsnetBench {
    static final long MAC_H1 = 0x02_00_00_00_aa_01L;
    static final long MAC_H2 = 0x02_00_00_00_bb_02L;
    static final long MAC_R1 = 0x02_00_00_00_01_01L;
    static final long MAC_R2 = 0x02_00_00_00_01_02L;
    static final Ipv6Addr H1 = Ipv6Addr.parse("2001:db8:1::2");
    static final Ipv6Addr H2 = Ipv6Addr.parse("2001:db8:2::2");
    static final int HOP_LIMIT = 64;

    @Param({"64", "1500", "65535"})
    int ipLen;

    @Param({"false", "true"})
    boolean shared;

    @Param({"head-copy", "full-copy", "always-copy", "skip-ttl"})
    String cow;

    private NetStack router;
    private SinkDevice in;
    private SinkDevice out;
    private Frames.Template template;
    private int frameLen;
    private long invocations;
    /** Frames the ports sent at link up (MLD reports, router solicitations), before any benchmark packet. */
    private long inBaseline;
    private long outBaseline;

    @Setup(Level.Trial)
    public void setup() {
        // Clock at 1 s; virtual time never advances, so no timer (ND, MLD, DAD, reassembly) runs while measured.
        VirtualScheduler sched = new VirtualScheduler(1_000_000_000L);
        router = new NetStack("bench-router6", sched, 1);
        router.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        router.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        router.knobs().set("net.ipv6.conf.all.forwarding", "1");
        router.knobs().set("usnet.forward.cow", cow);
        in = new SinkDevice("r1", MAC_R1);
        out = new SinkDevice("r2", MAC_R2);
        router.register(in);
        router.register(out);
        for (SinkDevice d : new SinkDevice[] {in, out}) {
            d.setMtu(65535);
            d.setUp(true);
        }
        router.ipv6().addAddress(in, Ipv6Addr.parse("2001:db8:1::1"), 64, true);
        router.ipv6().addAddress(out, Ipv6Addr.parse("2001:db8:2::1"), 64, true);
        router.ipv6().neigh().addPermanent(in, H1.hi(), H1.lo(), MAC_H1);
        router.ipv6().neigh().addPermanent(out, H2.hi(), H2.lo(), MAC_H2);
        inBaseline = in.frames;
        outBaseline = out.frames;

        frameLen = EthernetFrame.HEADER_LEN + ipLen;
        template = Frames.udp6Headers(MAC_R1, MAC_H1, H1, H2, HOP_LIMIT, ipLen);
        verify();
    }

    /**
     * One packet through the measured path, inspected at the sink: forwarded out of r2 to the neighbour's MAC, hop
     * limit 63 (64 when skip-ttl leaves a shared packet alone), length unchanged, the COW policy visibly applied,
     * every buffer freed afterwards.
     */
    private void verify() {
        CowPolicy policy = CowPolicy.parse(cow);
        check(router.knobs().get(CowSysctl.FORWARD_COW) == policy, "usnet.forward.cow not applied");
        long copiesBefore = router.cow().copies();
        long skippedBefore = router.cow().ttlSkipped();
        long fwdBefore = router.mib().get(Mib.Ip6OutForwDatagrams);

        Packet p = Frames.refill(template, frameLen);
        ByteBuf data = p.buf();
        Packet keep = shared ? p.cloneShared() : null;
        out.inspect = true;
        in.receive(p);
        out.inspect = false;
        if (keep != null) {
            check(keep.buf().getUnsignedByte(keep.start() + EthernetFrame.HEADER_LEN + Ipv6Packet.HOP_LIMIT) == HOP_LIMIT,
                    "forwarding edited bytes shared with another holder");
            keep.release();
        }
        invocations++;

        check(out.frames - outBaseline == invocations, "the packet did not come out of r2");
        check(in.frames == inBaseline, "something was sent back out of the ingress port (ICMPv6 error or redirect)");
        check(router.drops().total() == 0, "drops on the forwarding path: " + router.drops().snapshot());
        check(router.mib().get(Mib.Ip6OutForwDatagrams) == fwdBefore + 1, "Ip6OutForwDatagrams not counted");
        check(out.lastLength == frameLen, "frame length changed: " + out.lastLength + " != " + frameLen);
        check(out.lastDst == MAC_H2 && out.lastSrc == MAC_R2,
                "egress MACs wrong: " + Frames.mac(out.lastDst) + " " + Frames.mac(out.lastSrc));
        check(out.lastNextHeader == Ipv6Packet.NEXTHDR_UDP, "next header at the sink is " + out.lastNextHeader);
        boolean skips = shared && policy == CowPolicy.SKIP_TTL;
        check(out.lastHopLimit == (skips ? HOP_LIMIT : HOP_LIMIT - 1), "hop limit at the sink is " + out.lastHopLimit);
        boolean copies = policy == CowPolicy.ALWAYS_COPY || (shared && policy != CowPolicy.SKIP_TTL);
        check(router.cow().copies() == copiesBefore + (copies ? 1 : 0),
                "COW copies " + (router.cow().copies() - copiesBefore) + ", expected " + (copies ? 1 : 0));
        check(router.cow().ttlSkipped() == skippedBefore + (skips ? 1 : 0), "skip-ttl not counted");
        check(out.lastRefCntAfterRelease == 0, "the forwarded packet's buffer is still referenced after the sink freed it");
        check(data.refCnt() == 0, "the original data buffer leaked (refCnt " + data.refCnt() + ")");
    }

    @Benchmark
    public void forward() {
        Packet p = Frames.refill(template, frameLen);
        if (shared) {
            Packet keep = p.cloneShared();
            in.receive(p);
            keep.release();
        } else {
            in.receive(p);
        }
        invocations++;
    }

    /** Every packet sent in during the iteration must have been forwarded, none dropped or bounced. */
    @TearDown(Level.Iteration)
    public void checkIteration() {
        check(out.frames - outBaseline == invocations,
                "r2 sent " + (out.frames - outBaseline) + " packets for " + invocations + " received");
        check(in.frames == inBaseline, "packets were sent back out of the ingress port");
        check(router.drops().total() == 0, "drops on the forwarding path: " + router.drops().snapshot());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        router.close();
    }
}
