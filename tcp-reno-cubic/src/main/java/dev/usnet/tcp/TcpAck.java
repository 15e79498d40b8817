package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;

/**
 * What an incoming acknowledgment does (tcp_ack): the send window (RFC 9293's SND.WL1/WL2 rule), SACK
 * tagging, removing what is acknowledged from the retransmission queue, an RTT sample (Karn's rule, or the
 * echoed timestamp), congestion control's growth or the reduction under way, loss detection and the timers.
 */
final class TcpAck {
    private final TcpSock sk;
    private final Scoreboard.Acked acked = new Scoreboard.Acked();

    TcpAck(TcpSock sk) {
        this.sk = sk;
    }

    /**
     * tcp_ack for a synchronized connection. Returns false when the segment acknowledges data never sent (it is
     * answered with an ACK and dropped).
     */
    boolean ack(TcpSegment seg, TcpOptions o, long now) {
        long ack = seg.ack();
        if (Seq.after(ack, sk.sndNxt)) {
            sk.out.sendAck();
            return false;
        }
        if (Seq.before(ack, sk.sndUna)) {
            // An old duplicate ACK: nothing to learn except possibly SACK information.
            sk.recovery.detector().sackTagOld(o, ack);
            return true;
        }
        process(ack, seg, o, now);
        return true;
    }

    /** The heart of tcp_ack once the ACK is known to be acceptable. */
    void process(long ack, TcpSegment seg, TcpOptions o, long now) {
        Scoreboard sb = sk.sb;
        LossRecovery recovery = sk.recovery;
        long priorUna = sk.sndUna;
        sk.ackReceived(now);
        boolean windowUpdate = updateWindow(seg, ack, seg.seq());
        sb.startAck();
        long newlySacked = recovery.detector().sackTag(o, ack);
        long fackets = recovery.facketsOut();
        sb.cleanAcked(ack, sk.mssCache, acked);
        long pktsAcked = acked.packets;
        if (recovery.sack() && acked.reord < fackets) {
            // tcp_clean_rtx_queue: a non-retransmitted hole got filled, that is reordering.
            recovery.updateReordering(fackets - acked.reord, false);
        }
        recovery.detector().cumulativeAcked(pktsAcked);
        long ackedBytes = Seq.sub(ack, priorUna);
        boolean advanced = ackedBytes > 0;
        boolean unaMoved = advanced;
        if (advanced) {
            sk.unaAdvanced(ack);
            sb.keepMarksInWindow(ack);
            sk.stats.bytesAcked += ackedBytes;
            sk.timers.progress();
        }
        long seqRttUs = -1;
        long caRttUs = -1;
        if (acked.hasTxStamp()) {
            seqRttUs = (now - acked.firstTxNanos) / 1000;
            caRttUs = (now - acked.lastTxNanos) / 1000;
        } else if (acked.retrans && sk.tsOk && o.hasTimestamp && o.tsEcr != 0) {
            // Karn: no send stamp is trustworthy after a retransmission, but the echoed timestamp is.
            long ms = Seq.sub(sk.tsNow(), o.tsEcr);
            if (ms >= 0 && ms < 1L << 31) {
                seqRttUs = ms * 1000;
                caRttUs = seqRttUs;
            }
        }
        if (seqRttUs >= 0) {
            sk.rtt.sample(Math.max(1, seqRttUs));
        }
        CcSock cc = sk.cc;
        if (pktsAcked > 0) {
            sk.ops.pktsAcked(cc, pktsAcked, caRttUs >= 0 ? Math.max(1, caRttUs) : -1);
        }
        boolean isDupAck = !advanced && !windowUpdate && seg.payloadLength() == 0
                && (seg.flags() & (TcpSegment.SYN | TcpSegment.FIN)) == 0 && sb.packetsOut() > 0;
        long dupDelivered = isDupAck ? recovery.detector().dupAck() : 0;
        // A SYN is not data: acknowledging it does not grow cwnd (FLAG_DATA_ACKED stays clear).
        long delivered = pktsAcked - acked.syn - acked.sacked + newlySacked + dupDelivered;
        advanced = advanced && pktsAcked > acked.syn;
        if (unaMoved && sk.undo.spurious(o)) {
            if (sk.undo.partial()) {
                // tcp_try_undo_partial: the hole was filled by a delayed original, so reordering is that deep.
                recovery.updateReordering(fackets + pktsAcked, true);
            }
            sk.undo.undo();
        }
        boolean reneged = recovery.detector().reneged(unaMoved);
        TcpState state = sk.state;
        TcpTimers timers = sk.timers;
        long detectionArms = timers.lossDetectionArms();
        if (state == TcpState.ESTABLISHED || state.ordinal() >= TcpState.FIN_WAIT1.ordinal()) {
            if (!reneged) {
                recovery.fastRetransAlert(advanced, unaMoved, isDupAck, newlySacked);
            }
            congControl(ack, delivered, advanced);
        }
        if (sk.tlp.pending()) {
            sk.tlp.processAck(ack, unaMoved, isDupAck, newlySacked);
        }
        // Re-arm the retransmission timer from this ACK (tcp_rearm_rto), then maybe a tail loss probe — unless the
        // loss detector armed its own timer on this ACK (RACK clears FLAG_SET_XMIT_TIMER).
        if (timers.lossDetectionArms() == detectionArms) {
            timers.rearmAfterAck(unaMoved);
            if (timers.rtoArmed()) {
                sk.tlp.schedule();
            }
        }
        if (reneged) {
            // Recovery cannot trust the scoreboard: an early RTO forgets the SACK marks.
            sk.stack.mib().inc(Mib.TcpExtTCPSACKReneging);
            timers.armRto(Math.max(sk.rtt.srttNanos() / 16, 10_000_000L));
        }
        if (unaMoved) {
            sk.finAckedTransitions();
            sk.checkSpace();
        }
        if (sk.trace != null) {
            sk.trace.record(now, cc, sk.rtt.srttUs, sb.inFlight(), advanced ? "ack" : "dupack");
        }
    }

    /**
     * tcp_ack_update_window with tcp_may_update_window (RFC 9293's SND.WL1/WL2 rule): a newer segment sets the
     * window; one as old as the last update may only grow it, or close it to zero. The window of a SYN-ACK is
     * never scaled (RFC 7323). Returns true when the window changed.
     */
    private boolean updateWindow(TcpSegment seg, long ack, long seq) {
        long nwin = seg.window();
        if ((seg.flags() & TcpSegment.SYN) == 0) {
            nwin <<= sk.sndWscale;
        }
        if (Seq.after(ack, sk.sndUna) || Seq.after(seq, sk.sndWl1)
                || seq == sk.sndWl1 && (nwin > sk.sndWnd || nwin == 0)) {
            boolean changed = sk.sndWnd != nwin;
            sk.updateSendWindow(seq, nwin);
            if (changed && nwin > 0) {
                sk.timers.windowOpened();
            }
            return changed;
        }
        return false;
    }

    /** tcp_cong_control: PRR while in a reduction, otherwise let the algorithm grow cwnd. */
    private void congControl(long ack, long delivered, boolean advanced) {
        CcSock cc = sk.cc;
        CaState st = cc.caState;
        if (st == CaState.RECOVERY || st == CaState.CWR) {
            sk.prr.cwndReduction(delivered, advanced);
            return;
        }
        if (!advanced || delivered <= 0) {
            return;
        }
        cc.cwndLimited = sk.cwv.isCwndLimitedNow();
        sk.ops.congAvoid(cc, ack, delivered);
    }
}
