package dev.usnet.perf;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One TCP data segment end to end between two namespaces, in the steady state of a bulk transfer: the sender's
 * {@code write} (copy into the send buffer, {@code tcp_write_xmit}, header, checksum, clone for the retransmit
 * queue) → IP output → veth → the peer's receive backlog → IP input → {@code tcp_v4_rcv} → receive queue → the
 * application's {@code skip} (or {@code read}, a copy) → window update / ACK → back over the veth → the sender's
 * {@code tcp_ack} (clean the retransmit queue, RTT, cwnd) and the packets back to the pool.
 *
 * <p>Both namespaces run on one {@link VirtualScheduler}; the connection (CUBIC, timestamps, SACK, wscale, MSS
 * 1448) is set up in {@code @Setup}. One op writes {@code segment} bytes and runs the scheduler until everything
 * due has run, then moves the clock 10 µs on (a 1448-byte segment every 10 µs is 1.2 Gbit/s). {@code segment}
 * 1448 = one MSS on a veth without GSO; the receiver ACKs every second full segment as Linux does, so one op in
 * two also carries an ACK back. {@code segment} 65160 = 45 MSS, one GSO super-segment on a veth with GSO
 * offload; every op gets its ACK. Both veths have tx checksum offload (CHECKSUM_PARTIAL, as a Linux veth).
 *
 * <p>The point is {@code gc.alloc.rate.norm} (run with {@code -prof gc}): the per-segment path should allocate
 * nothing. The trial setup and every iteration check that each op really sent exactly one data segment, that
 * everything written was received and acknowledged, and that nothing was retransmitted or dropped.
 */
@State(Scope.Thread)
public class TcpSegmentBench extends UsnetBench {
    static final int ADDR_A = Ipv4Addr.parse("198.18.70.1");
    static final int ADDR_B = Ipv4Addr.parse("198.18.70.2");
    static final int PORT = 5201;
    static final long STEP_NANOS = 10_000;

    @Param({"1448", "65160"})
    int segment;

    /** skip: the receiver discards without copying; read: it copies into a preallocated buffer. */
    @Param({"skip", "read"})
    String sink;

    private VirtualScheduler sched;
    private NetStack a;
    private NetStack b;
    private VethEnd vethA;
    private Tcp tcpA;
    private Tcp tcpB;
    private TcpSock client;
    /** The receiving application: takes everything queued on every readable callback. */
    private DrainSink receiver;
    private ByteBuf src;
    private ByteBuf readBuf;
    private long written;
    private long ops;
    private long iterStartFrames;

    /** The sending application writes only from the benchmark method; it just records the handshake. */
    static final class Sender implements TcpSock.Callbacks {
        boolean connected;
        TcpError closed;

        @Override
        public void connected(TcpSock s) {
            connected = true;
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closed = error;
        }
    }

    @Setup(Level.Trial)
    public void setup() {
        sched = new VirtualScheduler(1_000_000_000L);
        a = new NetStack("bench-a", sched, 1);
        b = new NetStack("bench-b", sched, 2);
        VethEnd[] v = VethEnd.createPair(a, "veth0", 0x02_00_5e_00_46_01L, b, "veth0", 0x02_00_5e_00_46_02L);
        boolean gso = segment > 1448;
        for (VethEnd e : v) {
            e.setGsoOffload(gso);
            e.setTxChecksumOffload(true);
            e.setUp(true);
        }
        vethA = v[0];
        a.devinet().add(v[0], ADDR_A, 24);
        b.devinet().add(v[1], ADDR_B, 24);
        tcpA = Tcp.install(a);
        tcpB = Tcp.install(b);
        readBuf = sink.equals("read") ? PooledByteBufAllocator.DEFAULT.directBuffer(128 * 1024, 128 * 1024) : null;
        receiver = new DrainSink(readBuf);
        tcpB.listen(0, PORT, 16, child -> {
            receiver.sock = child;
            child.setCallbacks(receiver);
        });
        Sender snd = new Sender();
        client = tcpA.connect(ADDR_B, PORT, snd);
        for (int i = 0; i < 1000 && !snd.connected; i++) {
            sched.runFor(1_000_000);
        }
        check(snd.connected && client.state() == TcpState.ESTABLISHED, "connection not established: " + client + " " + snd.closed);
        src = PooledByteBufAllocator.DEFAULT.directBuffer(segment, segment);
        for (int i = 0; i < segment; i++) {
            src.writeByte(i * 31 + 7);
        }
        // Warm the connection up: slow start has to open cwnd past one super-segment before a write of 45 MSS
        // leaves as one segment. Then each write must be exactly one data segment, received and ACKed.
        for (int i = 0; i < 10_000; i++) {
            op();
        }
        long frames = tcpFrames();
        for (int i = 0; i < 100; i++) {
            op();
        }
        TcpInfo after = client.info();
        check(after.sndMss() == 1448, "MSS " + after.sndMss());
        check(tcpFrames() - frames == 100, "100 writes of " + segment + " B left as " + (tcpFrames() - frames)
                + " frames: " + after.format());
        checkDelivered("setup");
    }

    @Benchmark
    public int op() {
        int n = client.write(src, 0, segment);
        sched.runUntil(sched.nanoTime() + STEP_NANOS);
        written += n;
        ops++;
        return n;
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        iterStartFrames = tcpFrames();
        ops = 0;
    }

    @TearDown(Level.Iteration)
    public void checkIteration() {
        long frames = tcpFrames() - iterStartFrames;
        check(frames == ops, ops + " writes left as " + frames + " frames");
        checkDelivered("iteration");
    }

    /**
     * Frames the sender's veth transmitted, less its ARP frames (the neighbour entry goes STALE and is probed
     * again every few virtual seconds, as in Linux): its data segments, since the sender sends no pure ACKs here.
     */
    private long tcpFrames() {
        return vethA.stats().txPackets - a.mib().get(Mib.ArpOutRequests) - a.mib().get(Mib.ArpOutReplies);
    }

    private void checkDelivered(String when) {
        TcpInfo i = client.info();
        check(written == (long) segment * (written / segment), "short write");
        check(receiver.bytes == written, when + ": wrote " + written + " B, received " + receiver.bytes);
        check(i.bytesAcked() >= written - segment, when + ": wrote " + written + " B, acked " + i.bytesAcked());
        check(i.totalRetrans() == 0, when + ": retransmitted: " + i.format());
        check(a.drops().total() == 0 && b.drops().total() == 0, when + ": drops " + a.drops().snapshot() + " / "
                + b.drops().snapshot());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.abort();
        sched.runFor(1_000_000);
        a.close();
        b.close();
        sched.runFor(1);
        src.release();
        if (readBuf != null) {
            readBuf.release();
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("TcpSegmentBench: " + what);
        }
    }
}
