package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One ping answered, whatever the family: a host with one port eth0 (a sink driver that frees what it is given) and
 * a static neighbour entry for its peer, an echo request refilled into a fresh pooled packet and received on eth0,
 * the reply inspected at the sink. {@link IcmpEchoBench} and {@link Icmpv6EchoBench} give the family's address,
 * request frame and counters. The path reads its knobs by declaration, so with {@code -prof gc} it shows what the
 * whole round allocates per request.
 */
@State(Scope.Thread)
public abstract class EchoBench extends UsnetBench {
    static final long MAC_HOST = 0x02_00_00_00_aa_01L;
    static final long MAC_PEER = 0x02_00_00_00_bb_02L;

    NetStack host;
    SinkDevice eth0;
    private Frames.Template request;
    private int frameLen;
    private long invocations;
    /** Frames eth0 sent while the host was set up (IPv6's MLD reports at link up), before any request. */
    private long baseline;

    abstract String hostName();

    /** The family's knobs, set before eth0 comes up. */
    abstract void configure(NetStack host);

    /** eth0's address and the peer's static neighbour entry. */
    abstract void addressAndNeighbour(NetStack host, SinkDevice eth0);

    /** The whole frame of an echo request from the peer to the host, checksums valid. */
    abstract Frames.Template echoRequest();

    /** The request's frame length. */
    abstract int frameLength();

    abstract Mib echosIn();

    abstract Mib repliesOut();

    /** The family's checks of the reply the sink inspected (hop count, header). */
    abstract void checkReplyHeader(SinkDevice sink);

    @Setup(Level.Trial)
    public void setup() {
        // Virtual time never advances: no timer (neighbour, ND, MLD, DAD, peer limits) runs during the measurement.
        host = new NetStack(hostName(), new VirtualScheduler(1_000_000_000L), 1);
        configure(host);
        eth0 = new SinkDevice("eth0", MAC_HOST);
        host.register(eth0);
        eth0.setUp(true);
        addressAndNeighbour(host, eth0);
        baseline = eth0.frames;
        request = echoRequest();
        frameLen = frameLength();
        verify();
    }

    /** One request through the measured path, its reply inspected at the sink. */
    private void verify() {
        long echosBefore = host.mib().get(echosIn());
        long repliesBefore = host.mib().get(repliesOut());
        eth0.inspect = true;
        eth0.receive(Frames.refill(request, frameLen));
        eth0.inspect = false;
        invocations++;
        check(host.mib().get(echosIn()) == echosBefore + 1, "the echo request was not received");
        check(host.mib().get(repliesOut()) == repliesBefore + 1, "no echo reply was sent");
        check(eth0.frames - baseline == invocations, "the reply did not come out of eth0");
        check(host.drops().total() == 0, "drops on the echo path: " + host.drops().snapshot());
        check(eth0.lastLength == frameLen, "reply length " + eth0.lastLength + " != request length " + frameLen);
        check(eth0.lastDst == MAC_PEER && eth0.lastSrc == MAC_HOST,
                "reply MACs wrong: " + Frames.mac(eth0.lastDst) + " " + Frames.mac(eth0.lastSrc));
        checkReplyHeader(eth0);
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
