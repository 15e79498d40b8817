package dev.usnet.core.neigh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.ArpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.List;
import org.junit.jupiter.api.Test;

class NeighTimersTest {
    static final long R1 = 0x0200_0000_0101L;
    static final long R2 = 0x0200_0000_0102L;
    static final long H1 = 0x0200_0000_aa01L;
    static final long H2 = 0x0200_0000_bb02L;
    static final long SEC = 1_000_000_000L;

    private static final class Router implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack r = net.ns("r");
        final TestNet.Wire w1 = net.wire(r, "r1", R1);
        final TestNet.Wire w2 = net.wire(r, "r2", R2);

        Router() {
            r.knobs().set("net.ipv4.ip_forward", "1");
            TestNet.addr(r, w1.dutEnd, "198.18.1.1/24");
            TestNet.addr(r, w2.dutEnd, "198.18.2.1/24");
            r.neigh().addPermanent(w1.dutEnd, Ipv4Addr.parse("198.18.1.2"), H1);
        }

        void fromH1(String dst, int id) {
            w1.send(Frames.udp(H1, R1, "198.18.1.2", dst, 64, 20, id, false));
        }

        @Override
        public void close() {
            net.close();
        }
    }

    private static boolean isArpRequestFor(byte[] f, String target) {
        return Frames.u16(f, 12) == 0x0806 && Frames.u16(f, 14 + ArpPacket.OP) == ArpPacket.OP_REQUEST
                && Frames.u32(f, 14 + ArpPacket.TPA) == Ipv4Addr.parse(target);
    }

    @Test
    void aBroadcastRequestForSomeoneElseIsConsumedWithoutAnswerOrDrop() {
        try (Router t = new Router()) {
            t.w1.send(Frames.arp(H1, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, H1, "198.18.1.2", 0, "198.18.1.77"));
            t.net.run(SEC);
            assertEquals(0, t.w1.received.size(), "no answer: not ours and proxy_arp is off");
            assertEquals(0, t.w2.received.size());
            assertTrue(t.r.drops().snapshot().values().stream().allMatch(v -> v == 0),
                    "consumed as arp_process does, not counted as a drop: " + t.r.drops().snapshot());
        }
    }

    @Test
    void threeBroadcastSolicitationsOneSecondApartThenHostUnreachable() {
        try (Router t = new Router()) {
            t.fromH1("198.18.2.9", 77);
            t.net.run(5 * SEC);
            List<TestNet.Seen> out = t.w2.received;
            assertEquals(3, out.size());
            for (int i = 0; i < 3; i++) {
                byte[] f = out.get(i).data();
                assertTrue(isArpRequestFor(f, "198.18.2.9"));
                assertEquals(MacAddr.BROADCAST, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 0));
                assertEquals(0L, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 14 + ArpPacket.THA));
                assertEquals(Ipv4Addr.parse("198.18.2.1"), Frames.u32(f, 14 + ArpPacket.SPA));
                assertEquals(i * SEC, out.get(i).at(), "solicitation " + i);
            }
            assertEquals(1, t.w1.received.size());
            byte[] icmp = t.w1.received.get(0).data();
            assertEquals(3 * SEC, t.w1.received.get(0).at());
            assertEquals(1, icmp[14 + 9], "ICMP");
            assertEquals(3, icmp[34], "destination unreachable");
            assertEquals(1, icmp[35], "host unreachable");
            assertEquals(0xc0, icmp[15] & 0xff);
            assertEquals(77, Frames.u16(icmp, 42 + 4), "quotes the queued datagram (its IP id)");
            assertEquals(63, icmp[42 + 8], "as forwarded: TTL already decremented");
            assertEquals(NudState.FAILED, t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse("198.18.2.9")).state());
            assertEquals(1, t.r.drops().get(DropReason.NEIGH_FAILED));
        }
    }

    @Test
    void replyFlushesTheQueueAndTheQueueKeepsTheNewestWithinItsByteLimit() {
        try (Router t = new Router()) {
            int frameLen = 14 + 20 + 8 + 20;
            t.r.knobs().set("net.ipv4.neigh.r2.unres_qlen_bytes", Integer.toString(3 * (frameLen + NeighTable.TRUESIZE_OVERHEAD)));
            for (int i = 0; i < 10; i++) {
                t.fromH1("198.18.2.2", 100 + i);
            }
            t.net.settle();
            assertEquals(1, t.w2.received.size(), "one solicitation so far");
            assertEquals(7, t.r.drops().get(DropReason.NEIGH_QUEUE_FULL));
            t.w2.send(Frames.arp(H2, R2, ArpPacket.OP_REPLY, H2, "198.18.2.2", R2, "198.18.2.1"));
            t.net.settle();
            assertEquals(4, t.w2.received.size());
            for (int i = 1; i < 4; i++) {
                byte[] f = t.w2.received.get(i).data();
                assertEquals(H2, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 0));
                assertEquals(106 + i, Frames.u16(f, 14 + 4), "the oldest were dropped, newest kept in order");
            }
            assertEquals(NudState.REACHABLE, t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse("198.18.2.2")).state());
            t.net.run(2 * SEC);
            assertEquals(4, t.w2.received.size(), "no more solicitations once resolved");
        }
    }

    @Test
    void staleEntryIsReprobedByUnicastAfterDelayFirstProbeTime() {
        try (Router t = new Router()) {
            t.fromH1("198.18.2.2", 1);
            t.net.settle();
            t.w2.send(Frames.arp(H2, R2, ArpPacket.OP_REPLY, H2, "198.18.2.2", R2, "198.18.2.1"));
            t.net.settle();
            Neighbour n = t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse("198.18.2.2"));
            t.net.run(46 * SEC);
            assertEquals(NudState.STALE, n.state(), "reachable_time is at most 1.5 x base_reachable_time (30 s)");
            t.w2.clear();
            long t0 = t.net.sched.nanoTime();
            t.fromH1("198.18.2.2", 2);
            t.net.settle();
            assertEquals(NudState.DELAY, n.state());
            assertEquals(1, t.w2.received.size(), "a stale entry is still used");
            t.net.run(10 * SEC);
            List<TestNet.Seen> out = t.w2.received;
            assertEquals(4, out.size(), "three unicast probes");
            for (int i = 1; i < 4; i++) {
                byte[] f = out.get(i).data();
                assertTrue(isArpRequestFor(f, "198.18.2.2"));
                assertEquals(H2, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 0), "unicast to the known MAC");
                assertEquals(0L, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 14 + ArpPacket.THA),
                        "the ARP body's target hardware address is zero, as arp_solicit leaves it");
                assertEquals(t0 + 5 * SEC + (i - 1) * SEC, out.get(i).at());
            }
            assertEquals(NudState.FAILED, n.state());
        }
    }

    @Test
    void answersArpForItsOwnAddressesAndLearnsTheRequester() {
        try (Router t = new Router()) {
            long h3 = 0x0200_0000_aa03L;
            t.w1.send(Frames.arp(h3, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, h3, "198.18.1.3", 0, "198.18.2.1"));
            t.net.settle();
            assertEquals(1, t.w1.received.size(), "any local address is answered on any interface (arp_ignore=0)");
            byte[] f = t.w1.received.get(0).data();
            assertEquals(ArpPacket.OP_REPLY, Frames.u16(f, 14 + ArpPacket.OP));
            assertEquals(h3, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 0));
            assertEquals(Ipv4Addr.parse("198.18.2.1"), Frames.u32(f, 14 + ArpPacket.SPA));
            assertEquals(NudState.STALE, t.r.neigh().lookup(t.w1.dutEnd, Ipv4Addr.parse("198.18.1.3")).state());
            t.r.knobs().set("net.ipv4.conf.r1.arp_ignore", "1");
            t.w1.send(Frames.arp(h3, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, h3, "198.18.1.3", 0, "198.18.2.1"));
            t.net.settle();
            assertEquals(1, t.w1.received.size(), "arp_ignore=1 answers only for the receiving interface");
        }
    }

    @Test
    void proxyArpAnswersOnlyWhenTheRouteLeavesByAnotherInterface() {
        try (Router t = new Router()) {
            t.r.knobs().set("net.ipv4.conf.r1.proxy_arp", "1");
            t.r.knobs().set("net.ipv4.neigh.r1.proxy_delay", "0");
            t.w1.send(Frames.arp(H1, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, H1, "198.18.1.2", 0, "198.18.2.7"));
            t.w1.send(Frames.arp(H1, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, H1, "198.18.1.2", 0, "198.18.1.7"));
            t.w1.send(Frames.arp(H1, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, H1, "198.18.1.2", 0, "203.0.113.1"));
            t.net.settle();
            assertEquals(1, t.w1.received.size());
            byte[] f = t.w1.received.get(0).data();
            assertEquals(Ipv4Addr.parse("198.18.2.7"), Frames.u32(f, 14 + ArpPacket.SPA));
            assertEquals(R1, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 14 + ArpPacket.SHA));
            t.r.knobs().set("net.ipv4.ip_forward", "0");
            t.w1.send(Frames.arp(H1, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, H1, "198.18.1.2", 0, "198.18.2.7"));
            t.net.settle();
            assertEquals(1, t.w1.received.size(), "no proxying on an interface that does not forward");
        }
    }

    @Test
    void proxiedRepliesToBroadcastRequestsWaitUpToProxyDelay() {
        try (Router t = new Router()) {
            t.r.knobs().set("net.ipv4.conf.r1.proxy_arp", "1");
            long[] delays = new long[20];
            for (int i = 0; i < delays.length; i++) {
                t.w1.clear();
                long t0 = t.net.sched.nanoTime();
                t.w1.send(Frames.arp(H1, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, H1, "198.18.1.2", 0, "198.18.2.7"));
                t.net.run(SEC);
                assertEquals(1, t.w1.received.size());
                delays[i] = t.w1.received.get(0).at() - t0;
                assertTrue(delays[i] >= 0 && delays[i] < 800_000_000L, "delay " + delays[i]);
            }
            assertTrue(java.util.Arrays.stream(delays).distinct().count() > 10, "random, not constant");
            t.w1.clear();
            long t0 = t.net.sched.nanoTime();
            t.w1.send(Frames.arp(H1, R1, ArpPacket.OP_REQUEST, H1, "198.18.1.2", R1, "198.18.2.7"));
            t.net.settle();
            assertEquals(1, t.w1.received.size(), "unicast requests are answered at once");
            assertEquals(t0, t.w1.received.get(0).at());
        }
    }
}
