package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Reno as a CongestionOps: the doc's vectors through the ops, ssthresh, undo, the cwnd-limited gate. */
class RenoTest {

    private static String congAvoid(KernelPreset k, long cwnd, long cnt, long ssthresh, long acked) {
        CcSock.Standalone sk = new CcSock.Standalone(k.switches(), cwnd, ssthresh);
        sk.sndCwndCnt = cnt;
        Reno reno = new Reno();
        reno.init(sk);
        reno.congAvoid(sk, 1, acked);
        return sk.toString();
    }

    @Test
    void docVectorsPerPreset() {
        String[] expect = {"11/0", "11/2", "11/2", "10/3", "10/3"};
        KernelPreset[] ks = KernelPreset.values();
        for (int i = 0; i < ks.length; i++) {
            assertEquals(expect[i], congAvoid(ks[i], 8, 0, 10, 5), ks[i] + " (8, 0, 10, 5)");
            assertEquals(expect[i], congAvoid(ks[i], 10, 0, 10, 3), ks[i] + " (10, 0, 10, 3)");
        }
    }

    @Test
    void noGrowthWhenNotCwndLimited() {
        CcSock.Standalone sk = new CcSock.Standalone(KernelPreset.V4_3.switches(), 8, 10);
        sk.cwndLimited = false;
        new Reno().congAvoid(sk, 1, 5);
        assertEquals("8/0", sk.toString());
    }

    @Test
    void ssthreshHalvesButNotBelowTwo() {
        Reno reno = new Reno();
        long[][] v = {{100, 50}, {11, 5}, {4, 2}, {3, 2}, {1, 2}};
        for (long[] c : v) {
            assertEquals(c[1], reno.ssthresh(new CcSock.Standalone(KernelPreset.V4_3.switches(), c[0], 0)), "cwnd " + c[0]);
        }
    }

    @Test
    void undoIsTwiceTheReducedSsthresh() {
        CcSock.Standalone sk = new CcSock.Standalone(KernelPreset.V4_0.switches(), 20, 0);
        Reno reno = new Reno();
        sk.sndSsthresh = reno.ssthresh(sk);
        sk.sndCwnd = 12;
        assertEquals(20, reno.undoCwnd(sk));
        sk.sndCwnd = 30;
        assertEquals(30, reno.undoCwnd(sk));
        assertEquals("reno", reno.name());
    }
}
