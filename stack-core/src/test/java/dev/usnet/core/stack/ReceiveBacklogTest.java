package dev.usnet.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.EthernetFrame;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A namespace's receive backlog (netif_rx's queue, linked through the packets): it keeps arrival order per sender,
 * holds at most net.core.netdev_max_backlog frames, and in real time the namespaces of one loop share one poll
 * list (softnet_data's), which gives the loop back to its other tasks after its budget.
 */
class ReceiveBacklogTest {
    private static final int ETH_P_TEST = 0x88b5;

    private static Packet frame(VethEnd to, int sender, int seq) {
        Packet p = Packet.allocate(Buffers.HEADROOM, 60);
        var b = p.buf();
        b.writerIndex(b.readerIndex() + 60);
        EthernetFrame.write(b, p.start(), to.mac(), 0x0200_0000_0f00L + sender, ETH_P_TEST);
        b.setInt(p.start() + 14, sender);
        b.setInt(p.start() + 18, seq);
        return p;
    }

    @Test
    void theBacklogHoldsNetdevMaxBacklogFramesAndGivesThemUpInOrder() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "eth0", null, b, "eth0", null);
            List<Integer> got = new ArrayList<>();
            pair[1].setRxHandler((dev, p) -> {
                got.add(p.buf().getInt(p.start() + 18));
                p.release();
                return true;
            });
            for (int i = 0; i < 1500; i++) {
                pair[0].transmit(frame(pair[1], 0, i));
            }
            assertEquals(1000, b.backlogLength(), "net.core.netdev_max_backlog (1000)");
            assertEquals(500, b.drops().get(DropReason.BACKLOG_FULL));
            assertEquals(500, pair[1].stats().rxDropped);
            net.settle();
            assertEquals(1000, got.size());
            for (int i = 0; i < 1000; i++) {
                assertEquals(i, got.get(i));
            }
            assertEquals(0, b.backlogLength());
        }
    }

    /** Backlog runs it took to drain 640 queued frames with net.core.dev_weight {@code weight} (null: default). */
    private static long runsToDrain640(String weight) {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            if (weight != null) {
                b.knobs().set("net.core.dev_weight", weight);
            }
            VethEnd[] pair = net.link(a, "eth0", null, b, "eth0", null);
            AtomicInteger got = new AtomicInteger();
            pair[1].setRxHandler((dev, p) -> {
                got.incrementAndGet();
                p.release();
                return true;
            });
            for (int i = 0; i < 640; i++) {
                pair[0].transmit(frame(pair[1], 0, i));
            }
            long before = b.cpu().measuredRuns();
            net.settle();
            assertEquals(640, got.get());
            return b.cpu().measuredRuns() - before;
        }
    }

    @Test
    void netCoreDevWeightIsTheNumberOfFramesOneBacklogRunHandles() {
        assertEquals(10, runsToDrain640(null), "Linux's default dev_weight 64: 640 frames in 10 runs");
        assertEquals(40, runsToDrain640("16"));
        assertEquals(1, runsToDrain640("1000"));
        assertEquals(640, runsToDrain640("1"));
    }

    @Test
    void inRealTimeEverySendersFramesArriveInOrderThroughOnePollListPerLoop() throws Exception {
        EventExecutor l0 = new DefaultEventExecutor();
        EventExecutor l1 = new DefaultEventExecutor();
        try {
            RealTimeScheduler s0 = new RealTimeScheduler(l0);
            RealTimeScheduler s1 = new RealTimeScheduler(l1);
            NetStack c = new NetStack("c", s0, 1);
            c.knobs().set("net.core.netdev_max_backlog", "65536");
            int senders = 4;
            int frames = 2_000;
            List<NetStack> from = new ArrayList<>();
            List<VethEnd> ends = new ArrayList<>();
            List<VethEnd> peers = new ArrayList<>();
            int[] next = new int[senders];
            AtomicInteger disorder = new AtomicInteger();
            CountDownLatch all = new CountDownLatch(senders * frames);
            for (int k = 0; k < senders; k++) {
                NetStack s = new NetStack("s" + k, k % 2 == 0 ? s0 : s1, 1);
                VethEnd[] pair = VethEnd.createPair(s, "eth0", 0x0200_0000_0100L + k, c, "in" + k, 0x0200_0000_0200L + k);
                pair[0].setUp(true);
                pair[1].setUp(true);
                pair[1].setRxHandler((dev, p) -> {
                    int who = p.buf().getInt(p.start() + 14);
                    int seq = p.buf().getInt(p.start() + 18);
                    if (seq != next[who]++) {
                        disorder.incrementAndGet();
                    }
                    p.release();
                    all.countDown();
                    return true;
                });
                from.add(s);
                ends.add(pair[0]);
                peers.add(pair[1]);
            }
            // Every sender transmits from its own loop, in bursts, while c's loop receives.
            for (int k = 0; k < senders; k++) {
                int who = k;
                EventExecutor loop = k % 2 == 0 ? l0 : l1;
                for (int burst = 0; burst < frames; burst += 500) {
                    int first = burst;
                    loop.execute(() -> {
                        for (int i = first; i < first + 500; i++) {
                            ends.get(who).transmit(frame(peers.get(who), who, i));
                        }
                    });
                }
            }
            assertTrue(all.await(30, TimeUnit.SECONDS), "all frames arrive: " + all.getCount() + " missing");
            assertEquals(0, disorder.get(), "frames out of order");
            assertEquals(0, c.drops().total(), c.drops().snapshot().toString());
            l0.submit(() -> {
                c.close();
                from.forEach(NetStack::close);
            }).sync();
        } finally {
            l0.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            l1.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    @Test
    void aLongBacklogGivesTheLoopBackToItsOtherTasksAfterItsBudget() throws Exception {
        EventExecutor loop = new DefaultEventExecutor();
        try {
            RealTimeScheduler sched = new RealTimeScheduler(loop);
            NetStack a = new NetStack("a", sched, 1);
            NetStack b = new NetStack("b", sched, 1);
            b.knobs().set("net.core.netdev_max_backlog", "65536");
            VethEnd[] pair = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            pair[0].setUp(true);
            pair[1].setUp(true);
            int total = 5_000;
            AtomicInteger received = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(1);
            pair[1].setRxHandler((dev, p) -> {
                p.release();
                if (received.incrementAndGet() == total) {
                    done.countDown();
                }
                return true;
            });
            // Hold the loop while the backlog fills (its run is queued by the first frame), then queue a task behind.
            CountDownLatch hold = new CountDownLatch(1);
            loop.execute(() -> {
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            for (int i = 0; i < total; i++) {
                b.netifRx(pair[1], frame(pair[1], 0, i));
            }
            int[] seenByTask = {-1};
            loop.execute(() -> seenByTask[0] = received.get());
            hold.countDown();
            assertTrue(done.await(30, TimeUnit.SECONDS));
            assertTrue(seenByTask[0] >= 0 && seenByTask[0] < total,
                    "the task queued behind the backlog ran before it was drained: it saw " + seenByTask[0]);
            loop.submit(() -> {
                a.close();
                b.close();
            }).sync();
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
