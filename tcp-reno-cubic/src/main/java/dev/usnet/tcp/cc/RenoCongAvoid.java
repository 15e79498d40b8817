package dev.usnet.tcp.cc;

/**
 * tcp_reno_cong_avoid for a cwnd-limited flow, with slow start (tcp_slow_start) as each kernel version does it.
 */
public final class RenoCongAvoid {
    private RenoCongAvoid() {}

    /** Whether the flow is in slow start (tcp_in_slow_start): cwnd &lt; ssthresh from 4.3, &lt;= before. */
    public static boolean inSlowStart(CwndState s, CcSwitches sw) {
        return sw.ssWhileLeq() ? s.sndCwnd <= s.sndSsthresh : s.sndCwnd < s.sndSsthresh;
    }

    /** tcp_slow_start: grows cwnd by {@code acked} up to the cap; returns what is left for additive increase. */
    public static long slowStart(CwndState s, long acked, CcSwitches sw) {
        long cwnd = s.sndCwnd + acked;
        long cap = sw.ssCap() == CcSwitches.SsCap.SSTHRESH ? s.sndSsthresh : s.sndSsthresh + 1;
        if (cwnd > cap) {
            cwnd = cap;
        }
        // The leftover is computed against the capped but unclamped window, as the kernel does.
        long left = acked - (cwnd - s.sndCwnd);
        s.sndCwnd = Math.min(cwnd, s.sndCwndClamp);
        return sw.ssLeftover() ? Math.max(0, left) : 0;
    }

    /** One cong_avoid call with {@code acked} newly acknowledged packets. */
    public static void congAvoid(CwndState s, long acked, CcSwitches sw) {
        if (inSlowStart(s, sw)) {
            acked = slowStart(s, acked, sw);
            if (acked == 0) {
                return;
            }
        }
        AdditiveIncrease.apply(s, s.sndCwnd, acked, sw.ai());
    }

    /** Reno's ssthresh after a loss: max(cwnd / 2, 2). */
    public static long ssthresh(CwndState s) {
        return Math.max(s.sndCwnd >> 1, 2);
    }
}
