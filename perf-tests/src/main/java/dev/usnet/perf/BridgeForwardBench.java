package dev.usnet.perf;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.EthernetFrame;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * Per-frame cost of the learning bridge forwarding a known unicast frame from one port to another:
 * {@code Device.receive} on port p1 → {@code Bridge.handleFrame} (source learning refresh, FDB lookup) →
 * {@code Device.transmit} on port p2 → a sink driver that frees the frame. {@link #deliverToBridge}: the frame is
 * for the bridge's own MAC instead: {@code Bridge.handleFrame} → local delivery (the {@code p1->br0} path
 * recorded) → {@code Device.receive} on br0 → {@code l2Receive}, which drops its unhandled EtherType, the
 * cheapest end of a local delivery. Each operation also refills a fresh pooled packet (14 header bytes written,
 * see {@link Frames#refill}); {@link PacketRefillBench} measures that alone.
 */
@State(Scope.Thread)
public class BridgeForwardBench extends UsnetBench {
    static final long MAC_A = 0x02_00_00_00_0a_01L;
    static final long MAC_B = 0x02_00_00_00_0b_02L;

    /** Ethernet frame length (header included, no FCS). */
    @Param({"64", "1500"})
    int frameSize;

    /**
     * True: the frame enters through the namespace's receive backlog ({@code netifRx}, one backlog run per
     * frame, timed into its {@code CpuAccount}) as a veth crossing does, instead of straight into the device.
     */
    @Param({"false"})
    boolean viaBacklog;

    /** The trial runs {@link #deliverToBridge}: frames for br0 itself, not for the host behind p2. */
    private boolean local;

    /** IEEE 802 local experimental EtherType: nothing in the stack handles it. */
    static final int ETH_P_LOCAL_EXPERIMENTAL = 0x88b5;

    /** usnet.cpu.model for the namespace (with viaBacklog: each run charges its modelled cost). */
    @Param({"0"})
    int cpuModel;

    /**
     * Idle ports on br0 besides p1 and p2 (each with its MAC as a local FDB entry, as a container's veth end is):
     * whether a bridge with 10 000 idle neighbours forwards the busy pair's frames more slowly.
     */
    @Param({"0"})
    int idlePorts;

    private VirtualScheduler sched;
    private NetStack ns;
    private Bridge br;
    private SinkDevice p1;
    private SinkDevice p2;
    private Frames.Template template;
    private long invocations;

    @Setup(Level.Trial)
    public void setup(BenchmarkParams params) {
        local = params.getBenchmark().endsWith(".deliverToBridge");
        // The clock starts at 1 s, as a running emulator's would be past its start; virtual time never advances
        // here, so FDB entries never age out. Every forwarded frame records its path's latency.
        sched = new VirtualScheduler(1_000_000_000L);
        ns = new NetStack("bench-br", sched, 1);
        ns.knobs().set("usnet.cpu.model", Integer.toString(cpuModel));
        br = new Bridge("br0", 0x02_00_00_00_00_feL);
        ns.register(br);
        p1 = new SinkDevice("p1", 0x02_00_00_00_01_01L);
        p2 = new SinkDevice("p2", 0x02_00_00_00_01_02L);
        ns.register(p1);
        ns.register(p2);
        p1.setUp(true);
        p2.setUp(true);
        br.addPort(p1);
        br.addPort(p2);
        for (int i = 0; i < idlePorts; i++) {
            SinkDevice idle = new SinkDevice("i" + i, 0x02_00_00_10_00_00L + i);
            ns.register(idle);
            idle.setUp(true);
            br.addPort(idle);
        }
        br.setUp(true);

        // Teach the bridge that B lives behind p2 (B sends to A, which floods: A is unknown yet).
        p2.receive(Frames.refill(Frames.ethernetHeader(MAC_A, MAC_B, EthernetFrame.ETH_P_IP), frameSize));
        check(p1.frames == 1, "the learning frame from B was not flooded to p1");

        template = local ? Frames.ethernetHeader(br.mac(), MAC_A, ETH_P_LOCAL_EXPERIMENTAL)
                : Frames.ethernetHeader(MAC_B, MAC_A, EthernetFrame.ETH_P_IP);
        if (local) {
            verifyLocal();
        } else {
            verify();
        }
    }

    /** One frame through the measured path, inspected at the sink: it must reach p2, unchanged, and be freed. */
    private void verify() {
        long p1Before = p1.frames;
        long p2Before = p2.frames;
        p2.inspect = true;
        forward();
        p2.inspect = false;
        check(p2.frames == p2Before + 1, "known unicast A->B did not reach p2");
        check(p1.frames == p1Before, "known unicast A->B was flooded back to p1");
        check(p2.lastLength == frameSize, "frame length changed: " + p2.lastLength);
        check(p2.lastDst == MAC_B && p2.lastSrc == MAC_A,
                "MACs changed: " + Frames.mac(p2.lastDst) + " " + Frames.mac(p2.lastSrc));
        check(p2.lastRefCntAfterRelease == 0, "the frame's buffer is still referenced after the sink freed it");
        check(ns.drops().total() == 0, "drops on the bridge path: " + ns.drops().snapshot());
    }

    /** One frame for br0: received by it, dropped there as an unhandled EtherType, recorded as p1->br0. */
    private void verifyLocal() {
        long rx = br.stats().rxPackets;
        forward();
        check(br.stats().rxPackets == rx + 1, "the frame to br0's MAC did not reach br0");
        check(p1.frames == 1 && p2.frames == 0, "the frame to br0's MAC went out of a port");
        checkLocalIteration();
    }

    private void checkLocalIteration() {
        long unhandled = ns.drops().get(dev.usnet.core.stats.DropReason.UNHANDLED_PROTO);
        check(unhandled == invocations && ns.drops().total() == unhandled, "drops on the local path: " + ns.drops().snapshot());
        long recorded = ns.latency().all().stream().filter(p -> p.name().equals("p1->br0"))
                .mapToLong(dev.usnet.core.stats.LatencyPaths.Path::packets).sum();
        check(recorded == invocations, "path p1->br0 recorded " + recorded + " of " + invocations + " frames");
    }

    @Benchmark
    public void forwardKnownUnicast() {
        forward();
    }

    @Benchmark
    public void deliverToBridge() {
        forward();
    }

    private void forward() {
        Packet p = Frames.refill(template, frameSize);
        if (viaBacklog) {
            ns.netifRx(p1, p);
            // With the model on the run waits for the previous one's busy time: jump the clock to it.
            sched.runUntil(Math.max(sched.nanoTime(), sched.nextEventTime()));
        } else {
            p1.receive(p);
        }
        invocations++;
    }

    /** Every frame sent in during the iteration must have come out of p2, none dropped or flooded. */
    @TearDown(Level.Iteration)
    public void checkIteration() {
        if (local) {
            check(p1.frames == 1 && p2.frames == 0, "frames to br0 went out of a port");
            checkLocalIteration();
            return;
        }
        check(p2.frames == invocations, "p2 got " + p2.frames + " frames for " + invocations + " sent");
        check(p1.frames == 1, "frames were flooded back to p1");
        check(ns.drops().total() == 0, "drops on the bridge path: " + ns.drops().snapshot());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        ns.close();
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark path broken: " + what);
        }
    }
}
