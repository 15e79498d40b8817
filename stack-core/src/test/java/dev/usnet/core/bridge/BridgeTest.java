package dev.usnet.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.MacAddr;
import org.junit.jupiter.api.Test;

class BridgeTest {
    private static final long A = 0x0200_0000_0a01L;
    private static final long B = 0x0200_0000_0b02L;
    private static final long C = 0x0200_0000_0c03L;

    private static final class Rig implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack ns = net.ns("br");
        final Bridge br = new Bridge("br0", 0x0200_0000_00feL);
        final TestNet.Wire p1;
        final TestNet.Wire p2;
        final TestNet.Wire p3;

        Rig() {
            ns.register(br);
            p1 = net.wire(ns, "p1", 0x0200_0000_0101L);
            p2 = net.wire(ns, "p2", 0x0200_0000_0102L);
            p3 = net.wire(ns, "p3", 0x0200_0000_0103L);
            br.addPort(p1.dutEnd);
            br.addPort(p2.dutEnd);
            br.addPort(p3.dutEnd);
            br.setUp(true);
        }

        void send(TestNet.Wire w, long src, long dst, int len) {
            w.send(Frames.raw(src, dst, 0x0800, len));
            net.settle();
        }

        int[] counts() {
            return new int[] {p1.received.size(), p2.received.size(), p3.received.size()};
        }

        void clear() {
            p1.clear();
            p2.clear();
            p3.clear();
        }

