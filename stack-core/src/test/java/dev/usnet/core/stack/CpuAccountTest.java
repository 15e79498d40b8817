package dev.usnet.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CpuAccountTest {
    static final long R1 = 0x0200_0000_0101L;
    static final long R2 = 0x0200_0000_0102L;
    static final long H1 = 0x0200_0000_aa01L;
    static final long H2 = 0x0200_0000_bb02L;

    static final class Router implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack r = net.ns("r");
        final NetStack idle = net.ns("idle");
        final TestNet.Wire w1 = net.wire(r, "r1", R1);
        final TestNet.Wire w2 = net.wire(r, "r2", R2);

        Router(String... knobs) {
            r.knobs().set("net.ipv4.ip_forward", "1");
            TestNet.addr(r, w1.dutEnd, "198.18.1.1/24");
            TestNet.addr(r, w2.dutEnd, "198.18.2.1/24");
            r.neigh().addPermanent(w1.dutEnd, Ipv4Addr.parse("198.18.1.2"), H1);
            r.neigh().addPermanent(w2.dutEnd, Ipv4Addr.parse("198.18.2.2"), H2);
            for (int i = 0; i < knobs.length; i += 2) {
                r.knobs().set(knobs[i], knobs[i + 1]);
            }
        }

        /** Sends {@code n} UDP frames, one every {@code gapNanos} of virtual time, then drains. */
        void offer(int n, long gapNanos) {
            byte[] f = Frames.udp(H1, R1, "198.18.1.2", "198.18.2.2", 64, 100, 9, false);
            for (int i = 0; i < n; i++) {
                w1.send(f);
                if (gapNanos > 0) {
                    net.run(gapNanos);
                } else if (i % 500 == 499) {
                    net.settle();
                }
            }
            net.run(1_000_000_000L);
        }

        List<Long> arrivals() {
            List<Long> l = new ArrayList<>();
            for (TestNet.Seen s : w2.received) {
                l.add(s.at());
            }
            return l;
        }

        @Override
        public void close() {
            net.close();
        }
    }

    @Test
    void aNamespaceThatForwardedTenThousandPacketsHasMeasuredCpuAndAnIdleOneHasNone() {
        try (Router t = new Router()) {
            t.offer(10_000, 0);
            assertEquals(10_000, t.r.mib().get(Mib.IpForwDatagrams));
            assertTrue(t.r.cpu().measuredNanos() > 0, "forwarding took measurable time");
            assertTrue(t.r.cpu().measuredRuns() >= 10_000 / 64, "runs: " + t.r.cpu().measuredRuns());
            assertEquals(0, t.idle.cpu().measuredNanos(), "an idle namespace ran nothing");
        }
    }

    @Test
    void withTheModelOffNothingIsModelledAndEveryFrameLeavesAtTheInstantItCame() {
        try (Router t = new Router()) {
            t.offer(200, 0);
            assertEquals(200, t.w2.received.size());
            assertTrue(t.arrivals().stream().allMatch(a -> a == 0), "no virtual time passes in the router");
            assertFalse(t.r.cpu().modelEnabled());
            assertEquals(0, t.r.cpu().modelNanos());
            assertEquals(0, t.r.cpu().modelBusyNanos());
        }
    }

    @Test
    void modelledCpuIsTheExactSumOfThePerOperationCosts() {
        try (Router t = new Router("usnet.cpu.model", "1", "usnet.cpu.l2_rx_ns", "70", "usnet.cpu.ip_fwd_ns", "330")) {
            t.offer(1000, 0);
            assertEquals(1000, t.r.mib().get(Mib.IpForwDatagrams));
            assertEquals(0, t.r.cow().copies(), "unshared frames are not copied");
            assertTrue(t.r.cpu().modelEnabled());
            assertEquals(1000L * (70 + 330), t.r.cpu().modelNanos());
            assertEquals(1000L * (70 + 330), t.r.cpu().modelBusyNanos(), "one core: busy time is the CPU time");
        }
    }

    @Test
    void twoCoresHalveTheBusyTimeButNotTheCpuTime() {
        try (Router t = new Router("usnet.cpu.model", "1", "usnet.cpu.cores", "2", "usnet.cpu.l2_rx_ns", "71",
                "usnet.cpu.ip_fwd_ns", "0")) {
            t.offer(1000, 0);
            assertEquals(71_000, t.r.cpu().modelNanos());
            assertEquals(35_500, t.r.cpu().modelBusyNanos());
        }
    }

    @Test
    void theModelIsDeterministic() {
        long[] picos = new long[2];
        List<List<Long>> arrivals = new ArrayList<>();
        for (int run = 0; run < 2; run++) {
            try (Router t = new Router("usnet.cpu.model", "1")) {
                t.offer(3000, 0);
                picos[run] = t.r.cpu().modelPicos();
                arrivals.add(t.arrivals());
            }
        }
        assertTrue(picos[0] > 0);
        assertEquals(picos[0], picos[1]);
        assertEquals(arrivals.get(0), arrivals.get(1));
    }

    @Test
    void aBurstDrainsAtTheModelledRate() {
        // 10 µs a frame: a burst of 200 takes 4 backlog runs, each starting when the previous one's CPU is free.
        try (Router t = new Router("usnet.cpu.model", "1", "usnet.cpu.l2_rx_ns", "1000", "usnet.cpu.ip_fwd_ns", "9000")) {
            t.offer(200, 0);
            List<Long> a = t.arrivals();
            assertEquals(200, a.size());
            assertEquals(0L, a.get(63));
            assertEquals(64 * 10_000L, a.get(64));
            assertEquals(3 * 64 * 10_000L, a.get(199));
        }
    }

    @Test
    void aSaturatedNamespaceForwardsAtItsCapacityAndDropsAtTheBacklog() {
        // 10 µs of CPU per forwarded frame: capacity 100 kpps. Offered 200 kpps for 40 ms: 8000 frames.
        try (Router t = new Router("usnet.cpu.model", "1", "usnet.cpu.l2_rx_ns", "1000", "usnet.cpu.ip_fwd_ns", "9000")) {
            t.offer(8000, 5_000);
            long inWindow = t.arrivals().stream().filter(x -> x <= 40_000_000L).count();
            assertTrue(inWindow >= 3900 && inWindow <= 4100, "forwarded at capacity in 40 ms: " + inWindow);
            long drops = t.r.drops().get(DropReason.BACKLOG_FULL);
            assertTrue(drops > 0, "backlog overflowed");
            assertEquals(8000, t.w2.received.size() + drops, "every frame forwarded or dropped at the backlog");
            assertTrue(t.r.cpu().modelUtilisation(40_000_000L) > 0.95, "saturated");
        }
    }

    @Test
    void belowCapacityNothingIsDropped() {
        try (Router t = new Router("usnet.cpu.model", "1", "usnet.cpu.l2_rx_ns", "1000", "usnet.cpu.ip_fwd_ns", "9000")) {
            t.offer(2000, 20_000);
            assertEquals(0, t.r.drops().get(DropReason.BACKLOG_FULL));
            assertEquals(2000, t.w2.received.size());
            double util = t.r.cpu().modelUtilisation(2000 * 20_000L);
            assertTrue(util > 0.45 && util < 0.55, "half busy: " + util);
        }
    }

    @Test
    void aBridgeIsChargedPerFrameReceivedAndForwardedWithAFloodCountedOnce() {
        try (TestNet net = new TestNet()) {
            NetStack ns = net.ns("br");
            ns.knobs().set("usnet.cpu.model", "1");
            ns.knobs().set("usnet.cpu.l2_rx_ns", "30");
            ns.knobs().set("usnet.cpu.bridge_fwd_ns", "50");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            ns.register(br);
            TestNet.Wire p1 = net.wire(ns, "p1", 0x0200_0000_0101L);
            TestNet.Wire p2 = net.wire(ns, "p2", 0x0200_0000_0102L);
            TestNet.Wire p3 = net.wire(ns, "p3", 0x0200_0000_0103L);
            br.addPort(p1.dutEnd);
            br.addPort(p2.dutEnd);
            br.addPort(p3.dutEnd);
            br.setUp(true);
            p2.send(Frames.raw(H2, H1, 0x0800, 100));    // H1 unknown: flooded to p1 and p3, one forward
            net.settle();
            for (int i = 0; i < 100; i++) {
                p1.send(Frames.raw(H1, H2, 0x0800, 100)); // H2 learnt on p2: known unicast
            }
            net.run(1_000_000L);
            assertEquals(1, p1.received.size(), "the flood reached p1");
            assertEquals(1, p3.received.size(), "the flood reached p3");
            assertEquals(100, p2.received.size(), "known unicast reached p2");
            assertEquals(101, ns.cpu().bridgeForwards());
            assertEquals(101L * (30 + 50), ns.cpu().modelNanos());
        }
    }

    @Test
    void aNamespacesTimersAreMeasuredIntoItsOwnAccountOnTheSharedVirtualScheduler() {
        try (TestNet net = new TestNet()) {
            NetStack ns = net.ns("br");
            NetStack other = net.ns("other");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            ns.register(br);
            TestNet.Wire p1 = net.wire(ns, "p1", 0x0200_0000_0101L);
            br.addPort(p1.dutEnd);
            br.setUp(true);
            // One learned entry arms the FDB garbage collection, which then runs every few seconds.
            p1.send(Frames.raw(H1, H2, 0x0800, 100));
            net.settle();
            long backlogRuns = ns.cpu().measuredRuns();
            net.run(60_000_000_000L);
            assertTrue(ns.cpu().measuredTimerRuns() > 0, "the bridge's FDB timer was measured");
            assertEquals(backlogRuns, ns.cpu().measuredRuns(), "no more frames, no more backlog runs");
            assertEquals(0, other.cpu().measuredTimerRuns(), "another namespace's timers are not charged here");
        }
    }

    @Test
    void aBadCpuKnobIsRejectedNamingTheKey() {
        var knobs = new dev.usnet.core.knob.Knobs();
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> knobs.set("usnet.cpu.cores", "0"));
        assertTrue(e.getMessage().contains("usnet.cpu.cores"), e.getMessage());
        assertEquals(1, knobs.get(CpuModelSysctl.CORES));
    }
}
