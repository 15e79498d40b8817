package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaState;

/**
 * A connection's timers (tcp_timer.c): the retransmission timer, which like Linux's icsk_retransmit_timer serves
 * one {@link Pending} purpose at a time, and the delayed-ACK, keep-alive and TIME-WAIT timers. Also the
 * timeout state they share: the backoff exponent and the count of consecutive timeouts.
 */
final class TcpTimers {
    static final long TCP_TIMEWAIT_NANOS = 60_000_000_000L;

    /** What the retransmission timer is armed for (icsk_pending). */
    enum Pending {
        /** The retransmission timeout (ICSK_TIME_RETRANS). */
        RTO,
        /** A zero-window probe (ICSK_TIME_PROBE0). */
        PROBE0,
        /** A tail loss probe (ICSK_TIME_LOSS_PROBE). */
        LOSS_PROBE,
        /** The delay before an early retransmit (ICSK_TIME_EARLY_RETRANS). */
        EARLY_RETRANS,
        /** The loss detector's timer: RACK's reordering window (ICSK_TIME_REO_TIMEOUT). */
        REO_TIMEOUT
    }

    private final TcpSock sk;
    final SockTimer retransmit;
    final SockTimer delack;
    final SockTimer keepalive;
    final SockTimer timewait;
    private Pending pending = Pending.RTO;
    /** icsk_backoff: the exponent of the RTO and zero-window probe backoff. */
    int backoff;
    /** icsk_retransmits: timeouts in a row without progress. */
    int retransmits;

    TcpTimers(TcpSock sk) {
        this.sk = sk;
        var sched = sk.stack.scheduler();
        this.retransmit = new SockTimer(sched, this::retransmitFired);
        this.delack = new SockTimer(sched, sk.delack::timerFired);
        this.keepalive = new SockTimer(sched, sk.keepalive::timerFired);
        this.timewait = new SockTimer(sched, this::timewaitFired);
    }

    Pending pending() {
        return pending;
    }

    boolean retransmitArmed() {
        return retransmit.isArmed();
    }

    long retransmitDeadline() {
        return retransmit.deadline();
    }

    /** The retransmission timer is armed as the RTO (not as a probe): a loss probe may replace it. */
    boolean rtoArmed() {
        return pending == Pending.RTO && retransmit.isArmed();
    }

    /** tcp_rearm_rto: the RTO from now. */
    void armRto() {
        pending = Pending.RTO;
        retransmit.arm(sk.rtt.rtoNanos);
    }

    /** An RTO sooner than usual (after reneging, to forget the SACK marks). */
    void armRto(long delayNanos) {
        pending = Pending.RTO;
        retransmit.arm(delayNanos);
    }

    /** A segment went out: the RTO runs unless it already does (a zero-window probe gives way to it). */
    void ensureRto() {
        if (!retransmit.isArmed() || pending == Pending.PROBE0) {
            armRto();
        }
    }

    /** After an ACK: nothing outstanding stops the RTO (not a probe); progress restarts it. */
    void rearmAfterAck(boolean unaMoved) {
        if (sk.sb.packetsOut() == 0) {
            if (pending != Pending.PROBE0) {
                retransmit.cancel();
            }
        } else if (unaMoved) {
            armRto();
        }
    }

    /** The peer opened its window: a pending zero-window probe is not needed. */
    void windowOpened() {
        if (pending == Pending.PROBE0) {
            retransmit.cancel();
            pending = Pending.RTO;
            if (sk.sb.packetsOut() > 0) {
                armRto();
            }
        }
    }

    void armLossProbe(long timeoutNanos) {
        pending = Pending.LOSS_PROBE;
        retransmit.arm(timeoutNanos);
    }

    // How many times the loss detector armed its timer: an ACK that armed it leaves the RTO and probe alone.
    private long lossDetectionArms;

    /** The loss detector looks again in {@code delayNanos} (RACK's reordering timer). */
    void armLossDetection(long delayNanos) {
        pending = Pending.REO_TIMEOUT;
        retransmit.arm(delayNanos);
        lossDetectionArms++;
    }

    long lossDetectionArms() {
        return lossDetectionArms;
    }

    void armEarlyRetransmit(long delayNanos) {
        if (pending != Pending.EARLY_RETRANS) {
            pending = Pending.EARLY_RETRANS;
            retransmit.arm(delayNanos);
        }
    }

