package dev.usnet.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.MacAddr;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two bridges joined by more than one veth pair and no spanning tree: a broadcast goes round the loop for ever, as
 * in Linux. Each lap crosses a veth into the peer's receive backlog, never recursively; a storm that multiplies is
 * bounded by net.core.netdev_max_backlog and counted (BACKLOG_FULL); in virtual time the instant never ends and the
 * watchdog says so. Neither the endless laps nor the teardown after them may overflow the stack.
 */
class BridgeLoopTest {
    private static final long HOST = 0x0200_0000_0a01L;

    private static final class Loop implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack sw1 = net.ns("sw1");
        final NetStack sw2 = net.ns("sw2");
        final Bridge br1 = new Bridge("br0", 0x0200_0000_01feL);
        final Bridge br2 = new Bridge("br0", 0x0200_0000_02feL);
        final TestNet.Wire host;

        Loop(int links) {
            sw1.register(br1);
            sw2.register(br2);
            for (int i = 1; i <= links; i++) {
                VethEnd[] pair = net.link(sw1, "l" + i, null, sw2, "l" + i, null);
                br1.addPort(pair[0]);
                br2.addPort(pair[1]);
            }
            host = net.wire(sw1, "ha", 0x0200_0000_0aaaL);
            br1.addPort(host.dutEnd);
            br1.setUp(true);
            br2.setUp(true);
            // Found after far less work than a run's defaults: enough laps for a chain of clones to overflow.
            net.sched.setStallLimit(20_000);
            net.sched.setTaskLimit(5_000);
        }

        VirtualScheduler.ClockStalled storm() {
            host.send(Frames.raw(HOST, MacAddr.BROADCAST, 0x0800, 100));
            return assertThrows(VirtualScheduler.ClockStalled.class, net::settle);
        }

        @Override
        public void close() {
            net.close();
        }
    }

    /**
     * Runs {@code body} on a thread with a small stack (256 KiB), as a loop's laps must not deepen any recursion: with
     * clones of clones chained to each other, the release of a few thousand laps' frames overflowed it.
     */
    private static void onSmallStack(Runnable body) throws InterruptedException {
        Throwable[] failed = new Throwable[1];
        Thread t = new Thread(null, () -> {
            try {
                body.run();
            } catch (Throwable e) {
                failed[0] = e;
            }
        }, "bridge-loop", 256 * 1024);
        t.start();
        t.join();
        if (failed[0] instanceof AssertionError a) {
            throw a;
        }
        if (failed[0] != null) {
            throw new AssertionError("the storm or its teardown failed: " + failed[0], failed[0]);
        }
    }

    @Test
    void aBroadcastRoundALoopOfTwoLinksNeverEndsAndTheWatchdogNamesTheBackloggedNamespaces() throws Exception {
        onSmallStack(this::twoLinks);
    }

    private void twoLinks() {
        try (Loop l = new Loop(2)) {
            VirtualScheduler.ClockStalled e = l.storm();
            assertTrue(e.getMessage().contains("receive backlog of netns sw1"), e.getMessage());
            assertTrue(e.getMessage().contains("receive backlog of netns sw2"), e.getMessage());
            // Two frames go round, one each way: nothing multiplies, so nothing is dropped.
            assertEquals(0, l.sw1.drops().get(DropReason.BACKLOG_FULL) + l.sw2.drops().get(DropReason.BACKLOG_FULL));
            assertTrue(l.host.received.size() > 1_000, "the host hears the storm: " + l.host.received.size());
            BridgeLoops.Loop loop = BridgeLoops.find(List.of(l.sw1, l.sw2));
            assertEquals("bridges sw1/br0, sw2/br0 through sw1/l1-sw2/l1, sw2/l2-sw1/l2", loop.describe());
        }
    }

    @Test
    void aStormThatDoublesEachLapIsBoundedByTheBacklogAndCountedAsDrops() throws Exception {
        onSmallStack(this::threeLinks);
    }

    private void threeLinks() {
        try (Loop l = new Loop(3)) {
            l.storm();
            long dropped = l.sw1.drops().get(DropReason.BACKLOG_FULL) + l.sw2.drops().get(DropReason.BACKLOG_FULL);
            assertTrue(dropped > 100, "BACKLOG_FULL " + dropped);
            long rxDropped = java.util.stream.Stream.concat(l.sw1.devices().stream(), l.sw2.devices().stream())
                    .mapToLong(d -> d.stats().rxDropped).sum();
            assertEquals(dropped, rxDropped, "counted as the receiving ports' rx dropped");
        }
    }

    @Test
    void bridgesJoinedByOneLinkOrByNoneAreNoLoop() {
        try (Loop l = new Loop(1)) {
            assertNull(BridgeLoops.find(List.of(l.sw1, l.sw2)));
            l.host.send(Frames.raw(HOST, MacAddr.BROADCAST, 0x0800, 100));
            l.net.settle();
            assertEquals(0, l.host.received.size(), "not sent back out of the port it came in on");
        }
    }
}
