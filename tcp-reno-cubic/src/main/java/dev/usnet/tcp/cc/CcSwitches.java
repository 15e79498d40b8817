package dev.usnet.tcp.cc;

/**
 * The individual behaviours that differ between kernel versions; a {@link KernelPreset} sets all of them, and
 * each can be overridden on its own to combine them.
 *
 * @param ai               how tcp_cong_avoid_ai credits ACKs
 * @param ssLeftover       slow start returns the unused part of {@code acked} to additive increase (3.19+)
 * @param ssWhileLeq       slow start while cwnd &lt;= ssthresh (before 4.3) rather than cwnd &lt; ssthresh
 * @param ssCap            where slow start stops: ssthresh + 1 (before 4.3) or ssthresh
 * @param cubicCntFloor    the smallest CUBIC cnt: 1 before 4.0, 2 from 4.0
 * @param cubicIdleShift   CUBIC shifts its epoch by the idle time on CA_EVENT_TX_START (4.3+)
 */
public record CcSwitches(AiMode ai, boolean ssLeftover, boolean ssWhileLeq, SsCap ssCap, int cubicCntFloor,
                         boolean cubicIdleShift) {

    /** tcp_cong_avoid_ai variants. */
    public enum AiMode {
        /** 3.18: +1 every w+1 calls; acked has no effect. */
        PER_ACK,
        /** 3.19: cnt += acked, cwnd += cnt / w; credit from a larger w is paid out at once. */
        ACCUMULATE,
        /** 4.0+: as ACCUMULATE, but credit already at least w on entry only adds 1 and is reset. */
        GENTLE
    }

    /** Slow-start ceiling. */
    public enum SsCap { SSTHRESH_PLUS_ONE, SSTHRESH }
}