        @Override
        public void close() {
            net.close();
        }
    }

    @Test
    void learnsFloodsUnknownAndForwardsKnownUnicastToOnePort() {
        try (Rig r = new Rig()) {
            r.send(r.p1, A, B, 100);
            assertEquals("[0, 1, 1]", java.util.Arrays.toString(r.counts()), "unknown unicast floods, never back to ingress");
            r.clear();
            r.send(r.p2, B, A, 100);
            assertEquals("[1, 0, 0]", java.util.Arrays.toString(r.counts()), "A was learned on p1");
            r.clear();
            r.send(r.p1, A, B, 100);
            assertEquals("[0, 1, 0]", java.util.Arrays.toString(r.counts()));
            r.clear();
            r.send(r.p1, A, A, 100);
            assertEquals("[0, 0, 0]", java.util.Arrays.toString(r.counts()));
            assertEquals(1, r.ns.drops().get(DropReason.BRIDGE_SAME_PORT));
            byte[] sent = Frames.raw(A, B, 0x0800, 300);
            r.p1.send(sent);
            r.net.settle();
            assertTrue(java.util.Arrays.equals(sent, r.p2.received.get(0).data()), "forwarded unchanged");
        }
    }

    @Test
    void macMovesToTheNewPort() {
        try (Rig r = new Rig()) {
            r.send(r.p1, A, MacAddr.BROADCAST, 60);
            r.send(r.p2, A, MacAddr.BROADCAST, 60);
            r.clear();
            r.send(r.p3, C, A, 60);
            assertEquals("[0, 1, 0]", java.util.Arrays.toString(r.counts()));
        }
    }

    @Test
    void invalidSourcesAndLinkLocalGroupsAreHandledAsLinux() {
        try (Rig r = new Rig()) {
            r.send(r.p1, 0x0300_0000_0009L, B, 60);
            r.send(r.p1, 0L, B, 60);
            assertEquals("[0, 0, 0]", java.util.Arrays.toString(r.counts()));
            assertEquals(2, r.ns.drops().get(DropReason.MAC_INVALID_SOURCE));
            r.send(r.p1, A, 0x0180_c200_0000L, 60);
            assertEquals("[0, 1, 1]", java.util.Arrays.toString(r.counts()), "BPDUs flood while STP is off");
            r.clear();
            r.send(r.p1, A, 0x0180_c200_0001L, 60);
            r.send(r.p1, A, 0x0180_c200_0002L, 60);
            r.send(r.p1, A, 0x0180_c200_0003L, 60);
            r.send(r.p1, A, 0x0180_c200_000eL, 60);
            assertEquals("[0, 0, 0]", java.util.Arrays.toString(r.counts()), "PAUSE, LACP, 802.1X, LLDP stay local");
            r.br.setGroupFwdMask(1 << 0xe);
            r.send(r.p1, A, 0x0180_c200_000eL, 60);
            assertEquals("[0, 1, 1]", java.util.Arrays.toString(r.counts()), "group_fwd_mask lets LLDP through");
            assertThrows(IllegalArgumentException.class, () -> r.br.setGroupFwdMask(1 << 1));
        }
    }

    @Test
    void vlanTaggedFramesPassUnchanged() {
        try (Rig r = new Rig()) {
            byte[] f = Frames.raw(A, MacAddr.BROADCAST, EthernetFrame.ETH_P_8021Q, 80);
            r.p1.send(f);
            r.net.settle();
            assertTrue(java.util.Arrays.equals(f, r.p2.received.get(0).data()));
        }
    }

    @Test
    void learnedEntriesAgeOutAfterAgeingTime() {
        try (Rig r = new Rig()) {
            r.br.setAgeingNanos(10_000_000_000L);
            r.send(r.p2, B, A, 60);
            r.clear();
            r.net.run(9_000_000_000L);
            r.send(r.p1, A, B, 60);
            assertEquals("[0, 1, 0]", java.util.Arrays.toString(r.counts()), "still known after 9 s");
            r.clear();
            r.net.run(10_500_000_000L);
            r.send(r.p1, A, B, 60);
            assertEquals("[0, 1, 1]", java.util.Arrays.toString(r.counts()), "aged out 10 s after last seen: flood");
        }
    }

    @Test
    void ageingTimeZeroNeverLearnsAndFloodsEveryUnicastLikeLinux() {
        try (Rig r = new Rig()) {
            r.send(r.p2, B, A, 60);
            assertEquals(1, r.br.fdb().learnedCount(), "learned while ageing is on");
            // Setting 0 forgets what was learned (Linux's gc finds it expired) and learns nothing after.
            r.br.setAgeingNanos(0);
            assertEquals(0, r.br.fdb().learnedCount());
            r.clear();
            r.send(r.p1, A, B, 60);
            assertEquals("[0, 1, 1]", java.util.Arrays.toString(r.counts()), "B unknown: flooded");
            r.clear();
            r.send(r.p2, B, A, 60);
            r.send(r.p1, A, B, 60);
            assertEquals("[1, 1, 2]", java.util.Arrays.toString(r.counts()), "nothing learned: every unicast flooded");
            assertEquals(0, r.br.fdb().learnedCount());
            assertTrue(r.br.fdb().list().stream().allMatch(e -> e.isLocal() || e.isStatic()));
            // A static entry is still used (only learning stops).
            r.br.fdb().addStatic(B, r.br.port(r.p2.dutEnd), r.ns.now());
            r.clear();
            r.send(r.p1, A, B, 60);
            assertEquals("[0, 1, 0]", java.util.Arrays.toString(r.counts()));
            r.net.run(11_000_000_000L);
            assertFalse(r.br.fdbGcArmed(), "nothing learned: the ageing timer is not re-armed");
        }
    }

    @Test
    void staticEntriesDoNotAge() {
        try (Rig r = new Rig()) {
            r.br.setAgeingNanos(1_000_000_000L);
            r.br.fdb().addStatic(B, r.br.port(r.p3.dutEnd), r.ns.now());
            r.net.run(60_000_000_000L);
            r.send(r.p1, A, B, 60);
            assertEquals("[0, 0, 1]", java.util.Arrays.toString(r.counts()));
        }
    }

    @Test
    void macFloodIsCappedAndCountedButStillForwarded() {
        try (Rig r = new Rig()) {
            r.br.setFdbMaxLearned(100);
            for (int i = 0; i < 1000; i++) {
                r.send(r.p1, 0x0200_1000_0000L + i, C, 60);
            }
            assertEquals(100, r.br.fdb().learnedCount());
            assertEquals(900, r.br.fdb().learnFailures());
            assertEquals(900, r.ns.drops().get(DropReason.FDB_FULL));
            assertEquals(1000, r.p2.received.size(), "frames are flooded even when their source is not learned");
            // Ageing frees room for new addresses.
            r.br.setAgeingNanos(1_000_000_000L);
            r.net.run(12_000_000_000L);
            r.send(r.p2, B, C, 60);
            assertEquals(1, r.br.fdb().learnedCount());
        }
    }

    @Test
    void bridgeNetfilterValidatesAndTrimsIpv4OnlyWhenEnabled() {
        try (Rig r = new Rig()) {
            byte[] ok = Frames.udp(A, B, "198.18.9.1", "198.18.9.2", 64, 2, 1, false);
            byte[] padded = java.util.Arrays.copyOf(ok, 60);
            byte[] bad = ok.clone();
            bad[24] ^= 0x11;
            r.p1.send(padded);
            r.p1.send(bad);
            r.net.settle();
            assertEquals(60, r.p2.received.get(0).data().length, "off (Linux without br_netfilter): frames pass as they are");
            assertEquals(2, r.p2.received.size());
            r.clear();
            r.ns.knobs().set("net.bridge.bridge-nf-call-iptables", "1");
            r.p1.send(padded);
            r.p1.send(bad);
            r.net.settle();
            assertEquals(1, r.p2.received.size(), "the bad header is dropped");
            assertEquals(ok.length, r.p2.received.get(0).data().length, "padding trimmed to the IP total length");
            assertEquals(1, r.ns.drops().get(DropReason.IP_CSUM));
        }
    }

    @Test
    void framesToTheBridgeOrPortMacGoUpNotOut() {
        try (Rig r = new Rig()) {
            r.send(r.p1, A, r.br.mac(), 60);
            r.send(r.p1, A, r.p3.dutEnd.mac(), 60);
            assertEquals("[0, 0, 0]", java.util.Arrays.toString(r.counts()));
            assertEquals(2, r.br.stats().rxPackets);
        }
    }

    @Test
    void everyBridgedWayIsAForwardingPathFromTheFirstFrameOnIncludingDeliveryToTheBridgeItself() {
        try (Rig r = new Rig()) {
            // Virtual time 0: the frames are stamped 0 on receive, and are forwarded all the same.
            assertEquals(0, r.net.sched.nanoTime());
            r.send(r.p1, A, MacAddr.BROADCAST, 60);
            r.send(r.p2, B, A, 100);
            r.send(r.p1, A, r.br.mac(), 80);
            assertEquals(0, r.net.sched.nanoTime());
            var paths = r.ns.latency().all();
            // In the order they first carried a packet: the flood's copies to p2 and p3 (one flood path for the
            // ingress port), its own copy up to br0, then the known unicast.
            assertEquals(java.util.List.of("p1->flood", "p1->br0", "p2->p1"),
                    paths.stream().map(dev.usnet.core.stats.LatencyPaths.Path::name).toList());
            var flood = paths.get(0);
            assertTrue(flood.isFlood());
            assertEquals(2, flood.packets(), "one per flooded copy");
            assertEquals(r.p2.dutEnd.stats().txBytes + r.p3.dutEnd.stats().txBytes, flood.bytes());
            var up = paths.get(1);
            assertEquals(2, up.packets(), "the broadcast and the frame to br0's MAC");
            assertEquals(r.br.stats().rxPackets, up.packets());
            assertEquals(r.br.stats().rxBytes, up.bytes());
            assertEquals(2, up.snapshot().getTotalCount());
            assertEquals(1, paths.get(2).packets());
            assertFalse(paths.get(2).isFlood());
            assertEquals(r.p1.dutEnd.stats().txBytes, paths.get(2).bytes());
        }
    }

    /**
     * Every one of N ports broadcasts once (N containers that each ARP): one flood path per ingress port and one up
     * to the bridge, not a path per (ingress, egress) pair, which at 1 000 containers made a million.
     */
    @Test
    void broadcastsFromEveryPortMakeAPathPerPortNotPerPair() {
        int n = 64;
        try (TestNet net = new TestNet()) {
            NetStack ns = net.ns("br");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            ns.register(br);
            java.util.List<TestNet.Wire> wires = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                TestNet.Wire w = net.wire(ns, "p" + i, 0x0200_0000_1000L + i);
                br.addPort(w.dutEnd);
                wires.add(w);
            }
            br.setUp(true);
            for (int i = 0; i < n; i++) {
                wires.get(i).send(Frames.raw(0x0200_0000_2000L + i, MacAddr.BROADCAST, 0x0806, 60));
                net.settle();
            }
            for (TestNet.Wire w : wires) {
                assertEquals(n - 1, w.received.size(), "every broadcast but its own reached " + w.dutEnd.name());
            }
            var paths = ns.latency().all();
            assertEquals(2 * n, paths.size(), "p<i>->flood and p<i>->br0 for each port");
            long flooded = paths.stream().filter(dev.usnet.core.stats.LatencyPaths.Path::isFlood)
                    .mapToLong(dev.usnet.core.stats.LatencyPaths.Path::packets).sum();
            assertEquals((long) n * (n - 1), flooded, "every copy counted once, on its ingress port's flood path");
            // Learned now: unicast between two of them is a path of its own again.
            wires.get(3).send(Frames.raw(0x0200_0000_2003L, 0x0200_0000_2007L, 0x0800, 100));
            net.settle();
            assertEquals(1, wires.get(7).received.size() - (n - 1));
            assertTrue(ns.latency().all().stream().anyMatch(p -> p.name().equals("p3->p7") && p.packets() == 1));
        }
    }
}
