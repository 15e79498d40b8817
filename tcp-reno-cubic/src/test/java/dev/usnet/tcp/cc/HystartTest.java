package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** HyStart in CUBIC: leaving slow start on rising delay or on a long ACK train, before any loss. */
class HystartTest {
    private static final long INFINITE_SSTHRESH = 0x7fff_ffffL;

    /** A connection in its first slow start at cwnd 20, HyStart's round 1 starting at 0 ms. */
    private static final class Conn {
        final CcSock.Standalone sk;
        final Cubic cubic = new Cubic();

        Conn(CcSwitches sw) {
            sk = new CcSock.Standalone(sw, 20, INFINITE_SSTHRESH);
            sk.sndNxt = 10_000;
            cubic.init(sk); // round 1 ends when 10000 is acknowledged
        }

        void sample(long ms, long rttUs) {
            sk.nowNanos = ms * 1_000_000L;
            cubic.pktsAcked(sk, 1, rttUs);
        }

        /** Round 1 sets delay_min = 10 ms; then a new round starts at 100 ms (snd_nxt 20000), which it returns. */
        long secondRound(long expectDelayMin) {
            return secondRound(10_000, expectDelayMin);
        }

        /** As {@link #secondRound(long)} with round 1's RTT samples at {@code rttUs}. */
        long secondRound(long rttUs, long expectDelayMin) {
            for (int i = 1; i <= 9; i++) {
                sample(3L * i, rttUs); // 3 ms apart: not an ACK train
            }
            assertEquals(expectDelayMin, cubic.delayMin());
            sk.sndNxt = 20_000;
            sk.nowNanos = 100_000_000L;
            cubic.congAvoid(sk, 10_001, 1); // past end_seq: hystart reset, and slow start 20 -> 21
            assertEquals(21, sk.sndCwnd);
            return 100;
        }
    }

    private final Conn c = new Conn(KernelPreset.V4_0.switches());
    private final CcSock.Standalone sk = c.sk;
    private final Cubic cubic = c.cubic;

    private void sample(long ms, long rttUs) {
        c.sample(ms, rttUs);
    }

    private long secondRound() {
        return c.secondRound(80); // 10 ms in ms × 8
    }

    @Test
    void risingDelayEndsSlowStart() {
        long t = secondRound();
        // Eight samples of 15 ms: their minimum (120) exceeds delay_min + clamp(80 / 8, 4 ms, 16 ms) = 80 + 32.
        for (int i = 1; i <= 8; i++) {
            sample(t + 3L * i, 15_000);
        }
        assertEquals(INFINITE_SSTHRESH, sk.sndSsthresh, "the comparison happens on the sample after the eighth");
        sample(t + 27, 15_000);
        assertEquals(CubicParams.HYSTART_DELAY, cubic.hystartFound());
        assertEquals(21, sk.sndSsthresh);
    }

    @Test
    void delayWithinTheMarginDoesNot() {
        long t = secondRound();
        for (int i = 1; i <= 12; i++) {
            sample(t + 3L * i, 14_000); // 112 = 80 + 32 exactly: not above
        }
        assertEquals(0, cubic.hystartFound());
        assertEquals(INFINITE_SSTHRESH, sk.sndSsthresh);
    }

    @Test
    void theMarginIsAnEighthOfDelayMinBetweenFourAndSixteenMs() {
        // delay_min 80 ms: margin delay_min / 8 = 10 ms, so 90 ms is not above 80 + 10 ms...
        long t = c.secondRound(80_000, 640);
        for (int i = 1; i <= 9; i++) {
            sample(t + 3L * i, 90_000);
        }
        assertEquals(0, cubic.hystartFound());
        // ...91 ms is.
        Conn d = new Conn(KernelPreset.V4_0.switches());
        long u = d.secondRound(80_000, 640);
        for (int i = 1; i <= 9; i++) {
            d.sample(u + 3L * i, 91_000);
        }
        assertEquals(CubicParams.HYSTART_DELAY, d.cubic.hystartFound());
    }