    /** tcp_check_probe_timer: the window is closed and nothing is in flight; probe with backoff. */
    void armProbe0() {
        if (retransmit.isArmed() && pending != Pending.PROBE0) {
            return;
        }
        pending = Pending.PROBE0;
        long when = Math.min(sk.rtt.rtoNanos << Math.min(backoff, 16), RttEstimator.TCP_RTO_MAX_NANOS);
        retransmit.arm(when);
    }

    /** An ACK acknowledged new data: the backoff is over. */
    void progress() {
        backoff = 0;
        retransmits = 0;
    }

    private void retransmitFired() {
        if (sk.state == TcpState.CLOSED) {
            return;
        }
        switch (pending) {
            case PROBE0 -> {
                pending = Pending.RTO;
                probeFired();
            }
            case LOSS_PROBE -> {
                if (sk.sb.packetsOut() > 0) {
                    sk.tlp.send();
                }
            }
            case EARLY_RETRANS -> {
                pending = Pending.RTO;
                sk.tlp.earlyRetransTimerFired();
            }
            case REO_TIMEOUT -> {
                pending = Pending.RTO;
                sk.recovery.detector().timerFired();
            }
            case RTO -> rtoFired();
        }
    }

    /** tcp_retransmit_timer: resend the head, back off, and after too many give up. */
    private void rtoFired() {
        if (sk.sb.packetsOut() == 0 || sk.sb.isEmpty()) {
            return;
        }
        TcpState state = sk.state;
        boolean synPhase = state == TcpState.SYN_SENT || state == TcpState.SYN_RECV;
        int limit = (int) sk.stack.knobs().get(state == TcpState.SYN_SENT ? TcpSysctl.SYN_RETRIES
                : state == TcpState.SYN_RECV ? TcpSysctl.SYNACK_RETRIES : TcpSysctl.RETRIES2);
        if (retransmits >= limit) {
            sk.stack.mib().inc(Mib.TcpExtTCPAbortOnTimeout);
            if (!synPhase) {
                sk.out.sendActiveReset();
            } else if (state == TcpState.SYN_SENT) {
                sk.stack.mib().inc(Mib.TcpAttemptFails);
            }
            sk.finish(TcpError.ETIMEDOUT);
            return;
        }
        if (retransmits == 0) {
            sk.stack.mib().inc(timeoutMib());
        }
        sk.stats.rtoCount++;
        if (!synPhase) {
            sk.recovery.enterLoss();
        }
        sk.retransmit.head();
        retransmits++;
        backoff++;
        sk.rtt.backoff();
        armRto();
    }

    /**
     * The counter tcp_retransmit_timer charges with the first timeout of a series (later backoffs count nothing): a
     * timeout during recovery or with SACKed data out is a failure of SACK (or NewReno) recovery, one in Loss a
     * failure of loss recovery, any other (netstat's "other TCP timeouts") TCPTimeouts.
     */
    private Mib timeoutMib() {
        CaState st = sk.cc.caState;
        boolean sack = sk.recovery.sack();
        if (st == CaState.RECOVERY || st == CaState.DISORDER || sk.sb.sackedOut() > 0) {
            return sack ? Mib.TcpExtTCPSackFailures : Mib.TcpExtTCPRenoFailures;
        }
        return st == CaState.LOSS ? Mib.TcpExtTCPLossFailures : Mib.TcpExtTCPTimeouts;
    }

    /** tcp_probe_timer: the peer's window is closed; poke it so a lost window update cannot deadlock us. */
    private void probeFired() {
        if (sk.sb.packetsOut() > 0 || sk.sendBuf.size() == 0) {
            return;
        }
        long wndLeft = sk.sendWindowLeft();
        if (wndLeft > 0) {
            // tcp_write_wakeup: a window too small for a full segment still takes what fits.
            int len = (int) Math.min(Math.min(wndLeft, sk.mssCache), sk.sendBuf.size());
            sk.out.sendNewSegment(len, sk.finQueued && !sk.finSent && len == sk.sendBuf.size());
            return;
        }
        sk.out.sendProbe();
        backoff++;
        armProbe0();
    }

    private void timewaitFired() {
        if (sk.state == TcpState.TIME_WAIT || sk.state == TcpState.FIN_WAIT2) {
            sk.finish(TcpError.NONE);
        }
    }

    /** TIME-WAIT: only the TIME-WAIT timer runs. */
    void enterTimeWait() {
        retransmit.stop();
        keepalive.stop();
        timewait.arm(TCP_TIMEWAIT_NANOS);
    }

    /** The connection is over: every timer stops for good. */
    void stopAll() {
        retransmit.stop();
        delack.stop();
        keepalive.stop();
        timewait.stop();
    }
}
