package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.EVER_RETRANS;
import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaState;

/**
 * RACK (RFC 8985, Linux 4.4+ with net.ipv4.tcp_recovery=1, the default since): losses are judged by time, not
 * by counting. RACK remembers the most recently sent segment that was delivered (SACKed or cumulatively
 * acknowledged) and its RTT; a segment sent before it and still not delivered a reordering window (reo_wnd) after
 * that RTT has elapsed is lost. Segments not yet old enough arm the reordering timer, which looks again when the
 * first of them would expire. A retransmission that is itself lost is found the same way, since it carries its
 * own send time.
 *
 * <p>reo_wnd is min_rtt/4 times a step count, at most SRTT. Until reordering has been seen it is 0 in Recovery
 * and Loss, and once DupThresh segments are SACKed (unless net.ipv4.tcp_recovery has 0x4), so RACK is then as
 * quick as RFC 6675. Each D-SACK, at most once per round trip, widens it one step (unless 0x2), and the steps
 * persist for 16 recoveries after the last widening.
 */
final class RackDetector extends SackBasedDetector {
    // Linux's TCP_RACK_RECOVERY_THRESH: recoveries a widened window outlives.
    private static final int RECOVERY_THRESH = 16;
    // TCP_TIMEOUT_MIN: slack added to the reordering timer so it fires after the window, not at its edge.
    private static final long TIMER_SLACK_NANOS = 2_000_000L;

    private final LossRecovery recovery;
    // rack.mstamp, rack.end_seq: send time and end of the most recently sent delivered segment; rack.rtt_us.
    private long xmitNanos = Long.MIN_VALUE;
    private long endSeq;
    private long rttUs;
    // rack.advanced: something was delivered since the last detection pass.
    private boolean advanced;
    // rack.reo_wnd_steps, reo_wnd_persist, dsack_seen; when the window last widened.
    private int reoWndSteps = 1;
    private int reoWndPersist;
    private boolean dsackSeen;
    private long lastStepNanos = Long.MIN_VALUE;

    RackDetector(TcpSock sk, LossRecovery recovery) {
        super(sk);
        this.recovery = recovery;
    }

    /** Whether segment (t1, seq1) was sent after segment (t2, seq2): later, or at the same time further on. */
    private static boolean sentAfter(long t1, long t2, long seq1, long seq2) {
        return t1 > t2 || t1 == t2 && Seq.after(seq1, seq2);
    }

    /**
     * tcp_rack_advance: a delivered retransmission whose RTT is below min_rtt was the original's delivery (the
     * retransmission cannot have made the round trip yet), so it tells nothing about when it was sent.
     */
    @Override
    public void delivered(Packet s, int bits) {
        long tx = TcpSkbCb.txNanos(s);
        long rtt = (sk.stack.now() - tx) / 1000;
        if ((bits & (RETRANS | EVER_RETRANS)) != 0 && rtt < sk.rtt.minRttUs) {
            return;
        }
        advanced = true;
        rttUs = rtt;
        long end = TcpSkbCb.endSeq(s);
        if (xmitNanos == Long.MIN_VALUE || sentAfter(tx, xmitNanos, end, endSeq)) {
            xmitNanos = tx;
            endSeq = end;
        }
    }

    /** tcp_time_to_recover with RACK: only marked losses start recovery; RACK's window does DupThresh's work. */
    @Override
    public boolean enoughDupAcks() {
        return false;
    }

    /** RACK marks what is lost itself; entering recovery marks nothing more. */
    @Override
    public void recoveryStarts(Scoreboard sb) {}

    @Override
    public void recoveryEnded(boolean undone) {
        if (undone) {
            reoWndPersist = Math.min(RECOVERY_THRESH, reoWndPersist + 1);
        } else if (reoWndPersist > 0) {
            reoWndPersist--;
        }
    }

    @Override
    public boolean allowsEarlyRetransmit() {
        return false;
    }

    @Override
    public void recoveryAck(boolean advanced) {
        markLosses();
    }

