package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** bictcp_recalc_ssthresh, undo and the Loss state: the same in every preset. */
class CubicLossTest {

    @Test
    void ssthreshAndWmaxWithFastConvergenceInEveryPreset() {
        for (KernelPreset k : KernelPreset.values()) {
            CcSock.Standalone sk = new CcSock.Standalone(k.switches(), 100, 0x7fff_ffffL);
            Cubic c = new Cubic();
            c.init(sk);
            assertEquals(70, c.ssthresh(sk), k + ": 100 × 717 / 1024");
            assertEquals(100, c.lastMaxCwnd(), k.label());
            assertEquals(100, c.lossCwnd(), k.label());
            // Lost again below Wmax: Wmax = 80 × 1741 / 2048 = 68, ssthresh 80 × 717 / 1024 = 56.
            sk.sndCwnd = 80;
            assertEquals(56, c.ssthresh(sk), k.label());
            assertEquals(68, c.lastMaxCwnd(), k.label());
            // Above Wmax: no fast convergence.
            sk.sndCwnd = 90;
            assertEquals(63, c.ssthresh(sk), k.label());
            assertEquals(90, c.lastMaxCwnd(), k.label());
            // Never below 2.
            sk.sndCwnd = 2;
            assertEquals(2, c.ssthresh(sk), k.label());
            sk.sndCwnd = 1;
            assertEquals(2, c.ssthresh(sk), k.label());
        }
    }

    @Test
    void withoutFastConvergenceWmaxIsTheLossCwnd() {
        CcSock.Standalone sk = new CcSock.Standalone(KernelPreset.V4_3.switches(), 100, 0x7fff_ffffL);
        Cubic c = new Cubic(new CubicParams(false, 717, 0, 41, true, true, 3, 16, 2));
        c.init(sk);
        c.ssthresh(sk);
        sk.sndCwnd = 80;
        c.ssthresh(sk);
        assertEquals(80, c.lastMaxCwnd());
    }

    @Test
    void lossEndsTheEpochAndTheNextUpdateStartsOneWithANewK() {
        CubicRun r = CubicRun.afterLoss(KernelPreset.V4_0.switches(), 1000, 100, 70, 1000).at(0).update(70, 1);
        assertTrue(r.cubic.inEpoch());
        r.sk.sndCwnd = 80;
        r.at(2000);
        r.cubic.ssthresh(r.sk); // Wmax 68 (fast convergence)
        assertFalse(r.cubic.inEpoch());
        r.update(56, 1);
        // K = cubic_root(cube_factor × (68 - 56)), origin 68.
        assertEquals(CubicRoot.of((1L << 40) / 410 * 12), r.cubic.bicK());
        assertEquals(68, r.cubic.originPoint());
    }

    @Test
    void undoReturnsToTheLossCwnd() {
        CcSock.Standalone sk = new CcSock.Standalone(KernelPreset.V4_3.switches(), 100, 0x7fff_ffffL);
        Cubic c = new Cubic();
        c.init(sk);
        sk.sndSsthresh = c.ssthresh(sk);
        sk.sndCwnd = 70;
        assertEquals(100, c.undoCwnd(sk));
        sk.sndCwnd = 120;
        assertEquals(120, c.undoCwnd(sk));
    }

    @Test
    void rtoForgetsTheCurveButRecoveryDoesNot() {
        CubicRun r = CubicRun.afterLoss(KernelPreset.V4_3.switches(), 1000, 100, 70, 1000).at(0).update(70, 1);
        r.cubic.setState(r.sk, CaState.RECOVERY);
        assertEquals(100, r.cubic.lastMaxCwnd());
        assertTrue(r.cubic.inEpoch());
        r.cubic.setState(r.sk, CaState.LOSS);
        assertEquals(0, r.cubic.lastMaxCwnd());
        assertEquals(0, r.cubic.delayMin());
        assertFalse(r.cubic.inEpoch());
        assertEquals(100, r.cubic.lossCwnd(), "loss_cwnd survives bictcp_reset, for undo");
        // With Wmax forgotten, the 20 cap of a fresh connection applies again.
        r.at(1000).update(70, 1);
        assertEquals(20, r.cubic.cnt());
    }

    @Test
    void initialSsthreshOnlyWithoutHystart() {
        CcSock.Standalone sk = new CcSock.Standalone(KernelPreset.V4_3.switches(), 10, 0x7fff_ffffL);
        new Cubic(new CubicParams(true, 717, 50, 41, true, true, 3, 16, 2)).init(sk);
        assertEquals(0x7fff_ffffL, sk.sndSsthresh);
        new Cubic(new CubicParams(true, 717, 50, 41, true, false, 3, 16, 2)).init(sk);
        assertEquals(50, sk.sndSsthresh);
    }
}
