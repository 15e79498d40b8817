package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Per-packet IPv4 forwarding through a router namespace (ip_forward=1): {@code Device.receive} on the
 * ingress port → eth demux → {@code IpInput.rcv} (header check, route lookup) → {@code IpForward.forward}
 * (COW per {@code usnet.forward.cow}, TTL decrement) → neighbour output (static entry) →
 * {@code Device.transmit} → a sink driver that frees the packet.
 *
 * <p>{@code ipLen} is the IPv4 total length (64, 1500, and 65535: the 16-bit total-length field makes 65535
 * the largest datagram, so that is the "64 KiB" case). Both ports have MTU 65535 so nothing fragments.
 *
 * <p>Each operation refills a fresh pooled packet from a template (42 header bytes written, TTL 64 again,
 * payload not written: {@link Frames#refill}). With {@code shared=true} the benchmark also keeps a
 * {@code cloneShared()} of the packet while it is forwarded, as TCP's retransmit queue does, and releases it
 * afterwards. {@link PacketRefillBench} measures the refill (and clone) alone, to subtract.
 */
@State(Scope.Thread)
public class Ipv4ForwardBench extends UsnetBench {
    static final long MAC_H1 = 0x02_00_00_00_aa_01L;
    static final long MAC_H2 = 0x02_00_00_00_bb_02L;
    static final long MAC_R1 = 0x02_00_00_00_01_01L;
    static final long MAC_R2 = 0x02_00_00_00_01_02L;
    static final int TTL = 64;

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

    @Setup(Level.Trial)
    public void setup() {
        // Clock at 1 s: receive stamps are non-zero, so transmit records per-path latency as in a running
        // emulator. Virtual time never advances, so no timer (neighbour, FDB, frag) ever runs.
        VirtualScheduler sched = new VirtualScheduler(1_000_000_000L);
        router = new NetStack("bench-router", sched, 1);
        router.knobs().set("net.ipv4.ip_forward", "1");
        router.knobs().set("usnet.forward.cow", cow);
        in = new SinkDevice("r1", MAC_R1);
        out = new SinkDevice("r2", MAC_R2);
        router.register(in);
        router.register(out);
        for (SinkDevice d : new SinkDevice[] {in, out}) {
            d.setMtu(65535);
            d.setUp(true);
        }
        router.devinet().add(in, Ipv4Addr.parse("198.18.1.1"), 24);
        router.devinet().add(out, Ipv4Addr.parse("198.18.2.1"), 24);
        router.neigh().addPermanent(in, Ipv4Addr.parse("198.18.1.2"), MAC_H1);
        router.neigh().addPermanent(out, Ipv4Addr.parse("198.18.2.2"), MAC_H2);

        frameLen = EthernetFrame.HEADER_LEN + ipLen;
        template = Frames.udpHeaders(MAC_R1, MAC_H1, Ipv4Addr.parse("198.18.1.2"), Ipv4Addr.parse("198.18.2.2"), TTL,
                ipLen, true);
        verify();
    }

    /**
     * One packet through the measured path, inspected at the sink: forwarded out of r2 with the neighbour's
     * MAC, TTL 63 (64 when skip-ttl leaves a shared packet alone), a valid header checksum, the COW policy
     * visibly applied, and every buffer freed afterwards.
     */
    private void verify() {
        CowPolicy policy = CowPolicy.parse(cow);
        check(router.knobs().get(CowSysctl.FORWARD_COW) == policy, "usnet.forward.cow not applied");
        long copiesBefore = router.cow().copies();
        long skippedBefore = router.cow().ttlSkipped();
        long fwdBefore = router.mib().get(Mib.IpForwDatagrams);

        Packet p = Frames.refill(template, frameLen);
        ByteBuf data = p.buf();
        Packet keep = shared ? p.cloneShared() : null;
        out.inspect = true;
        in.receive(p);
        out.inspect = false;
        if (keep != null) {
            check(keep.buf().getUnsignedByte(keep.start() + EthernetFrame.HEADER_LEN + 8) == TTL,
                    "forwarding edited bytes shared with another holder");
            keep.release();
        }
        invocations++;

        check(out.frames == invocations, "the packet did not come out of r2");
        check(in.frames == 0, "something was sent back out of the ingress port (ICMP error or redirect)");
        check(router.drops().total() == 0, "drops on the forwarding path: " + router.drops().snapshot());
        check(router.mib().get(Mib.IpForwDatagrams) == fwdBefore + 1, "IpForwDatagrams not counted");
        check(out.lastLength == frameLen, "frame length changed: " + out.lastLength + " != " + frameLen);
        check(out.lastDst == MAC_H2 && out.lastSrc == MAC_R2,
                "egress MACs wrong: " + Frames.mac(out.lastDst) + " " + Frames.mac(out.lastSrc));
        boolean skips = shared && policy == CowPolicy.SKIP_TTL;
        check(out.lastTtl == (skips ? TTL : TTL - 1), "TTL at the sink is " + out.lastTtl);
        check(out.lastIpChecksumOk, "IPv4 header checksum invalid after forwarding");
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
        check(out.frames == invocations, "r2 sent " + out.frames + " packets for " + invocations + " received");
        check(in.frames == 0, "packets were sent back out of the ingress port");
        check(router.drops().total() == 0, "drops on the forwarding path: " + router.drops().snapshot());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        router.close();
    }
}
