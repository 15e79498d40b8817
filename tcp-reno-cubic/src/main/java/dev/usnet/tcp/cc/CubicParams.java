package dev.usnet.tcp.cc;

/**
 * The module parameters of tcp_cubic ({@code /sys/module/tcp_cubic/parameters/*}); the defaults are Linux's,
 * unchanged from 3.18 to today.
 *
 * @param fastConvergence  after a loss below the previous Wmax, remember an even lower Wmax to give way faster
 * @param beta             multiplicative decrease on loss, in 1/1024 (717 ≈ 0.7)
 * @param initialSsthresh  ssthresh set at init, 0 = leave the stack's "infinite" one; only used without HyStart
 * @param bicScale         C of the cubic function in 1/1024 (41 ≈ 0.04; × 10 gives cube_rtt_scale, C = 0.4)
 * @param tcpFriendliness  never grow slower than Reno would (an estimated Reno cwnd bounds cnt)
 * @param hystart          leave slow start early by HyStart
 * @param hystartDetect    which HyStart detectors run: {@link #HYSTART_ACK_TRAIN} | {@link #HYSTART_DELAY}
 * @param hystartLowWindow HyStart only runs from this cwnd on
 * @param hystartAckDeltaMs ACKs closer than this belong to one ACK train
 */
public record CubicParams(boolean fastConvergence, int beta, long initialSsthresh, int bicScale,
                          boolean tcpFriendliness, boolean hystart, int hystartDetect, int hystartLowWindow,
                          int hystartAckDeltaMs) {

    /** The ACK-train detector (bit 0 of hystart_detect). */
    public static final int HYSTART_ACK_TRAIN = 0x1;
    /** The delay-increase detector (bit 1 of hystart_detect). */
    public static final int HYSTART_DELAY = 0x2;

    /** Linux's defaults. */
    public static final CubicParams DEFAULT =
            new CubicParams(true, 717, 0, 41, true, true, HYSTART_ACK_TRAIN | HYSTART_DELAY, 16, 2);

    public CubicParams {
        // The kernel accepts any int here; these are the ranges in which its arithmetic means something.
        if (beta <= 0 || beta >= 1024) {
            throw new IllegalArgumentException("cubic beta must be in 1..1023 (1/1024 units), got " + beta);
        }
        if (bicScale <= 0) {
            throw new IllegalArgumentException("cubic bic_scale must be positive, got " + bicScale);
        }
        if (initialSsthresh < 0 || hystartLowWindow < 0 || hystartAckDeltaMs < 0) {
            throw new IllegalArgumentException("cubic initial_ssthresh, hystart_low_window and hystart_ack_delta must"
                    + " not be negative");
        }
        if ((hystartDetect & ~(HYSTART_ACK_TRAIN | HYSTART_DELAY)) != 0) {
            throw new IllegalArgumentException("cubic hystart_detect takes bits 1 (ACK train) and 2 (delay), got "
                    + hystartDetect);
        }
    }
}
