package dev.usnet.perf;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.PacketTap;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.ArpPacket;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tap.BusyPollSelectStrategy;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.local.LocalIoHandler;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * One broadcast flood through a bridge of {@code ports} idle containers: a who-has from a sender port enters the
 * host namespace's receive backlog ({@code netifRx}, as its veth delivers it), br0 floods it to every other port,
 * each copy crosses its veth into its container's backlog, and each container runs ARP on it (a request for an
 * address nobody has: looked at and consumed). One operation ends when every container has received its copy and
 * every event loop has run what that left queued. The namespaces sit on {@code loops} event loops, round-robin,
 * as {@code usnet run} places them (or on one virtual-time scheduler with {@code clock=virtual}).
 *
 * <p>{@link #flood}: the steady state (rings and latency paths exist, the JIT is warm). {@link #firstFlood}: the
 * first broadcast into a freshly built topology, one per iteration, as the first ARP of a run meets it.
 * {@code allocBytesPerPort} is what every thread (the loops and this one) allocated per operation, divided by the
 * ports.
 */
@State(Scope.Benchmark)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BridgeFloodBench extends UsnetBench {
    @Param({"10000"})
    int ports;

    /** Event loops carrying the namespaces ({@code usnet run}'s default is min(namespaces, 4)). */
    @Param({"4"})
    int loops;

    @Param({"real"})
    String clock;

    private static final int SENDER_IP = Ipv4Addr.parse("198.18.0.2");
    /** Nobody's address: every container hears the request and answers nothing. */
    private static final int TARGET_IP = Ipv4Addr.parse("198.19.255.254");
    private static final long SENDER_MAC = 0x02_00_00_00_0a_02L;

    private IoEventLoopGroup group;
    private List<EventExecutor> executors;
    private VirtualScheduler virtual;
    private NamespaceRegistry reg;
    private NetStack host;
    private Device senderPort;
    private final LongAdder received = new LongAdder();
    private long expected;
    private long[] threadIds;
    private boolean fresh;

    /** Per-operation figures JMH reports beside the time. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Alloc {
        /** Bytes every thread allocated per operation, divided by the ports (running mean over the iteration). */
        public double allocBytesPerPort;
        long bytes;
        long ops;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
            ops = 0;
            allocBytesPerPort = 0;
        }
    }

    @Setup(Level.Trial)
    public void setupTrial(BenchmarkParams params) throws Exception {
        fresh = params.getBenchmark().endsWith(".firstFlood");
        if (clock.equals("real")) {
            group = new MultiThreadIoEventLoopGroup(loops, Epoll.isAvailable()
                    ? EpollIoHandler.newFactory(0, BusyPollSelectStrategy.factory(BusyPollSelectStrategy.DEFAULT_MICROS))
                    : LocalIoHandler.newFactory());
            executors = new ArrayList<>();
            group.forEach(executors::add);
            threadIds = new long[executors.size() + 1];
            for (int i = 0; i < executors.size(); i++) {
                threadIds[i] = LoopThreads.threadId(executors.get(i));
            }
        } else if (clock.equals("virtual")) {
            threadIds = new long[1];
        } else {
            throw new IllegalArgumentException("clock must be real or virtual, got " + clock);
        }
        if (!fresh) {
            build();
            flood(new Alloc());
            check(received.sum() == expected, "the first flood reached " + received.sum() + " of " + expected);
        }
    }

    @Setup(Level.Iteration)
    public void setupIteration() throws Exception {
        if (fresh) {
            build();
        }
    }

    @TearDown(Level.Iteration)
    public void tearDownIteration() throws Exception {
        check(received.sum() % ports == 0, "a flood reached " + received.sum() % ports + " of " + ports + " ports");
        long dropped = 0;
        for (NetNamespace ns : reg.list()) {
            dropped += ns.stack().drops().total();
        }
        check(dropped == 0, dropped + " drops");
        if (fresh) {
            delete();
        }
    }

    @TearDown(Level.Trial)
    public void tearDownTrial() throws Exception {
        if (!fresh) {
            delete();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** host: br0 (198.18.0.1/15) with the sender's port and one port per container c&lt;i&gt; (198.18.1.0 + i). */
    private void build() {
        received.reset();
        expected = 0;
        if (group == null) {
            virtual = new VirtualScheduler(1_000_000_000L);
        }
        // One scheduler per loop, namespaces round-robin over the loops: as usnet run places them.
        List<RealTimeScheduler> perLoop = group == null ? List.of()
                : executors.stream().map(RealTimeScheduler::new).toList();
        int[] next = {0};
        reg = new NamespaceRegistry(name -> group == null ? virtual : perLoop.get(next[0]++ % perLoop.size()), 1);
        NetNamespace h = reg.create("host");
        host = h.stack();
        Bridge br = new Bridge("br0", NamespaceRegistry.macFor("host/br0"));
        host.register(br);
        host.devinet().add(br, Ipv4Addr.parse("198.18.0.1"), 15);
        br.setUp(true);
        NetNamespace sender = reg.create("sender");
        VethEnd[] sp = reg.createVeth(sender, "eth0", h, "hs");
        sp[0].setUp(true);
        br.addPort(sp[1]);
        sp[1].setUp(true);
        senderPort = sp[1];
        int net = Ipv4Addr.parse("198.18.0.0");
        PacketTap count = (dev, p, transmit, t) -> received.increment();
        for (int i = 0; i < ports; i++) {
            NetNamespace c = reg.create("c" + i);
            VethEnd[] pair = reg.createVeth(c, "eth0", h, "h" + i);
            c.stack().devinet().add(pair[0], net + 256 + i, 15);
            pair[0].setUp(true);
            pair[0].addTap(count);
            br.addPort(pair[1]);
            pair[1].setUp(true);
        }
    }

    private void delete() {
        List<String> names = reg.list().stream().map(NetNamespace::name).toList();
        for (String n : names) {
            reg.delete(n);
        }
        reg.close();
    }

    @Benchmark
    public void flood(Alloc alloc) throws Exception {
        long a0 = allocated();
        host.netifRx(senderPort, request());
        expected += ports;
        if (virtual != null) {
            virtual.runUntil(virtual.nanoTime());
        } else {
            while (received.sum() < expected) {
                Thread.onSpinWait();
            }
            // What the last copies left queued (ARP on them) runs before the next operation.
            for (EventExecutor e : executors) {
                e.submit(() -> { }).sync();
            }
        }
        alloc.bytes += allocated() - a0;
        alloc.ops++;
        alloc.allocBytesPerPort = (double) alloc.bytes / alloc.ops / ports;
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    public void firstFlood(Alloc alloc) throws Exception {
        flood(alloc);
    }

    private long allocated() {
        threadIds[threadIds.length - 1] = Thread.currentThread().threadId();
        return LoopThreads.allocatedBytes(threadIds);
    }

    /** A broadcast who-has for {@link #TARGET_IP} from the sender. */
    private static Packet request() {
        Packet p = Packet.allocate(Buffers.HEADROOM, EthernetFrame.HEADER_LEN + ArpPacket.LEN);
        var b = p.buf();
        int s = p.start();
        b.writerIndex(s + EthernetFrame.HEADER_LEN + ArpPacket.LEN);
        EthernetFrame.write(b, s, MacAddr.BROADCAST, SENDER_MAC, EthernetFrame.ETH_P_ARP);
        ArpPacket.write(b, s + EthernetFrame.HEADER_LEN, ArpPacket.OP_REQUEST, SENDER_MAC, SENDER_IP, 0, TARGET_IP);
        return p;
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark path broken: " + what);
        }
    }
}
