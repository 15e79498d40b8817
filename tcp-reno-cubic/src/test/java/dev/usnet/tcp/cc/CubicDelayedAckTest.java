package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** 3.18's delayed-ACK ratio: CUBIC counted ACKs and scaled cnt by the average packets per ACK. */
class CubicDelayedAckTest {

    private static CubicRun run318() {
        return CubicRun.afterLoss(KernelPreset.V3_18.switches(), 1000, 100, 70, 1000);
    }

    @Test
    void theRatioFollowsPacketsPerAckInOpenState() {
        CubicRun r = run318();
        assertEquals(32, r.cubic.delayedAck(), "2 packets per ACK in 1/16");
        for (int i = 0; i < 200; i++) {
            r.cubic.pktsAcked(r.sk, 4, -1);
        }
        assertEquals(64, r.cubic.delayedAck(), "4 packets per ACK");
        r.sk.caState = CaState.RECOVERY;
        r.cubic.pktsAcked(r.sk, 40, -1);
        assertEquals(64, r.cubic.delayedAck(), "only in Open");
        r.sk.caState = CaState.OPEN;
        for (int i = 0; i < 500; i++) {
            r.cubic.pktsAcked(r.sk, 100, -1);
        }
        assertEquals(512, r.cubic.delayedAck(), "clamped at 32 packets per ACK");
    }

    @Test
    void stretchAcksSpeedUpPerAckGrowth() {
        // Sanity vector at 500 ms: cnt 7 packets = 3 ACKs of 2, or 1 ACK of 4.
        CubicRun two = run318().at(0).update(70, 1).at(500).update(70, 1);
        assertEquals(3, two.cubic.cnt());
        CubicRun four = run318();
        for (int i = 0; i < 200; i++) {
            four.cubic.pktsAcked(four.sk, 4, -1);
        }
        four.at(0).update(70, 1).at(500).update(70, 1);
        assertEquals(1, four.cubic.cnt());
    }

    @Test
    void perPacketVersionsHaveNoRatio() {
        CubicRun r = CubicRun.afterLoss(KernelPreset.V3_19.switches(), 1000, 100, 70, 1000);
        for (int i = 0; i < 50; i++) {
            r.cubic.pktsAcked(r.sk, 4, -1);
        }
        assertEquals(32, r.cubic.delayedAck(), "untouched");
        r.at(0).update(70, 1).at(500).update(70, 1);
        assertEquals(7, r.cubic.cnt());
        // Per-ACK counting is the 3.18 switch on its own, delayed-ACK scaling included.
        CcSwitches perAck = KernelPreset.V3_19.switches().withOverride(CcSwitches.CUBIC_PER_PACKET, "false");
        CubicRun p = CubicRun.afterLoss(perAck, 1000, 100, 70, 1000).at(0).update(70, 1).at(500).update(70, 1);
        assertEquals(3, p.cubic.cnt());
        // Per-ACK counting with the once-per-jiffy rule (no kernel had both) does not rescale within a jiffy.
        p.update(70, 1).update(70, 1);
        assertEquals(3, p.cubic.cnt());
    }
}
