package dev.usnet.tcp.cc;

/**
 * TCP Reno (tcp_reno_congestion_ops, "reno"): slow start, then one packet per cwnd acknowledged; halve on loss.
 * The kernel-version differences live in {@link RenoCongAvoid} and {@link AdditiveIncrease}. Reno keeps no
 * per-connection state, but one instance per connection is still the rule, as for every {@link CongestionOps}.
 */
public final class Reno implements CongestionOps {
    @Override
    public String name() {
        return "reno";
    }

    /** tcp_reno_ssthresh: max(cwnd / 2, 2). */
    @Override
    public long ssthresh(CcSock sk) {
        return RenoCongAvoid.ssthresh(sk);
    }

    /** tcp_reno_cong_avoid: grows only a cwnd-limited flow (tcp_is_cwnd_limited), as the connection computed it. */
    @Override
    public void congAvoid(CcSock sk, long ack, long acked) {
        if (!sk.cwndLimited) {
            return;
        }
        RenoCongAvoid.congAvoid(sk, acked, sk.sw);
    }

    /**
     * Undo for 3.18–4.x: Reno had no undo_cwnd then, and tcp_undo_cwnd_reduction fell back to
     * max(cwnd, ssthresh × 2) with the reduced ssthresh still in place — call this before restoring
     * prior_ssthresh. (From 4.13 Linux uses max(cwnd, prior_cwnd) instead.)
     */
    @Override
    public long undoCwnd(CcSock sk) {
        return Math.max(sk.sndCwnd, sk.sndSsthresh << 1);
    }
}
