package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import org.junit.jupiter.api.Test;

/** bictcp_update: the cubic curve, its jiffy quantization, the cnt floor and cap, the update limits, TCP friendliness. */
class CubicCurveTest {
    private static final CcSwitches K318 = KernelPreset.V3_18.switches();
    private static final CcSwitches K319 = KernelPreset.V3_19.switches();
    private static final CcSwitches K40 = KernelPreset.V4_0.switches();
    private static final CcSwitches K43 = KernelPreset.V4_3.switches();

    /** The epoch starts at 0 ms; "K target cnt" at {@code ms}. */
    private static String curve(CcSwitches sw, int hz, long wmax, long cwnd, long rttUs, long ms) {
        return CubicRun.afterLoss(sw, hz, wmax, cwnd, rttUs).at(0).update(cwnd, 1).at(ms).update(cwnd, 1).kTargetCnt();
    }

    @Test
    void sanityVectorOfTheDoc() {
        // 4.0, HZ 1000, loss at 100, cwnd held at 70, delay_min 1 ms.
        for (CcSwitches sw : new CcSwitches[] {K319, K40, K43}) {
            assertEquals("4316 80 7", curve(sw, 1000, 100, 70, 1000, 500), sw.toString());
            assertEquals("4316 87 4", curve(sw, 1000, 100, 70, 1000, 1000), sw.toString());
        }
    }

    @Test
    void threeEighteenScalesCntByTheInitialDelayedAckRatioOfTwo() {
        // (7 << 4) / 32 = 3 and (4 << 4) / 32 = 2: per-ACK counting expects two packets per ACK.
        assertEquals("4316 80 3", curve(K318, 1000, 100, 70, 1000, 500));
        assertEquals("4316 87 2", curve(K318, 1000, 100, 70, 1000, 1000));
    }

    @Test
    void timeIsQuantizedToJiffiesAndDelayMinRoundedUpToOne() {
        // Wmax 10000, cwnd 7000, K = 20033. At 50 ms: HZ 1000 gives t = 51 jiffies = 52/1024 s; HZ 250 gives
        // 12 + 1 jiffies = 53/1024 s; HZ 100 gives 5 + 1 jiffies = 61/1024 s (1 ms of delay_min becomes 10 ms).
        assertEquals("20033 7026 269", curve(K40, 1000, 10_000, 7000, 1000, 50));
        assertEquals("20033 7026 269", curve(K40, 250, 10_000, 7000, 1000, 50));
        assertEquals("20033 7030 233", curve(K40, 100, 10_000, 7000, 1000, 50));
        // Within one jiffy nothing moves: 59 ms is still jiffy 5 at HZ 100.
        assertEquals("20033 7030 233", curve(K40, 100, 10_000, 7000, 1000, 59));
        // At 1 s the three clocks are 1025, 1028 and 1034 / 1024 s: three different targets.
        assertEquals("20033 7440 15", curve(K40, 1000, 10_000, 7000, 1000, 1000));
        assertEquals("20033 7441 15", curve(K40, 250, 10_000, 7000, 1000, 1000));
        assertEquals("20033 7443 15", curve(K40, 100, 10_000, 7000, 1000, 1000));
    }

    @Test
    void beforeTheFirstLossCntIsAtMostTwenty() {
        // No Wmax: the curve starts flat at cwnd (K = 0) and would grow by ~nothing; the cap makes it +5% per RTT.
        CubicRun r = CubicRun.afterLoss(K40, 1000, 0, 100, 1000).at(0).update(100, 1).at(1000).update(100, 1);
        assertEquals("0 100 20", r.kTargetCnt());
        // After a loss at the same cwnd the cap is gone and cnt is 100 × cwnd.
        CubicRun l = CubicRun.afterLoss(K40, 1000, 100, 100, 1000).at(0).update(100, 1).at(1000).update(100, 1);
        assertEquals("0 100 10000", l.kTargetCnt());
    }

    @Test
    void cntFloorWhenTheTargetRunsFarAhead() {
        // 20 s into the epoch the target is ~1675 for cwnd 70: cwnd / (target - cwnd) = 0, so the floor decides.
        assertEquals("4316 1675 1", curve(K318, 1000, 100, 70, 1000, 20_000));
        assertEquals("4316 1675 1", curve(K319, 1000, 100, 70, 1000, 20_000));
        assertEquals("4316 1675 2", curve(K40, 1000, 100, 70, 1000, 20_000));
        assertEquals("4316 1675 2", curve(K43, 1000, 100, 70, 1000, 20_000));
        assertEquals("4316 1675 1", curve(K40.withOverride(CcSwitches.CUBIC_CNT_FLOOR, "1"), 1000, 100, 70, 1000, 20_000));
        assertEquals("4316 1675 2", curve(K319.withOverride(CcSwitches.CUBIC_CNT_FLOOR, "2"), 1000, 100, 70, 1000, 20_000));
    }

