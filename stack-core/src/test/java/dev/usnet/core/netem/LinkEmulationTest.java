package dev.usnet.core.netem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.time.RealTimeScheduler;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.DefaultEventExecutor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Link emulation in virtual time: every departure time is exact, every random outcome fixed by the seed. */
class LinkEmulationTest {
    private static final long US = 1_000L;
    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;
    private static final int ETH_P_EXPERIMENTAL = 0x88b5;
    /** Two-sided 99.9 % normal quantile, for binomial bounds. */
    private static final double Z999 = 3.2905;

    /** Namespaces a and b joined by veth0/veth1; what veth1 receives is recorded as (seq, arrival time). */
    private static final class Rig implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack a = net.ns("a");
        final NetStack b = net.ns("b");
        final VethEnd tx;
        final VethEnd rx;
        int[] seqs = new int[1024];
        long[] at = new long[1024];
        int n;
        long rxBytes;
        long[] sentAt = new long[1024];
        /**
         * Pooled buffers, watched by the leak detector at PARANOID (which records every access: slow); the
         * statistical runs of 10^4..10^5 frames use plain heap buffers instead.
         */
        boolean pooled = true;

        Rig() {
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            tx = pair[0];
            rx = pair[1];
            rx.addTap((dev, p, isTx, now) -> {
                if (!isTx) {
                    record(p.buf().getInt(p.start() + 14), now, p.length());
                }
            });
            rx.setRxHandler((dev, p) -> {
                p.release();
                return true;
            });
        }

        private void record(int seq, long now, int len) {
            if (n == seqs.length) {
                seqs = Arrays.copyOf(seqs, n * 2);
                at = Arrays.copyOf(at, n * 2);
            }
            seqs[n] = seq;
            at[n] = now;
            n++;
            rxBytes += len;
        }

        void set(String param, String value) {
            a.knobs().set("usnet.netem.veth0." + param, value);
        }

        long now() {
            return net.sched.nanoTime();
        }

        /** Transmits frame {@code seq} of {@code len} bytes on veth0 now. */
        void send(int seq, int len) {
            if (seq >= sentAt.length) {
                sentAt = Arrays.copyOf(sentAt, Math.max(seq + 1, sentAt.length * 2));
            }
            sentAt[seq] = now();
            Packet p;
            if (pooled) {
                p = Packet.allocate(Buffers.HEADROOM, len);
                p.buf().writeZero(len);
            } else {
                p = Packet.wrap(Unpooled.wrappedBuffer(new byte[len]));
            }
            ByteBuf b = p.buf();
            int off = b.readerIndex();
            dev.usnet.core.wire.EthernetFrame.write(b, off, rx.mac(), tx.mac(), ETH_P_EXPERIMENTAL);
            b.setInt(off + 14, seq);
            tx.transmit(p);
        }

        /** Sends frames 0..count-1 of {@code len} bytes, one every {@code interval} from {@code start}. */
        void periodic(long start, long interval, int count, int len) {
            int[] k = {0};
            Runnable[] r = new Runnable[1];
            r[0] = () -> {
                send(k[0]++, len);
                if (k[0] < count) {
                    net.sched.schedule(r[0], interval);
                }
            };
            net.sched.schedule(r[0], start - now());
        }

        void at(long t, Runnable r) {
            net.sched.schedule(r, t - now());
        }

        void runUntil(long t) {
            net.sched.runUntil(t);
        }

        LinkEmulation.Stats stats() {
            return tx.netem().stats();
        }

        /** Arrival delay of the i-th received frame. */
        long delayOf(int i) {
            return at[i] - sentAt[seqs[i]];
        }

