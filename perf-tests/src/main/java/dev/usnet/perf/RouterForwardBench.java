package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.EthernetFrame;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Per-packet forwarding through a router namespace of two ports, whatever the family: the router, its ports r1 and
 * r2 (sink drivers that free what they are given, MTU 65535 so nothing is too big), the measured operation, and the
 * checks that every packet came out of r2 with its hop count one lower and the copy-on-write policy visibly applied.
 * {@link Ipv4ForwardBench} and {@link Ipv6ForwardBench} give the family's knobs, addresses, header template and
 * what its header looks like at the sink.
 *
 * <p>{@code ipLen} is the datagram's length with its IP header (64, 1500, and 65535: IPv4's 16-bit total length
 * makes 65535 the largest datagram, the "64 KiB" case). Each operation refills a fresh pooled packet from a template
 * (headers written, hop count 64 again, payload not written: {@link Frames#refill}). With {@code shared=true} the
 * benchmark also keeps a {@code cloneShared()} of the packet while it is forwarded, as TCP's retransmit queue does,
 * and releases it afterwards. {@link PacketRefillBench} measures the refill (and clone) alone, to subtract.
 */
@State(Scope.Thread)
public abstract class RouterForwardBench extends UsnetBench {
    static final long MAC_H1 = 0x02_00_00_00_aa_01L;
    static final long MAC_H2 = 0x02_00_00_00_bb_02L;
    static final long MAC_R1 = 0x02_00_00_00_01_01L;
    static final long MAC_R2 = 0x02_00_00_00_01_02L;
    /** The TTL or hop limit the refill writes. */
    static final int HOPS = 64;

    @Param({"64", "1500", "65535"})
    int ipLen;

    @Param({"false", "true"})
    boolean shared;

    @Param({"head-copy", "full-copy", "always-copy", "skip-ttl"})
    String cow;

    NetStack router;
    SinkDevice in;
    SinkDevice out;
    private Frames.Template template;
    private int frameLen;
    private long invocations;
    /** Frames the ports sent while the router was set up (IPv6's MLD reports at link up), before any benchmark packet. */
    private long inBaseline;
    private long outBaseline;

    /** The router's name; its family's forwarding (and address) knobs are set here, before its ports come up. */
    abstract String routerName();

    abstract void enableForwarding(NetStack router);

    /** r1 and r2 get their addresses and the static neighbour entries of the two hosts. */
    abstract void addressesAndNeighbours(NetStack router, SinkDevice r1, SinkDevice r2);

    /** Ethernet, IP and UDP headers of a datagram of {@code ipLen} bytes from the host behind r1 to the one behind r2. */
    abstract Frames.Template headers(int ipLen);

    /** The MIB counter of forwarded datagrams. */
    abstract Mib forwardedCounter();

    /** Where the TTL or hop limit is within the IP header. */
    abstract int hopsOffset();

    /** The TTL or hop limit of the last frame {@code sink} inspected; the family's own header checks. */
    abstract int hopsAtSink(SinkDevice sink);

    @Setup(Level.Trial)
    public void setup() {
        // Clock at 1 s: receive stamps are non-zero, so transmit records per-path latency as in a running
        // emulator. Virtual time never advances, so no timer (neighbour, FDB, frag, ND, MLD, DAD) ever runs.
        VirtualScheduler sched = new VirtualScheduler(1_000_000_000L);
        router = new NetStack(routerName(), sched, 1);
        enableForwarding(router);
        router.knobs().set("usnet.forward.cow", cow);
        in = new SinkDevice("r1", MAC_R1);
        out = new SinkDevice("r2", MAC_R2);
        router.register(in);
        router.register(out);
        for (SinkDevice d : new SinkDevice[] {in, out}) {
            d.setMtu(65535);
            d.setUp(true);
        }
        addressesAndNeighbours(router, in, out);
        inBaseline = in.frames;
        outBaseline = out.frames;
        frameLen = EthernetFrame.HEADER_LEN + ipLen;
        template = headers(ipLen);
        verify();
    }

    /**
     * One packet through the measured path, inspected at the sink: forwarded out of r2 with the neighbour's MAC,
     * hop count 63 (64 when skip-ttl leaves a shared packet alone), the COW policy visibly applied, and every buffer
     * freed afterwards.
     */
    private void verify() {
        CowPolicy policy = CowPolicy.parse(cow);
        check(router.knobs().get(CowSysctl.FORWARD_COW) == policy, "usnet.forward.cow not applied");
        long copiesBefore = router.cow().copies();
        long skippedBefore = router.cow().ttlSkipped();
        long fwdBefore = router.mib().get(forwardedCounter());

        Packet p = Frames.refill(template, frameLen);
        ByteBuf data = p.buf();
        Packet keep = shared ? p.cloneShared() : null;
        out.inspect = true;
        in.receive(p);
        out.inspect = false;
        if (keep != null) {
            check(keep.buf().getUnsignedByte(keep.start() + EthernetFrame.HEADER_LEN + hopsOffset()) == HOPS,
                    "forwarding edited bytes shared with another holder");
            keep.release();
        }
        invocations++;

        check(out.frames - outBaseline == invocations, "the packet did not come out of r2");
        check(in.frames == inBaseline, "something was sent back out of the ingress port (ICMP error or redirect)");
        check(router.drops().total() == 0, "drops on the forwarding path: " + router.drops().snapshot());
        check(router.mib().get(forwardedCounter()) == fwdBefore + 1, forwardedCounter() + " not counted");
        check(out.lastLength == frameLen, "frame length changed: " + out.lastLength + " != " + frameLen);
        check(out.lastDst == MAC_H2 && out.lastSrc == MAC_R2,
                "egress MACs wrong: " + Frames.mac(out.lastDst) + " " + Frames.mac(out.lastSrc));
        boolean skips = shared && policy == CowPolicy.SKIP_TTL;
        int hops = hopsAtSink(out);
        check(hops == (skips ? HOPS : HOPS - 1), "TTL or hop limit at the sink is " + hops);
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