    /** tcp_rack_update_reo_wnd then tcp_rack_mark_lost: looks only when something new was delivered. */
    @Override
    public void markLosses() {
        updateReoWnd();
        if (!advanced) {
            return;
        }
        advanced = false;
        long waitNanos = detectLoss();
        if (waitNanos > 0) {
            sk.timers.armLossDetection(Math.min(waitNanos + TIMER_SLACK_NANOS, sk.rtt.rtoNanos));
        }
    }

    /**
     * tcp_rack_reo_timeout: some segment's window has passed. What is lost now is retransmitted at once; outside
     * Recovery that starts an episode (with one segment's worth of PRR credit).
     */
    @Override
    public void timerFired() {
        long priorInFlight = sb.inFlight();
        detectLoss();
        if (sb.inFlight() != priorInFlight) {
            if (sk.cc.caState.ordinal() < CaState.RECOVERY.ordinal()) {
                recovery.enterRecovery();
                sk.prr.cwndReduction(1, false);
            }
            sk.retransmit.xmitQueue();
        }
        if (!sk.timers.rtoArmed() && sb.packetsOut() > 0) {
            sk.timers.armRto();
        }
    }

    /** tcp_rack_reo_wnd, in µs. */
    long reoWndUs() {
        if (recovery.reordSeen() == 0) {
            if (sk.cc.caState.ordinal() >= CaState.RECOVERY.ordinal()) {
                return 0;
            }
            if (sb.sackedOut() >= recovery.reordering()
                    && (recovery.switches().recovery() & LossSwitches.RACK_NO_DUPTHRESH) == 0) {
                return 0;
            }
        }
        long minRtt = sk.rtt.minRttUs == Long.MAX_VALUE ? 0 : sk.rtt.minRttUs;
        return Math.min((minRtt >> 2) * reoWndSteps, sk.rtt.srttUs);
    }

    /**
     * tcp_rack_detect_loss: every segment not delivered and sent before the RACK segment is lost once its RTT
     * plus reo_wnd has passed; returns how long until the first of the others expires (0: none waits).
     */
    private long detectLoss() {
        if (xmitNanos == Long.MIN_VALUE) {
            return 0;
        }
        long now = sk.stack.now();
        long reoWndNanos = reoWndUs() * 1000;
        long waitNanos = 0;
        for (int k = 0; k < sb.size(); k++) {
            Packet s = sb.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & SACKED) != 0 || (bits & LOST) != 0 && (bits & RETRANS) == 0) {
                // Delivered, or already waiting for its retransmission.
                continue;
            }
            long tx = TcpSkbCb.txNanos(s);
            if (!sentAfter(xmitNanos, tx, endSeq, TcpSkbCb.endSeq(s))) {
                if ((bits & EVER_RETRANS) == 0) {
                    // New data goes out in sequence order: everything further on was sent later still.
                    break;
                }
                continue;
            }
            long remaining = rttUs * 1000 + reoWndNanos - (now - tx);
            if (remaining <= 0) {
                sb.markLostAgain(s);
            } else {
                waitNanos = Math.max(waitNanos, remaining);
            }
        }
        return waitNanos;
    }

    /**
     * tcp_rack_update_reo_wnd: a D-SACK shows a retransmission was spurious, so the window widens one step —
     * at most once per round trip: a D-SACK for a segment sent before the last widening is the same round's.
     */
    private void updateReoWnd() {
        if ((recovery.switches().recovery() & LossSwitches.RACK_STATIC_REO_WND) != 0) {
            return;
        }
        if (sb.lastAckDsack()) {
            dsackSeen = true;
        }
        if (dsackSeen && lastStepNanos != Long.MIN_VALUE && xmitNanos < lastStepNanos) {
            dsackSeen = false;
        }
        if (dsackSeen) {
            reoWndSteps = Math.min(0xff, reoWndSteps + 1);
            dsackSeen = false;
            lastStepNanos = sk.stack.now();
            reoWndPersist = RECOVERY_THRESH;
        } else if (reoWndPersist == 0) {
            reoWndSteps = 1;
        }
    }

    @Override
    public boolean countsEveryReordering() {
        return true;
    }

    @Override
    public Mib reorderMib() {
        return Mib.TcpExtTCPSACKReorder;
    }
}
