package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.LinkEmulation;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.tcp.TcpPair.BulkSender;
import dev.usnet.tcp.TcpPair.HashingSink;
import org.junit.jupiter.api.Test;

/**
 * TCP small queues (usnet.tcp.tsq): a bulk flow out of an emulated 1 Gbit/s NIC keeps at most
 * tcp_limit_output_bytes (+ one segment) in the NIC's queue with TSQ on, and fills it far beyond with TSQ off; a
 * sender behind a veth without emulation (the netns picture: veth → bridge → NIC) is orphaned at the veth, so TSQ
 * never holds it back and the host's NIC queue fills as without TSQ. All bytes arrive and every charge comes back.
 */
class TcpSmallQueuesTest {
    private static final int LIMIT = 131_072;
    private static final int SEGMENT = 1514;
    private static final int BYTES = 2 << 20;
    private static final NetemParams NIC = NetemParams.NONE.withRate(1_000_000_000L).withLimit(10_000);
    private static final NetemParams ACK_DELAY = NetemParams.NONE.withDelay(500_000L);

    /** What one run saw: the NIC queue's highest backlog, the sender's throttles, its charge at the end. */
    private record Run(long maxBacklog, long maxCharged, long throttles, long queuedAtEnd, boolean chargeMatchedQueue) {}

    /** Bulk transfer from {@code from} to 198.18.0.2, sampling the backlog of {@code nic}'s emulation after every event. */
    private static Run transfer(TestNet net, NetStack from, NetStack to, VethEnd nic, boolean sameNamespace) {
        Tcp ta = Tcp.install(from);
        Tcp tb = Tcp.install(to);
        byte[] data = TcpPair.randomBytes(BYTES, 7);
        HashingSink sink = new HashingSink();
        tb.listen(0, 5001, 16, c -> c.setCallbacks(sink));
        TcpSock c = ta.connect(TcpPair.SERVER, 5001, new BulkSender(data, 64 * 1024));
        long max = 0;
        long maxCharged = 0;
        boolean matched = true;
        long deadline = net.sched.nanoTime() + 60_000_000_000L;
        while (!sink.eof && net.sched.nanoTime() < deadline) {
            long next = net.sched.nextEventTime();
            if (next < 0) {
                break;
            }
            net.sched.runUntil(next);
            // The emulation exists from the first frame on.
            LinkEmulation ne = nic.netem();
            long backlog = ne == null ? 0 : ne.stats().backlogBytes();
            max = Math.max(max, backlog);
            if (sameNamespace && c.state() == TcpState.ESTABLISHED && c.tsq.queuedBelow() > backlog) {
                // Once the SYN has left the neighbour's ARP queue (where it is charged too, as in Linux), what TCP
                // counts below it is its share of what the NIC holds (the rest: ARP, pure ACKs).
                matched = false;
            }
            maxCharged = Math.max(maxCharged, c.tsq.queuedBelow());
        }
        assertTrue(sink.eof, "the transfer finished");
        assertEquals(TcpPair.sha256(data), sink.hash(), "every byte arrived, in order");
        net.run(1_000_000_000L);
        System.out.println("TcpSmallQueuesTest: NIC backlog max " + max + " B, charged max " + maxCharged + " B, throttles " + c.tsq.throttles());
        assertEquals(c.tsq.throttles(), from.mib().get(Mib.UsnetTCPTSQThrottled), "the namespace counts every throttle");
        Run r = new Run(max, maxCharged, c.tsq.throttles(), c.tsq.queuedBelow(), matched);
        ta.close();
        tb.close();
        return r;
    }

    /**
     * Buffers at tcp_wmem/tcp_rmem max from the start and Reno (no HyStart leaving slow start on the queue's
     * delay), so cwnd grows with every ACK and alone decides how much a sender may queue.
     */
    private static void windowsFromTheStart(NetStack... stacks) {
        for (NetStack s : stacks) {
            s.knobs().set("usnet.tcp.buffers", "max");
            s.knobs().set("net.ipv4.tcp_congestion_control", "reno");
        }
    }

    private static Run throughEmulatedNic(String tsq) {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            a.knobs().set("usnet.tcp.tsq", tsq);
            windowsFromTheStart(a, b);
            VethEnd[] v = net.link(a, "eth0", "198.18.0.1/24", b, "eth0", "198.18.0.2/24");
            v[0].setNetem(NIC);
            v[1].setNetem(ACK_DELAY);
            return transfer(net, a, b, v[0], true);
        }
    }

    @Test
    void tsqOnKeepsTheNicQueueAtTheLimit() {
        Run r = throughEmulatedNic("on");
        assertTrue(r.maxBacklog() <= LIMIT + SEGMENT, "NIC backlog " + r.maxBacklog() + " <= limit + 1 segment");
        assertTrue(r.maxBacklog() > LIMIT / 2, "the limit, not the window, bounded it: " + r.maxBacklog());
        assertTrue(r.throttles() > 0, "tcp_write_xmit stopped on the limit");
        assertTrue(r.chargeMatchedQueue(), "the socket's charge below TCP never exceeded the NIC's backlog");
        assertTrue(r.maxCharged() > LIMIT / 2 && r.maxCharged() <= LIMIT + SEGMENT, "charged " + r.maxCharged());
        assertEquals(0, r.queuedAtEnd(), "every charge came back");
    }

    @Test
    void tsqOffFillsTheNicQueueWithTheWindow() {
        Run r = throughEmulatedNic("off");
        assertTrue(r.maxBacklog() > 3L * LIMIT, "NIC backlog " + r.maxBacklog() + " grows with cwnd");
        assertEquals(0, r.throttles());
    }

    @Test
    void aVethOrphansSoTheBridgedNicQueueIsNotLimited() {
        try (TestNet net = new TestNet()) {
            NetStack ranks = net.ns("ranks");
            NetStack host = net.ns("host");
            NetStack peer = net.ns("peer");
            ranks.knobs().set("usnet.tcp.tsq", "on");
            windowsFromTheStart(ranks, peer);
            host.knobs().set("usnet.tcp.tsq", "on");
            VethEnd[] inner = net.link(ranks, "eth0", "198.18.0.1/24", host, "rv0", null);
            VethEnd[] nic = net.link(host, "eth0", null, peer, "eth0", "198.18.0.2/24");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            host.register(br);
            br.setUp(true);
            br.addPort(inner[1]);
            br.addPort(nic[0]);
            nic[0].setNetem(NIC);
            nic[1].setNetem(ACK_DELAY);
            Run r = transfer(net, ranks, peer, nic[0], false);
            assertTrue(r.maxBacklog() > 3L * LIMIT, "host NIC backlog " + r.maxBacklog() + " beyond TSQ's limit");
            assertEquals(0, r.throttles(), "never throttled: charges end at the veth");
            assertEquals(0, r.queuedAtEnd());
        }
    }
}
