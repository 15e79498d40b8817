package dev.usnet.tcp.cc;

/**
 * A CUBIC connection driven by hand: the loss at Wmax, the recovery in which the RTT sample arrives, then
 * bictcp_update calls at chosen instants with cwnd held where the test puts it.
 */
final class CubicRun {
    final CcSock.Standalone sk;
    final Cubic cubic;

    private CubicRun(CcSwitches sw, int hz, long cwnd, CubicParams params) {
        sk = new CcSock.Standalone(sw, cwnd, 0x7fff_ffffL);
        sk.hz = hz;
        cubic = new Cubic(params);
        cubic.init(sk);
    }

    static CubicRun fresh(CcSwitches sw, int hz, long cwnd) {
        return new CubicRun(sw, hz, cwnd, CubicParams.DEFAULT);
    }

    /** A loss at {@code wmax} (0: no loss yet), an RTT sample of {@code rttUs} during recovery, now cwnd. */
    static CubicRun afterLoss(CcSwitches sw, int hz, long wmax, long cwnd, long rttUs) {
        return afterLoss(sw, hz, wmax, cwnd, rttUs, CubicParams.DEFAULT);
    }

    static CubicRun afterLoss(CcSwitches sw, int hz, long wmax, long cwnd, long rttUs, CubicParams params) {
        CubicRun r = new CubicRun(sw, hz, wmax > 0 ? wmax : cwnd, params);
        if (wmax > 0) {
            r.sk.sndSsthresh = r.cubic.ssthresh(r.sk);
        }
        r.sk.sndCwnd = cwnd;
        r.sk.caState = CaState.RECOVERY; // so 3.18's delayed-ACK ratio keeps its initial value
        if (rttUs > 0) {
            r.cubic.pktsAcked(r.sk, 1, rttUs);
        }
        r.sk.caState = CaState.OPEN;
        return r;
    }

    CubicRun at(long ms) {
        sk.nowNanos = ms * 1_000_000L;
        return this;
    }

    /** bictcp_update with cwnd set to {@code cwnd} and {@code acked} packets acknowledged. */
    CubicRun update(long cwnd, long acked) {
        sk.sndCwnd = cwnd;
        cubic.update(sk, acked);
        return this;
    }

    /** "K target cnt" as usnet tcp cubic prints it. */
    String kTargetCnt() {
        return cubic.bicK() + " " + cubic.target() + " " + cubic.cnt();
    }
}
