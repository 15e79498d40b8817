package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** CA_EVENT_TX_START after idle: 4.3 shifts the epoch, earlier versions let it run on. */
class CubicIdleShiftTest {

    /**
     * Loss at 100, cwnd 70; the epoch starts at 0 and the flow sends until 1 s (cnt 4 there); then 10 s idle;
     * TX_START at 11 s, then the first ACK of the new burst in the same jiffy. Returns "K target cnt" after it.
     */
    private static String afterIdle(CcSwitches sw) {
        CubicRun r = CubicRun.afterLoss(sw, 1000, 100, 70, 1000).at(0).update(70, 1).at(1000).update(70, 1);
        r.sk.lastSendNanos = 1_000_000_000L;
        r.at(11_000);
        r.cubic.cwndEvent(r.sk, CaEvent.TX_START);
        return r.update(70, 1).kTargetCnt();
    }

    @Test
    void onlyFourThreeFollowsTheCurveAcrossIdle() {
        // 4.3: the epoch moved by 10 s, so the curve is where it was at 1 s (target 87, cnt 4).
        assertEquals("4316 87 4", afterIdle(KernelPreset.V4_3.switches()));
        // Before: 11 s into the epoch the target is far ahead and cnt sits at the floor.
        assertEquals("4316 225 2", afterIdle(KernelPreset.V4_0.switches()));
        assertEquals("4316 225 1", afterIdle(KernelPreset.V3_19.switches()));
        assertEquals("4316 225 1", afterIdle(KernelPreset.V3_18.switches()));
    }

    @Test
    void theSwitchAloneTurnsItOnAndOff() {
        assertEquals("4316 87 4", afterIdle(KernelPreset.V4_0.switches().withOverride(CcSwitches.CUBIC_IDLE_SHIFT, "1")));
        assertEquals("4316 225 2", afterIdle(KernelPreset.V4_3.switches().withOverride(CcSwitches.CUBIC_IDLE_SHIFT, "0")));
    }

    @Test
    void theShiftedEpochNeverLiesAfterNow() {
        CubicRun r = CubicRun.afterLoss(KernelPreset.V4_3.switches(), 1000, 100, 70, 1000).at(2000).update(70, 1);
        r.sk.lastSendNanos = 0; // last send before the epoch started: the idle time exceeds the epoch's age
        r.at(3000);
        r.cubic.cwndEvent(r.sk, CaEvent.TX_START);
        assertEquals(r.sk.tcpTimeStamp(), r.cubic.epochStart());
    }

    @Test
    void nothingWithoutAnEpochOrIdleTimeOrForOtherEvents() {
        CubicRun r = CubicRun.afterLoss(KernelPreset.V4_3.switches(), 1000, 100, 70, 1000).at(5000);
        r.sk.lastSendNanos = 0;
        r.cubic.cwndEvent(r.sk, CaEvent.TX_START);
        assertEquals(0, r.cubic.epochStart(), "no epoch running: nothing to shift");

        r.at(0).update(70, 1);
        int start = r.cubic.epochStart();
        r.at(5000);
        r.sk.lastSendNanos = 5_000_000_000L;
        r.cubic.cwndEvent(r.sk, CaEvent.TX_START);
        assertEquals(start, r.cubic.epochStart(), "sent in this jiffy already: no idle time");
        r.sk.lastSendNanos = 0;
        r.cubic.cwndEvent(r.sk, CaEvent.CWND_RESTART);
        assertEquals(start, r.cubic.epochStart());
        r.cubic.cwndEvent(r.sk, CaEvent.TX_START);
        assertEquals(start + 5000, r.cubic.epochStart());
    }
}
