package dev.usnet.tcp;

import dev.usnet.tcp.cc.CaEvent;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;

/**
 * Whether the flow is limited by cwnd or by the application, and what that does to cwnd (tcp_cwnd_validate,
 * tcp_is_cwnd_limited, RFC 7661's idea): cwnd only grows while it is the limit, an application-limited window
 * shrinks toward what was used, and after idle it restarts (RFC 2861, tcp_cwnd_restart).
 */
final class CwndValidation {
    private final TcpSock sk;
    private long maxPacketsOut;
    private long maxPacketsSeq;
    // is_cwnd_limited: the last window filled cwnd.
    boolean isCwndLimited;
    private long sndCwndUsed;
    private long sndCwndStampNanos;

    CwndValidation(TcpSock sk) {
        this.sk = sk;
    }

    /** snd_cwnd_stamp: cwnd was set now. */
    void stamp() {
        sndCwndStampNanos = sk.stack.now();
    }

    /** tcp_cwnd_validate: remembers whether the last window was limited by cwnd. */
    void validate(boolean cwndLimited) {
        CcSock cc = sk.cc;
        long packetsOut = sk.sb.packetsOut();
        if (!Seq.before(sk.sndUna, maxPacketsSeq) || packetsOut > maxPacketsOut) {
            maxPacketsOut = packetsOut;
            maxPacketsSeq = sk.sndNxt;
            isCwndLimited = cwndLimited;
        }
        if (isCwndLimitedNow()) {
            sndCwndUsed = 0;
            sndCwndStampNanos = sk.stack.now();
        } else {
            if (packetsOut > sndCwndUsed) {
                sndCwndUsed = packetsOut;
            }
            if (sk.tcp.slowStartAfterIdle()
                    && sk.stack.now() - sndCwndStampNanos >= sk.rtt.rtoNanos && cc.caState == CaState.OPEN) {
                // tcp_cwnd_application_limited: shrink cwnd toward what the application used.
                long winUsed = Math.max(sndCwndUsed, 2);
                if (winUsed < cc.sndCwnd) {
                    cc.sndSsthresh = Math.max(cc.sndSsthresh, (cc.sndCwnd >> 1) + (cc.sndCwnd >> 2));
                    cc.sndCwnd = (cc.sndCwnd + winUsed) >> 1;
                }
                sndCwndUsed = 0;
                sndCwndStampNanos = sk.stack.now();
            }
        }
    }

    /** tcp_is_cwnd_limited: in slow start, cwnd below twice the most ever in flight; else the last window filled cwnd. */
    boolean isCwndLimitedNow() {
        CcSock cc = sk.cc;
        boolean slowStart = cc.sw.ssWhileLeq() ? cc.sndCwnd <= cc.sndSsthresh : cc.sndCwnd < cc.sndSsthresh;
        if (slowStart) {
            return cc.sndCwnd < 2 * maxPacketsOut;
        }
        return isCwndLimited;
    }

    /** tcp_cwnd_restart: halves cwnd for every RTO of idle, down to the initial window; snd_cwnd_cnt survives. */
    void restart(long idleNanos) {
        CcSock cc = sk.cc;
        long restartCwnd = Math.min(sk.tcp.initCwnd(), cc.sndCwnd);
        cc.sndSsthresh = cc.currentSsthresh();
        sk.ops.cwndEvent(cc, CaEvent.CWND_RESTART);
        long cwnd = cc.sndCwnd;
        long rto = sk.rtt.rtoNanos;
        long delta = idleNanos - rto;
        while (delta > 0 && cwnd > restartCwnd) {
            cwnd >>= 1;
            delta -= rto;
        }
        cc.sndCwnd = Math.max(cwnd, restartCwnd);
        sndCwndStampNanos = sk.stack.now();
        sndCwndUsed = 0;
        sk.traceEvent("restart");
    }
}