    @Test
    void threeEighteenSkipsUpdatesForHzOver32WhileCwndIsUnchanged() {
        CubicRun r = CubicRun.afterLoss(K318, 1000, 10_000, 7000, 1000);
        assertEquals("20033 7003 1166", r.at(0).update(7000, 1).kTargetCnt()); // 7000 / 3 = 2333, halved
        assertEquals("20033 7003 1166", r.at(31).update(7000, 1).kTargetCnt()); // 31 <= 1000 / 32: skipped
        assertEquals("20033 7017 205", r.at(32).update(7000, 1).kTargetCnt());
        // A changed cwnd is recomputed at once, even in the same jiffy (target below cwnd: 100 × cwnd, halved).
        assertEquals("20033 7017 355000", r.at(32).update(7100, 1).kTargetCnt());
    }

    @Test
    void fromThreeNineteenTheCurveIsEvaluatedOncePerJiffy() {
        CubicRun r = CubicRun.afterLoss(K40, 1000, 10_000, 7000, 1000);
        assertEquals("20033 7003 2333", r.at(0).update(7000, 1).kTargetCnt());
        assertEquals("20033 7017 411", r.at(31).update(7000, 1).kTargetCnt()); // no HZ/32 rule any more
        assertEquals("20033 7017 411", r.at(32).update(7000, 1).kTargetCnt());
        // Same jiffy: even a changed cwnd keeps the cnt of this jiffy.
        assertEquals("20033 7017 411", r.at(32).update(7100, 1).kTargetCnt());
        assertEquals("20033 7018 710000", r.at(33).update(7100, 1).kTargetCnt());
    }

    @Test
    void tcpFriendlinessCapsCntPerPacketAndPerAck() {
        // Loss at 100, cwnd 100: the curve is flat (K = 0, cnt 100 × cwnd), but Reno would have grown by one
        // after cwnd × 15 / 8 = 187 packets, so cnt is capped at cwnd / (101 - 100) = 100.
        CubicRun p = CubicRun.afterLoss(K319, 1000, 100, 100, 0).at(0).update(100, 200);
        assertEquals("0 100 100", p.kTargetCnt());
        assertEquals(101, p.cubic.tcpCwnd());
        assertEquals(13, p.cubic.ackCnt());

        // 3.18 counts ACKs, and the HZ/32 rule skips friendliness too: 201 ACKs in one jiffy leave cnt alone...
        CubicRun a = CubicRun.afterLoss(K318, 1000, 100, 100, 0).at(0);
        for (int i = 0; i < 201; i++) {
            a.update(100, 1);
        }
        assertEquals("0 100 5000", a.kTargetCnt());
        assertEquals(201, a.cubic.ackCnt());
        // ...until the update runs again, which then caps (100, halved by the delayed-ACK ratio).
        assertEquals("0 100 50", a.at(40).update(100, 1).kTargetCnt());
        assertEquals(101, a.cubic.tcpCwnd());

        CubicParams noFriendliness = new CubicParams(true, 717, 0, 41, false, true, 3, 16, 2);
        CubicRun n = CubicRun.afterLoss(K319, 1000, 100, 100, 0, noFriendliness).at(0).update(100, 200);
        assertEquals("0 100 10000", n.kTargetCnt());
    }

    @Test
    void theCubeWrapsAtSixtyFourBitsLikeTheKernels() {
        // 400 s into an epoch |t - K| = 405285 / 1024 s, and 410 × offs^3 exceeds 2^64: the kernel's u64 wraps.
        CubicRun r = CubicRun.afterLoss(K40, 1000, 100, 70, 1000).at(0).update(70, 1).at(400_000).update(70, 1);
        long offs = (400_001L * 1024 / 1000) - 4316;
        BigInteger cube = BigInteger.valueOf(410).multiply(BigInteger.valueOf(offs).pow(3));
        assertTrue(cube.bitLength() > 64);
        long wrapped = cube.mod(BigInteger.ONE.shiftLeft(64)).shiftRight(40).longValueExact();
        assertEquals(100 + wrapped, r.cubic.target());
        assertTrue(r.cubic.target() < 100 + cube.shiftRight(40).longValueExact());
    }

    @Test
    void congAvoidGrowsByTheCurveOnlyWhenCwndLimited() {
        CubicRun r = CubicRun.afterLoss(K40, 1000, 100, 70, 1000);
        r.sk.sndSsthresh = 69; // out of slow start
        r.sk.cwndLimited = false;
        r.at(500);
        r.cubic.congAvoid(r.sk, 1, 1);
        assertEquals(70, r.sk.sndCwnd);
        assertTrue(!r.cubic.inEpoch(), "an application-limited ACK does not even start the epoch");
        r.sk.cwndLimited = true;
        // cnt 7 at 500 ms: seven single-packet ACKs grow cwnd by one.
        r.at(0);
        r.cubic.congAvoid(r.sk, 1, 1);
        r.sk.sndCwndCnt = 0;
        r.at(500);
        for (int i = 0; i < 6; i++) {
            r.cubic.congAvoid(r.sk, 1, 1);
        }
        assertEquals(7, r.cubic.cnt());
        assertEquals("70/6", r.sk.toString());
        r.cubic.congAvoid(r.sk, 1, 1);
        assertEquals("71/0", r.sk.toString());
    }
}
