package dev.usnet.tcp;

/**
 * The retransmission timeout from RTT samples (tcp_rtt_estimator, tcp_set_rto): RFC 6298's smoothed RTT and
 * variance, with Linux's floor — RTO = SRTT + max(4 * RTTVAR, rto_min), at most 120 s — and the minimum RTT seen.
 */
final class RttEstimator {
    static final long TCP_TIMEOUT_INIT_NANOS = 1_000_000_000L;
    static final long TCP_RTO_MAX_NANOS = 120_000_000_000L;
    /** TCP_TIMEOUT_FALLBACK: RFC 6298 (5.7)'s RTO for a connection whose handshake gave no RTT sample. */
    static final long TCP_TIMEOUT_FALLBACK_NANOS = 3_000_000_000L;

    private final Tcp tcp;
    long srttUs;
    long rttvarUs;
    long minRttUs = Long.MAX_VALUE;
    long rtoNanos = TCP_TIMEOUT_INIT_NANOS;

    RttEstimator(Tcp tcp) {
        this.tcp = tcp;
    }

    /** Takes one RTT sample in microseconds (at least 1). */
    void sample(long rttUs) {
        if (rttUs < minRttUs) {
            minRttUs = rttUs;
        }
        if (srttUs == 0) {
            srttUs = rttUs;
            rttvarUs = rttUs / 2;
        } else {
            long err = Math.abs(srttUs - rttUs);
            rttvarUs = (3 * rttvarUs + err) / 4;
            srttUs = (7 * srttUs + rttUs) / 8;
        }
        long rtoMinUs = tcp.rtoMinNanos() / 1000;
        long rtoUs = srttUs + Math.max(4 * rttvarUs, rtoMinUs);
        rtoNanos = Math.min(rtoUs * 1000, TCP_RTO_MAX_NANOS);
    }

    /**
     * The handshake is over (tcp_init_metrics): without an RTT sample from it — a SYN or SYN-ACK was retransmitted,
     * so Karn's rule forbids one — the connection starts from the conservative 3 s rather than the backed-off RTO.
     */
    void handshakeDone() {
        if (srttUs == 0) {
            rttvarUs = TCP_TIMEOUT_FALLBACK_NANOS / 1000;
            rtoNanos = TCP_TIMEOUT_FALLBACK_NANOS;
        }
    }

    /** Exponential backoff after a timeout (the RTO doubles, up to 120 s). */
    void backoff() {
        rtoNanos = Math.min(rtoNanos << 1, TCP_RTO_MAX_NANOS);
    }

    /** The smoothed RTT in nanoseconds (0 before the first sample). */
    long srttNanos() {
        return srttUs * 1000;
    }
}
