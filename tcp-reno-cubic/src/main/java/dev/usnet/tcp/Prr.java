package dev.usnet.tcp;

import dev.usnet.tcp.cc.CcSock;

/**
 * Proportional rate reduction (RFC 6937), as tcp_cwnd_reduction does it: during a reduction, cwnd is set on every
 * ACK so that what is sent tracks what the receiver got, in proportion ssthresh / prior_cwnd, and in slow start
 * back up to ssthresh once the pipe has drained below it.
 */
final class Prr {
    private final TcpSock sk;
    /** prr_delivered: packets the receiver got since the reduction started. */
    long delivered;
    /** prr_out: packets sent since the reduction started. */
    long out;

    Prr(TcpSock sk) {
        this.sk = sk;
    }

    /** A reduction starts (tcp_init_cwnd_reduction). */
    void start() {
        delivered = 0;
        out = 0;
    }

    /** {@code pcount} packets went out during the reduction. */
    void sent(long pcount) {
        out += pcount;
    }

    /** Sets cwnd for an ACK that delivered {@code newlyDelivered} packets; {@code advanced}: snd_una moved. */
    void cwndReduction(long newlyDelivered, boolean advanced) {
        CcSock cc = sk.cc;
        if (newlyDelivered <= 0 || cc.priorCwnd == 0) {
            return;
        }
        long inflight = sk.sb.inFlight();
        long delta = cc.sndSsthresh - inflight;
        delivered += newlyDelivered;
        long sndcnt;
        if (delta < 0) {
            long dividend = cc.sndSsthresh * delivered + cc.priorCwnd - 1;
            sndcnt = dividend / cc.priorCwnd - out;
        } else if (advanced) {
            sndcnt = Math.min(delta, Math.max(delivered - out, newlyDelivered) + 1);
        } else {
            sndcnt = Math.min(delta, newlyDelivered);
        }
        // Allow the fast retransmit itself even when the formula says zero.
        sndcnt = Math.max(sndcnt, out > 0 ? 0 : 1);
        cc.sndCwnd = inflight + sndcnt;
    }
}
