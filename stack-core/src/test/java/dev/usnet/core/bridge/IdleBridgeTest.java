package dev.usnet.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Idle containers on a host bridge cost no timer until they are used, and a bridge of many
 * ports keeps its ports straight through adds and removes (the port list compacts, the FDB of a removed port goes).
 */
class IdleBridgeTest {
    private static final long A = 0x0200_0000_0a01L;
    private static final long B = 0x0200_0000_0b02L;

    @Test
    void idleContainersOnABridgeArmNoTimerUntilUsed() {
        try (TestNet net = new TestNet()) {
            NetStack host = net.ns("host");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            host.register(br);
            br.setUp(true);
            List<NetStack> containers = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                NetStack c = net.ns("c" + i);
                VethEnd[] pair = net.link(c, "eth0", "198.18.1." + (i + 2) + "/24", host, "h" + i, null);
                br.addPort(pair[1]);
                containers.add(c);
            }
            TestNet.Wire w = net.wire(host, "uplink", 0x0200_0000_0101L);
            br.addPort(w.dutEnd);
            assertEquals(0, net.sched.pending(), "nothing sent: no namespace or bridge has a timer armed");
            assertFalse(br.fdbGcArmed());
            net.sched.runFor(600_000_000_000L);
            assertEquals(0, net.sched.pending(), "ten idle minutes later still nothing armed");

            // First use: a broadcast from the uplink is learned (arming the ageing timer) and flooded into every
            // container, each of which receives it.
            br.setAgeingNanos(10_000_000_000L);
            w.send(Frames.raw(A, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            assertTrue(br.fdbGcArmed(), "a learned entry arms the FDB ageing timer");
            for (NetStack c : containers) {
                assertEquals(1, c.device("eth0").stats().rxPackets, c.name());
                assertEquals(0, c.backlogLength(), c.name());
            }
            // Ageing: once the learned entry is gone, the timer is not re-armed.
            net.sched.runFor(60_000_000_000L);
            assertEquals(0, br.fdb().learnedCount());
            assertFalse(br.fdbGcArmed(), "no learned entry left: the ageing timer stops");
        }
    }

    @Test
    void portsStayInJoinOrderThroughRemovesAndCompactionAndTheirFdbEntriesGo() {
        try (TestNet net = new TestNet()) {
            NetStack host = net.ns("host");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            host.register(br);
            br.setUp(true);
            List<TestNet.Wire> wires = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                TestNet.Wire w = net.wire(host, "p" + i, 0x0200_0000_1000L + i);
                br.addPort(w.dutEnd);
                wires.add(w);
            }
            // p3 learns B; removing p3 must take that entry with its own local one.
            wires.get(3).send(Frames.raw(B, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            assertSame(br.port(wires.get(3).dutEnd), br.fdb().list().stream().filter(e -> e.mac() == B).findFirst().orElseThrow().port());
            // Remove 15 of 20 (the list compacts once more than half its slots are empty), keep 2, 5, 11, 17, 19.
            List<Integer> keep = List.of(2, 5, 11, 17, 19);
            for (int i = 0; i < 20; i++) {
                if (!keep.contains(i)) {
                    br.removePort(wires.get(i).dutEnd);
                    assertNull(br.port(wires.get(i).dutEnd));
                }
            }
            List<String> names = br.ports().stream().map(p -> p.dev().name()).toList();
            assertEquals(List.of("p2", "p5", "p11", "p17", "p19"), names);
            assertTrue(br.fdb().list().stream().noneMatch(e -> e.mac() == B), "B went with p3");
            assertEquals(6, br.fdb().size(), "the bridge's own entry and one local entry per remaining port");
            // A new port joins at the end; flooding reaches exactly the remaining ports.
            TestNet.Wire late = net.wire(host, "late", 0x0200_0000_2000L);
            br.addPort(late.dutEnd);
            for (TestNet.Wire w : wires) {
                w.clear();
            }
            wires.get(5).send(Frames.raw(A, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            for (int i = 0; i < 20; i++) {
                int expect = keep.contains(i) && i != 5 ? 1 : 0;
                assertEquals(expect, wires.get(i).received.size(), "p" + i);
            }
            assertEquals(1, late.received.size());
            assertSame(br.port(wires.get(5).dutEnd), br.fdb().list().stream().filter(e -> e.mac() == A).findFirst().orElseThrow().port());
        }
    }
}