    @Test
    void aLongAckTrainEndsSlowStart() {
        // ACKs 1 ms apart (within hystart_ack_delta 2 ms) from the round start; the train counts once it is
        // longer than delay_min / 2 = 5 ms.
        for (int ms = 1; ms <= 5; ms++) {
            sample(ms, 10_000);
        }
        assertEquals(0, cubic.hystartFound());
        sample(6, 10_000);
        assertEquals(CubicParams.HYSTART_ACK_TRAIN, cubic.hystartFound());
        assertEquals(20, sk.sndSsthresh);
    }

    @Test
    void afterHystartFourThreeIsInCongestionAvoidanceAtOnceFourZeroTakesOneMoreStep() {
        Conn k43 = new Conn(KernelPreset.V4_3.switches());
        for (int ms = 1; ms <= 6; ms++) {
            k43.sample(ms, 10_000);
        }
        k43.sk.nowNanos = 7_000_000L;
        k43.cubic.congAvoid(k43.sk, 5000, 4);
        assertEquals("20/4", k43.sk.toString(), "4.3: cwnd < ssthresh is false, additive increase only (cnt 20)");

        for (int ms = 1; ms <= 6; ms++) {
            sample(ms, 10_000);
        }
        sk.nowNanos = 7_000_000L;
        cubic.congAvoid(sk, 5000, 4);
        assertEquals("21/3", sk.toString(), "4.0: cwnd <= ssthresh still slow-starts to ssthresh + 1, 3 left over to AI");
    }

    @Test
    void notBelowTheLowWindowNorWithHystartOff() {
        sk.sndCwnd = 15;
        for (int ms = 1; ms <= 10; ms++) {
            sample(ms, 10_000);
        }
        assertEquals(0, cubic.hystartFound());
        assertEquals(80, cubic.delayMin(), "delay_min is tracked regardless");

        CcSock.Standalone s = new CcSock.Standalone(KernelPreset.V4_0.switches(), 20, INFINITE_SSTHRESH);
        Cubic off = new Cubic(new CubicParams(true, 717, 0, 41, true, false, 3, 16, 2));
        off.init(s);
        for (int ms = 1; ms <= 10; ms++) {
            s.nowNanos = ms * 1_000_000L;
            off.pktsAcked(s, 1, 10_000);
        }
        assertEquals(0, off.hystartFound());
        assertEquals(INFINITE_SSTHRESH, s.sndSsthresh);
    }

    @Test
    void theMicrosecondClockResolvesWhatMillisecondsRoundAway() {
        // 14.1 ms is 112 in ms × 8 (not above 80 + 32) but 14100 µs is above 10000 + 4000.
        long t = secondRound();
        for (int i = 1; i <= 9; i++) {
            sample(t + 3L * i, 14_100);
        }
        assertEquals(0, cubic.hystartFound());

        Conn us = new Conn(KernelPreset.V4_0.switches().withOverride(CcSwitches.CUBIC_HYSTART_US, "true"));
        long u = us.secondRound(10_000); // µs
        for (int i = 1; i <= 9; i++) {
            us.sample(u + 3L * i, 14_100);
        }
        assertEquals(CubicParams.HYSTART_DELAY, us.cubic.hystartFound());
        assertEquals(21, us.sk.sndSsthresh);
    }

    @Test
    void samplesInTheFirstSecondOfAnEpochAreIgnored() {
        CubicRun r = CubicRun.afterLoss(KernelPreset.V4_0.switches(), 1000, 100, 70, 10_000).at(0).update(70, 1);
        assertEquals(80, r.cubic.delayMin());
        r.at(999);
        r.cubic.pktsAcked(r.sk, 1, 5_000);
        assertEquals(80, r.cubic.delayMin(), "still the queue of before the loss");
        r.at(1000);
        r.cubic.pktsAcked(r.sk, 1, 5_000);
        assertEquals(40, r.cubic.delayMin());
        r.cubic.pktsAcked(r.sk, 1, -1);
        assertEquals(40, r.cubic.delayMin(), "no RTT sample");
        r.cubic.pktsAcked(r.sk, 1, 10);
        assertEquals(1, r.cubic.delayMin(), "below 1/8 ms counts as 1");
        assertTrue(r.cubic.inEpoch());
    }
}