        @Override
        public void close() {
            net.close();
        }
    }

    private static void assertBinomial(long observed, long trials, double p, String what) {
        double mean = trials * p;
        double sd = Math.sqrt(trials * p * (1 - p));
        assertTrue(Math.abs(observed - mean) <= Z999 * sd,
                what + ": " + observed + " outside the 99.9 % bound " + mean + " ± " + Z999 * sd);
    }

    // ---- rate ----

    @Test
    void rateIsWithinOnePercentOfTheSettingOverTenSecondsAndEveryFrameTakesItsWireTime() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("rate", "100mbit");
            // 120 Mbit/s offered: 1500-byte frames every 100 us for 10 s against 120 us on the wire each.
            r.periodic(0, 100 * US, 100_000, 1500);
            r.runUntil(10 * S);
            double rate = r.rxBytes * 8 / 10.0;
            assertTrue(Math.abs(rate - 100e6) / 100e6 < 0.01, "rate " + rate);
            assertEquals(83_333, r.n, "one 1500-byte frame per 120 us");
            for (int i = 0; i < r.n; i++) {
                assertEquals((i + 1) * 120 * US, r.at[i], "frame " + i + " leaves when its bits are on the wire");
                assertTrue(i == 0 || r.seqs[i] > r.seqs[i - 1], "in order");
            }
            LinkEmulation.Stats st = r.stats();
            assertEquals(83_333, st.sentPackets());
            assertTrue(st.qlen() >= 999, "the queue stays (nearly) full at the default limit: " + st.qlen());
            assertEquals(1000, st.maxQlen());
            assertEquals(100_000 - 83_333 - st.qlen(), st.queueDrops(), "every frame is sent, held or tail-dropped");
            assertEquals(st.queueDrops(), r.a.drops().get(DropReason.NETEM_QUEUE_FULL));
            assertEquals(st.queueDrops(), r.tx.stats().txDropped);
            assertEquals(83_333, r.tx.stats().txPackets, "the device counts what left the emulation");
        }
    }

    @Test
    void aFractionalWireTimeAccumulatesExactly() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("rate", "3mbit");
            // 8000 bits at 3 Mbit/s: 2666666.67 ns per frame; offered 4 Mbit/s.
            r.periodic(0, 2 * MS, 5000, 1000);
            r.runUntil(10 * S);
            assertEquals(3750, r.n, "exactly 3750 frames in 10 s");
            for (int i = 0; i < r.n; i++) {
                long k = i + 1;
                long exact = (k * 8_000_000_000_000L + 3_000_000 - 1) / 3_000_000;
                assertEquals(exact, r.at[i], "frame " + k + " leaves at the first nanosecond after k * 8000 bits");
            }
        }
    }

    @Test
    void overheadCountsOnTheWire() {
        try (Rig r = new Rig()) {
            r.set("rate", "1gbit");
            r.set("overhead", "24");
            r.at(0, () -> {
                r.send(0, 1514);
                r.send(1, 1514);
            });
            r.runUntil(S);
            assertEquals(12_304, r.at[0], "(1514 + 24) * 8 bits at 1 Gbit/s");
            assertEquals(2 * 12_304, r.at[1]);
        }
    }

    @Test
    void aBurstLeavesTogetherThenTheRateHolds() {
        try (Rig r = new Rig()) {
            r.set("rate", "10mbit");
            r.set("burst", "15000");
            r.at(0, () -> {
                for (int i = 0; i < 20; i++) {
                    r.send(i, 1500);
                }
            });
            r.runUntil(15 * MS);
            assertEquals(20, r.n);
            long wire = 1200 * US;
            for (int i = 0; i < 10; i++) {
                assertEquals(wire, r.at[i], "the bucket's 15000 bytes leave together, one frame time after they came");
            }
            for (int i = 10; i < 20; i++) {
                assertEquals((i - 9) * wire + wire, r.at[i], "then one frame per 1.2 ms");
            }
            // Tokens refill from when the last frame took the link (one frame time before it left): 7.2 ms
            // later the bucket holds six frames, as tbf's would.
            long t0 = r.at[19] + 6 * MS;
            r.at(t0, () -> {
                for (int i = 20; i < 30; i++) {
                    r.send(i, 1500);
                }
            });
            r.runUntil(S);
            for (int i = 20; i < 26; i++) {
                assertEquals(t0 + wire, r.at[i], "frame " + i);
            }
            assertEquals(t0 + 2 * wire, r.at[26]);
        }
    }

    @Test
    void aBurstKeepsTheLongRunRate() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("rate", "100mbit");
            r.set("burst", "64k");
            r.periodic(0, 100 * US, 100_000, 1500);
            r.runUntil(10 * S);
            double rate = r.rxBytes * 8 / 10.0;
            assertTrue(Math.abs(rate - 100e6) / 100e6 < 0.01, "rate " + rate);
        }
    }

    @Test
    void gsoSuperFramesAreChargedForEverySegmentsHeaders() {
        Packet p = Packet.allocate(Buffers.HEADROOM, 14 + 20 + 32 + 14_480);
        ByteBuf b = p.buf();
        int off = b.writerIndex();
        b.writeZero(14 + 20 + 32 + 14_480);
        b.setShort(off + 12, 0x0800);
        b.setByte(off + 14, 0x45);
        b.setByte(off + 14 + 20 + 12, 0x80);
        p.setGso(Packet.GSO_TCPV4, 1448);
        try {
            assertEquals(p.length() + 9 * 66, LinkEmulation.wireBytes(p), "ten segments, each with 66 bytes of headers");
            p.setGso(Packet.GSO_NONE, 0);
            assertEquals(p.length(), LinkEmulation.wireBytes(p));
        } finally {
            p.release();
        }
    }

    // ---- delay and jitter ----

    @Test
    void delayIsExactForEveryFrame() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("delay", "10ms");
            SplittableRandom rnd = new SplittableRandom(3);
            long t = 0;
            for (int i = 0; i < 2000; i++) {
                t += rnd.nextLong(0, 3 * MS);
                int seq = i;
                r.at(t, () -> r.send(seq, 100 + seq % 1400));
            }
            r.runUntil(t + S);
            assertEquals(2000, r.n);
            for (int i = 0; i < r.n; i++) {
                assertEquals(i, r.seqs[i]);
                assertEquals(10 * MS, r.delayOf(i), "frame " + i);
            }
        }
    }

    @Test
    void delayComesAfterTheWireTime() {
        try (Rig r = new Rig()) {
            r.set("rate", "100mbit");
            r.set("delay", "5ms");
            r.periodic(0, 200 * US, 100, 1500);
            r.runUntil(S);
            assertEquals(100, r.n);
            for (int i = 0; i < r.n; i++) {
                assertEquals(120 * US + 5 * MS, r.delayOf(i), "an idle link: wire time, then the delay");
            }
        }
    }

    @Test
    void uniformJitterStaysWithinItsBoundsAndCoversThem() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("delay", "10ms");
            r.set("jitter", "2ms");
            r.periodic(0, 20 * MS, 10_000, 100);
            r.runUntil(300 * S);
            assertEquals(10_000, r.n);
            long min = Long.MAX_VALUE;
            long max = Long.MIN_VALUE;
            double sum = 0;
            for (int i = 0; i < r.n; i++) {
                long d = r.delayOf(i);
                min = Math.min(min, d);
                max = Math.max(max, d);
                sum += d;
            }
            assertTrue(min >= 8 * MS && max <= 12 * MS, min + ".." + max);
            assertTrue(min < 8 * MS + 10 * US && max > 12 * MS - 10 * US, "covers the range: " + min + ".." + max);
            double sdOfMean = 2.0 * MS / Math.sqrt(3) / Math.sqrt(r.n);
            assertTrue(Math.abs(sum / r.n - 10 * MS) < Z999 * sdOfMean, "mean " + sum / r.n);
        }
    }

    @Test
    void jitterDoesNotReorderInTheDefaultFifoButDoesInTfifo() {
        for (String queue : List.of("fifo", "tfifo")) {
            try (Rig r = new Rig()) {
                r.pooled = false;
                r.set("delay", "10ms");
                r.set("jitter", "5ms");
                r.set("queue", queue);
                r.periodic(0, MS, 5000, 100);
                r.runUntil(60 * S);
                assertEquals(5000, r.n);
                int inversions = 0;
                for (int i = 0; i < r.n; i++) {
                    long d = r.delayOf(i);
                    assertTrue(d >= 5 * MS && d <= 15 * MS, "within delay ± jitter: " + d);
                    if (i > 0 && r.seqs[i] < r.seqs[i - 1]) {
                        inversions++;
                    }
                }
                if (queue.equals("fifo")) {
                    assertEquals(0, inversions, "fifo: a frame never overtakes the one sent before it");
                } else {
                    assertTrue(inversions > 500, "tfifo: frames leave by their own time, " + inversions + " inversions");
                }
                assertEquals(0, r.stats().reordered(), "only the reorder setting counts as reordering");
            }
        }
    }

    @Test
    void normalJitterHasItsStandardDeviationAndIsCutAtFourSigma() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("delay", "50ms");
            r.set("jitter", "5ms");
            r.set("distribution", "normal");
            r.periodic(0, 100 * MS, 5000, 100);
            r.runUntil(600 * S);
            assertEquals(5000, r.n);
            double sum = 0;
            double sq = 0;
            for (int i = 0; i < r.n; i++) {
                long d = r.delayOf(i);
                assertTrue(d >= 30 * MS && d <= 70 * MS, "within 4 sigma: " + d);
                sum += d;
                sq += (double) d * d;
            }
            double mean = sum / r.n;
            double sd = Math.sqrt(sq / r.n - mean * mean);
            assertTrue(Math.abs(sd - 5 * MS) / (5 * MS) < 0.05, "sd " + sd);
            assertTrue(Math.abs(mean - 50 * MS) < Z999 * 5 * MS / Math.sqrt(r.n), "mean " + mean);
        }
    }

    // ---- loss, duplication, reordering ----

    private static int[] lossRun(String seed) {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("loss", "1%");
            if (seed != null) {
                r.set("seed", seed);
            }
            r.periodic(0, 10 * US, 100_000, 64);
            r.runUntil(2 * S);
            long lost = r.stats().lost();
            assertBinomial(lost, 100_000, 0.01, "lost frames");
            assertEquals(100_000 - lost, r.n, "every frame not lost arrives");
            assertEquals(lost, r.a.drops().get(DropReason.NETEM_LOSS));
            assertEquals(lost, r.tx.stats().txDropped);
            assertEquals(100_000 - lost, r.stats().sentPackets());
            return Arrays.copyOf(r.seqs, r.n);
        }
    }

    @Test
    void lossRateIsWithinTheBinomialBoundAndFixedByTheSeed() {
        int[] first = lossRun("7");
        int[] again = lossRun("7");
        assertTrue(Arrays.equals(first, again), "the same seed loses the same frames");
        assertTrue(!Arrays.equals(first, lossRun("8")), "another seed loses others");
        assertTrue(Arrays.equals(lossRun(null), lossRun(null)), "the default seed is fixed by namespace and device");
    }

    @Test
    void duplicatesAreCountedAndObserved() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("duplicate", "5%");
            r.set("delay", "1ms");
            r.periodic(0, 100 * US, 20_000, 64);
            r.runUntil(5 * S);
            long dup = r.stats().duplicated();
            assertBinomial(dup, 20_000, 0.05, "duplicated frames");
            assertEquals(20_000 + dup, r.n);
            int[] times = new int[20_000];
            for (int i = 0; i < r.n; i++) {
                times[r.seqs[i]]++;
                assertEquals(MS, r.delayOf(i), "a copy is delayed like the original");
            }
            long twice = Arrays.stream(times).filter(c -> c == 2).count();
            assertEquals(dup, twice, "each duplicated frame arrives exactly twice");
            assertTrue(Arrays.stream(times).allMatch(c -> c == 1 || c == 2));
        }
    }

    @Test
    void duplicateAndLossCombineAsNetemDoes() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("duplicate", "100%");
            r.periodic(0, 100 * US, 1000, 64);
            r.runUntil(S);
            assertEquals(2000, r.n, "every frame twice");
        }
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("duplicate", "100%");
            r.set("loss", "50%");
            r.periodic(0, 100 * US, 10_000, 64);
            r.runUntil(2 * S);
            // Duplicated and lost: sent once; the copy then has its own chance of loss.
            LinkEmulation.Stats st = r.stats();
            assertEquals(10_000 + st.duplicated() - st.lost(), r.n);
            assertBinomial(st.duplicated(), 10_000, 0.5, "copies made (original not lost)");
        }
    }

    @Test
    void reorderedFramesLeaveAtOnceAheadOfDelayedOnes() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.set("delay", "10ms");
            r.set("reorder", "25%");
            r.periodic(0, MS, 10_000, 64);
            r.runUntil(20 * S);
            assertEquals(10_000, r.n);
            long immediate = 0;
            int inversions = 0;
            for (int i = 0; i < r.n; i++) {
                long d = r.delayOf(i);
                assertTrue(d == 0 || d == 10 * MS, "either at once or delayed: " + d);
                if (d == 0) {
                    immediate++;
                }
                if (i > 0 && r.seqs[i] < r.seqs[i - 1]) {
                    inversions++;
                }
            }
            assertEquals(r.stats().reordered(), immediate);
            assertBinomial(immediate, 10_000, 0.25, "reordered frames");
            assertTrue(inversions > 1000, "reordered frames overtake delayed ones: " + inversions);
        }
    }

    @Test
    void reorderGapKeepsGapMinusOneDelayedFramesBetweenReorders() {
        try (Rig r = new Rig()) {
            r.pooled = false;
            r.a.knobs().set("usnet.netem.veth0", "delay 10ms reorder 50% gap 5");
            r.periodic(0, MS, 5000, 64);
            r.runUntil(20 * S);
            boolean[] early = new boolean[5000];
            for (int i = 0; i < r.n; i++) {
                early[r.seqs[i]] = r.delayOf(i) == 0;
            }
            int last = -1;
            int count = 0;
            for (int s = 0; s < 5000; s++) {
                if (early[s]) {
                    assertTrue(s - last - 1 >= 4, "frame " + s + ": at least 4 delayed since the last reorder");
                    last = s;
                    count++;
                }
            }
            assertEquals(r.stats().reordered(), count);
            assertTrue(count > 500, "reorders happen: " + count);
        }
    }

    // ---- the queue limit ----

    @Test
    void queueDropsHappenWhenAndOnlyWhenTheLimitIsExceeded() {
        for (int burst : new int[] {10, 15}) {
            try (Rig r = new Rig()) {
                r.set("rate", "1mbit");
                r.set("limit", "10");
                r.at(0, () -> {
                    for (int i = 0; i < burst; i++) {
                        r.send(i, 1500);
                    }
                });
                r.runUntil(S);
                long drops = burst - 10;
                assertEquals(10, r.n);
                assertEquals(drops, r.stats().queueDrops());
                assertEquals(drops, r.a.drops().get(DropReason.NETEM_QUEUE_FULL));
                assertEquals(drops, r.tx.stats().txDropped);
                assertEquals(10, r.stats().maxQlen());
                for (int i = 0; i < 10; i++) {
                    assertEquals(i, r.seqs[i], "the first ten are kept (tail drop)");
                    assertEquals((i + 1) * 12 * MS, r.at[i]);
                }
            }
        }
        try (Rig r = new Rig()) {
            r.set("rate", "1mbit");
            r.set("limit", "10");
            r.at(0, () -> {
                for (int i = 0; i < 10; i++) {
                    r.send(i, 1500);
                }
            });
            // The first frame leaves at 12 ms: a moment before, the queue is full; a moment after, it has room.
            r.at(12 * MS - 1, () -> r.send(10, 1500));
            r.at(12 * MS + 1, () -> r.send(11, 1500));
            r.at(12 * MS + 2, () -> r.send(12, 1500));
            r.runUntil(S);
            assertEquals(2, r.stats().queueDrops());
            assertEquals(11, r.n);
            assertEquals(11, r.seqs[10]);
        }
    }

    @Test
    void theLimitCountsFramesStillInTheirDelayAsNetemDoes() {
        try (Rig r = new Rig()) {
            r.set("delay", "100ms");
            r.set("limit", "5");
            r.periodic(0, MS, 6, 64);
            r.runUntil(S);
            assertEquals(5, r.n);
            assertEquals(1, r.stats().queueDrops());
        }
    }

    // ---- run-time changes ----

    @Test
    void aChangeAppliesToFramesSentAfterwards() {
        try (Rig r = new Rig()) {
            r.set("delay", "10ms");
            r.periodic(0, MS, 100, 64);
            r.at(50 * MS - 1, () -> r.set("delay", "20ms"));
            r.runUntil(S);
            assertEquals(100, r.n);
            for (int i = 0; i < r.n; i++) {
                assertEquals(r.seqs[i] < 50 ? 10 * MS : 20 * MS, r.delayOf(i), "frame " + r.seqs[i]);
            }
        }
    }

    @Test
    void removingTheEmulationLetsHeldFramesLeaveFirstAndInOrder() {
        try (Rig r = new Rig()) {
            r.set("delay", "20ms");
            r.at(0, () -> r.send(0, 64));
            r.at(MS, () -> r.a.knobs().set("usnet.netem.veth0", "none"));
            r.at(2 * MS, () -> r.send(1, 64));
            r.at(30 * MS, () -> r.send(2, 64));
            r.runUntil(S);
            assertEquals(3, r.n);
            assertEquals(List.of(0, 1, 2), List.of(r.seqs[0], r.seqs[1], r.seqs[2]));
            assertEquals(20 * MS, r.at[0]);
            assertEquals(20 * MS, r.at[1], "not overtaking the held frame");
            assertEquals(30 * MS, r.at[2], "nothing held: straight through");
            assertEquals(NetemParams.NONE, r.tx.netemParams());
        }
    }

    @Test
    void theTypedApiAndTheKnobsAreTheSameSettings() {
        try (Rig r = new Rig()) {
            r.tx.setNetem(NetemParams.NONE.withRate(100_000_000).withDelay(5 * MS).withLoss(0.01));
            assertEquals("rate 100mbit delay 5ms loss 1%", r.a.knobs().get("usnet.netem.veth0"));
            assertEquals("5ms", r.a.knobs().get("usnet.netem.veth0.delay"));
            r.set("delay", "7ms");
            assertEquals(7 * MS, r.tx.netemParams().delayNanos());
            assertNull(r.rx.netem(), "the other end has none");
        }
    }

    @Test
    void knobsSetBeforeTheDeviceExistsApplyWhenItArrives() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            a.knobs().set("usnet.netem.veth0.delay", "3ms");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            List<Long> at = new ArrayList<>();
            pair[1].addTap((dev, p, isTx, now) -> at.add(now));
            pair[1].setRxHandler((dev, p) -> {
                p.release();
                return true;
            });
            pair[0].transmit(frame(pair[0], pair[1], 60));
            net.run(S);
            assertEquals(List.of(3 * MS), at);
        }
    }

    // ---- held frames are never leaked ----

    @Test
    void deletingADeviceReleasesWhatItsEmulationHolds() {
        try (Rig r = new Rig()) {
            r.set("delay", "1s");
            r.periodic(0, MS, 100, 1500);
            r.runUntil(500 * MS);
            LinkEmulation ne = r.tx.netem();
            assertEquals(100, ne.queueLength());
            r.tx.delete();
            assertEquals(0, ne.queueLength());
            assertEquals(100, ne.stats().purged());
            assertEquals(100, r.a.drops().get(DropReason.DEV_DOWN));
            r.runUntil(2 * S);
            assertEquals(0, r.n);
        }
    }

    @Test
    void closingTheNamespaceReleasesHeldFrames() {
        TestNet net = new TestNet();
        NetStack a = net.ns("a");
        NetStack b = net.ns("b");
        VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
        a.knobs().set("usnet.netem.veth0", "rate 1mbit delay 1s");
        for (int i = 0; i < 50; i++) {
            pair[0].transmit(frame(pair[0], pair[1], 1500));
        }
        LinkEmulation ne = pair[0].netem();
        assertEquals(50, ne.queueLength());
        net.close();
        assertEquals(0, ne.queueLength());
        assertEquals(50, ne.stats().purged());
    }

    @Test
    void downingTheDeviceDropsHeldFramesAndLaterOnesPassAgain() {
        try (Rig r = new Rig()) {
            r.set("delay", "10ms");
            r.periodic(0, MS, 5, 64);
            r.runUntil(5 * MS);
            r.tx.setUp(false);
            assertEquals(5, r.stats().purged());
            r.tx.setUp(true);
            r.at(20 * MS, () -> r.send(5, 64));
            r.runUntil(S);
            assertEquals(1, r.n);
            assertEquals(5, r.seqs[0]);
            assertEquals(10 * MS, r.delayOf(0));
        }
    }

    @Test
    void aPeerThatWentDownMeanwhileDropsTheFrameWhenItLeaves() {
        try (Rig r = new Rig()) {
            r.set("delay", "10ms");
            r.at(0, () -> r.send(0, 64));
            r.at(5 * MS, () -> r.rx.setUp(false));
            r.runUntil(S);
            assertEquals(0, r.n);
            assertEquals(1, r.a.drops().get(DropReason.DEV_DOWN));
            assertEquals(1, r.tx.stats().txDropped);
        }
    }

    // ---- bridge ports ----

    @Test
    void aBridgePortDelaysWhatTheBridgeSendsOutOfIt() {
        try (TestNet net = new TestNet()) {
            NetStack ns = net.ns("br");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            ns.register(br);
            TestNet.Wire p1 = net.wire(ns, "p1", 0x0200_0000_0101L);
            TestNet.Wire p2 = net.wire(ns, "p2", 0x0200_0000_0102L);
            br.addPort(p1.dutEnd);
            br.addPort(p2.dutEnd);
            br.setUp(true);
            br.port(p2.dutEnd).setNetem(NetemParams.parse("delay 5ms limit 3"));
            long a = 0x0200_0000_0a01L;
            long b = 0x0200_0000_0b02L;
            p1.send(Frames.raw(a, b, 0x0800, 100));
            net.settle();
            assertEquals(0, p2.received.size(), "held by p2's emulation");
            net.run(5 * MS);
            assertEquals(1, p2.received.size());
            assertEquals(5 * MS, p2.received.get(0).at());
            p2.send(Frames.raw(b, a, 0x0800, 100));
            net.settle();
            assertEquals(1, p1.received.size(), "the other port has none");
            for (int i = 0; i < 5; i++) {
                p1.send(Frames.raw(a, b, 0x0800, 100));
            }
            net.run(10 * MS);
            assertEquals(4, p2.received.size(), "limit 3 on the port");
            assertEquals(2, br.port(p2.dutEnd).netem().stats().queueDrops());
            assertEquals(2, ns.drops().get(DropReason.NETEM_QUEUE_FULL));
        }
    }

    // ---- real time ----

    @Test
    void inRealTimeFramesLeaveNoEarlierThanTheirDelayOnNettyTimers() throws Exception {
        DefaultEventExecutor loop = new DefaultEventExecutor();
        try {
            RealTimeScheduler sched = new RealTimeScheduler(loop);
            NetStack a = new NetStack("a", sched, 1);
            NetStack b = new NetStack("b", sched, 1);
            CountDownLatch done = new CountDownLatch(20);
            List<Long> delays = new ArrayList<>();
            long[] sent = new long[20];
            List<Integer> order = new ArrayList<>();
            loop.submit(() -> {
                VethEnd[] pair = VethEnd.createPair(a, "veth0", 0x0200_0000_0001L, b, "veth1", 0x0200_0000_0002L);
                pair[0].setUp(true);
                pair[1].setUp(true);
                pair[1].addTap((dev, p, isTx, now) -> {
                    int seq = p.buf().getInt(p.start() + 14);
                    order.add(seq);
                    delays.add(now - sent[seq]);
                    done.countDown();
                });
                pair[1].setRxHandler((dev, p) -> {
                    p.release();
                    return true;
                });
                a.knobs().set("usnet.netem.veth0", "delay 2ms rate 100mbit");
                for (int i = 0; i < 20; i++) {
                    Packet p = frame(pair[0], pair[1], 1500);
                    p.buf().setInt(p.start() + 14, i);
                    sent[i] = sched.nanoTime();
                    pair[0].transmit(p);
                }
            }).sync();
            assertTrue(done.await(10, TimeUnit.SECONDS), "all frames arrive");
            loop.submit(() -> {
                a.close();
                b.close();
            }).sync();
            for (int i = 0; i < 20; i++) {
                assertEquals(i, order.get(i));
                assertTrue(delays.get(i) >= 2 * MS + 120 * US, "never early: " + delays.get(i));
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static Packet frame(VethEnd from, VethEnd to, int len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        int off = b.writerIndex();
        b.writeZero(len);
        dev.usnet.core.wire.EthernetFrame.write(b, off, to.mac(), from.mac(), ETH_P_EXPERIMENTAL);
        return p;
    }

    @Test
    void differentDevicesGetDifferentDefaultSeeds() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] p1 = net.link(a, "x0", null, b, "x1", null);
            VethEnd[] p2 = net.link(a, "y0", null, b, "y1", null);
            List<List<Integer>> got = new ArrayList<>();
            for (VethEnd[] pair : List.of(p1, p2)) {
                List<Integer> seen = new ArrayList<>();
                got.add(seen);
                pair[1].addTap((dev, p, isTx, now) -> seen.add(p.buf().getInt(p.start() + 14)));
                pair[1].setRxHandler((dev, p) -> {
                    p.release();
                    return true;
                });
                a.knobs().set("usnet.netem." + pair[0].name() + ".loss", "50%");
                for (int i = 0; i < 200; i++) {
                    Packet p = frame(pair[0], pair[1], 64);
                    p.buf().setInt(p.start() + 14, i);
                    pair[0].transmit(p);
                }
            }
            net.run(S);
            assertNotEquals(got.get(0), got.get(1));
        }
    }
}
