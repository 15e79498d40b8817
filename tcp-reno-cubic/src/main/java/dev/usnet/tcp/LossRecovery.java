package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaEvent;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;

/**
 * The sender's congestion state machine (tcp_fastretrans_alert): Open, Disorder, CWR, Recovery and Loss, when a
 * detected loss starts an episode, how cwnd is cut once per episode (handing the ACKs to {@link Prr}) and restored
 * after it. What counts as evidence of a loss is the {@link LossDetector}'s, chosen in {@link #chooseDetector}.
 * Owns the loss state of the connection: the reordering degree, high_seq, and whether FACK and early retransmit
 * are still allowed.
 */
final class LossRecovery {
    /** Linux's tcp_max_reordering: the most reordering detection raises the degree to. */
    static final long MAX_REORDERING = 300;

    private final TcpSock sk;
    private final Scoreboard sb;
    private final LossSwitches switches;
    private LossDetector detector;
    // tp->reordering: how many segments may arrive out of order before a hole counts as lost (DupThresh).
    private long reordering;
    // tp->reord_seen: reordering was detected at least once (RACK widens its window from then on).
    private long reordSeen;
    // high_seq: snd_nxt when the current episode started.
    private long highSeq;
    // Reordering was seen: FACK (tcp_disable_fack) and early retransmit are off for the connection.
    private boolean fackOff;
    private boolean earlyRetransOff;
    // tp->frto: F-RTO is judging the current RTO; this ACK sends new data instead of retransmissions (step 2b).
    private boolean frto;
    private boolean frtoNewData;

    LossRecovery(TcpSock sk) {
        this.sk = sk;
        this.sb = sk.sb;
        var knobs = sk.stack.knobs();
        this.switches = TcpSysctl.lossSwitches(knobs);
        this.reordering = knobs.get(TcpSysctl.REORDERING);
        chooseDetector();
    }

    /**
     * The one place a detector is chosen: NewReno without SACK; with SACK, RACK when net.ipv4.tcp_recovery has
     * it, else FACK while net.ipv4.tcp_fack is on and no reordering switched it off, else RFC 6675. Called when
     * the handshake settles SACK and when reordering switches FACK off.
     */
    void chooseDetector() {
        if (!sk.sackOk) {
            detector = new NewRenoDetector(sk, this);
        } else if (switches.rack()) {
            detector = new RackDetector(sk, this);
        } else if (switches.fack() && !fackOff) {
            detector = new FackDetector(sk, this);
        } else {
            detector = new Rfc6675Detector(sk, this);
        }
    }

    LossDetector detector() {
        return detector;
    }

    LossSwitches switches() {
        return switches;
    }

    /** Whether SACK drives recovery (tcp_is_sack). */
    boolean sack() {
        return detector.sack();
    }

    long reordering() {
        return reordering;
    }

    long reordSeen() {
        return reordSeen;
    }

    long highSeq() {
        return highSeq;
    }

    /** RFC 5827 early retransmit may run: the knob allows it, the detector needs it, no reordering was seen. */
    boolean earlyRetransAllowed() {
        return switches.earlyRetransmit() && detector.allowsEarlyRetransmit() && !earlyRetransOff;
    }

    /** F-RTO holds retransmissions back while this ACK sends new data (RFC 5682 step 2b). */
    boolean frtoSendsNewData() {
        return frtoNewData;
    }

    /**
     * tcp_fastretrans_alert: moves between Open, Disorder, Recovery and Loss and marks lost segments.
     * {@code advanced}: the ACK acknowledged new data; {@code unaMoved}: snd_una moved; {@code newlySacked}:
     * packets it SACKed.
     */
    void fastRetransAlert(boolean advanced, boolean unaMoved, boolean isDupAck, long newlySacked) {
        CcSock cc = sk.cc;
        frtoNewData = false;
        if (sk.undo.dsackUndoDue()) {
            sk.undo.undoDsack();
        }
        CaState st = cc.caState;
        if (st == CaState.RECOVERY && renoHoldsRecovery()) {
            // tcp_try_undo_recovery without SACK: an ACK of exactly high_seq keeps Recovery (the duplicate-ACK count
            // starts again) until something above it is ACKed, so that duplicates of this episode's ACKs cannot
            // start a second, false fast retransmit.
            sb.removeRenoSacks(Long.MAX_VALUE);
            return;
        }
        if (sb.packetsOut() == 0 && st != CaState.OPEN) {
            // Everything is acknowledged: whatever reduction was running is over.
            if (st == CaState.RECOVERY || st == CaState.CWR) {
                endCwndReduction();
            }
            sk.setCaState(CaState.OPEN);
            return;
        }
        switch (st) {
            case RECOVERY -> {
                if (!Seq.before(sk.sndUna, highSeq)) {
                    endCwndReduction();
                    detector.recoveryEnded(false);
                    sk.setCaState(CaState.OPEN);
                    break;
                }
                detector.recoveryAck(advanced);
            }
            case LOSS -> {
                if (frto && frtoAck(unaMoved, isDupAck, newlySacked)) {
                    break;
                }
                if (!Seq.before(sk.sndUna, highSeq)) {
                    sk.setCaState(CaState.OPEN);
                    break;
                }
                detector.markLosses();
            }
            default -> {
                detector.markLosses();
                if (timeToRecover()) {
                    enterRecovery();
                } else if (sk.tlp.earlyRetransEligible()) {
                    sk.tlp.armEarlyRetransmit();
                    if (st == CaState.OPEN) {
                        sk.setCaState(CaState.DISORDER);
                    }
                } else if (sb.sackedOut() > 0 || sb.retransOut() > 0 || isDupAck) {
                    if (st == CaState.OPEN) {
                        sk.setCaState(CaState.DISORDER);
                    }
                } else if (st == CaState.DISORDER) {
                    sk.setCaState(CaState.OPEN);
                }
            }
        }
    }

    /**
     * tcp_update_reordering: data arrived {@code metric} segments out of order. A degree above the one assumed
     * raises it (fewer segments are then judged lost) and is counted by what detected it — the timestamps of a
     * partial undo, or the detector (with RACK every detection is counted, as 4.15+ do) — and FACK is switched off
     * for the connection (so a later detection counts as SACK's); any reordering switches early retransmit off and
     * counts as seen.
     */
    void updateReordering(long metric, boolean ts) {
        if (metric > 0 && metric <= reordering && detector.countsEveryReordering()) {
            sk.stack.mib().inc(ts ? Mib.TcpExtTCPTSReorder : detector.reorderMib());
        }
        if (metric > reordering) {
            reordering = Math.min(MAX_REORDERING, metric);
            sk.stack.mib().inc(ts ? Mib.TcpExtTCPTSReorder : detector.reorderMib());
            if (!fackOff) {
                fackOff = true;
                if (detector instanceof FackDetector) {
                    chooseDetector();
                }
            }
        }
        if (metric > 0) {
            earlyRetransOff = true;
            reordSeen++;
        }
    }

    /**
     * tcp_process_loss's F-RTO part (RFC 5682, the SACK-enhanced version): after the RTO resent snd_una, an ACK
     * of data never retransmitted proves the timeout spurious (undo); the first ACK that only moves snd_una sends
     * new data instead of more retransmissions, so the ACK after it can tell; a duplicate ACK or a SACK after new
     * data went out shows the loss was real, and recovery goes on as usual. Returns true when the ACK is done.
     */
    private boolean frtoAck(boolean unaMoved, boolean isDupAck, long newlySacked) {
        if (sb.origDelivered()) {
            frto = false;
            sk.undo.undoSpuriousRto();
            return true;
        }
        if (Seq.after(sk.sndNxt, highSeq)) {
            if (newlySacked > 0 || isDupAck) {
                frto = false;
            }
        } else if (unaMoved && Seq.before(sk.sndUna, highSeq)) {
            highSeq = sk.sndNxt;
            if (sk.sendBuf.size() > 0 && sk.sendWindowLeft() > 0) {
                frtoNewData = true;
                return true;
            }
            frto = false;
        }
        return false;
    }

    /** fackets_out: segments from snd_una to the end of the highest SACKed one (0 with nothing SACKed). */
    long facketsOut() {
        if (sb.sackedOut() == 0 || !Seq.after(sb.highSackedEnd(), sk.sndUna)) {
            return 0;
        }
        return (Seq.sub(sb.highSackedEnd(), sk.sndUna) + sk.mssCache - 1) / sk.mssCache;
    }

    /** tcp_time_to_recover: a loss is already marked, or the detector's duplicate-ACK evidence suffices. */
    boolean timeToRecover() {
        return sb.lostOut() > 0 || detector.enoughDupAcks();
    }

    /** Fast retransmit: cwnd is reduced and the first hole is marked lost (tcp_enter_recovery). */
    void enterRecovery() {
        sk.stack.mib().inc(detector.recoveryMib());
        initCwndReduction();
        sk.setCaState(CaState.RECOVERY);
        sk.retransmit.startEpisode();
        detector.recoveryStarts(sb);
    }

    /** tcp_init_cwnd_reduction: the loss halves (or beta-reduces) the window once per episode. */
    void initCwndReduction() {
        CcSock cc = sk.cc;
        highSeq = sk.sndNxt;
        sk.tlp.cancel();
        cc.sndCwndCnt = 0;
        cc.priorCwnd = cc.sndCwnd;
        cc.priorSsthresh = cc.sndSsthresh;
        sk.prr.start();
        cc.sndSsthresh = sk.ops.ssthresh(cc);
        sk.undo.startEpisode();
        sk.traceEvent("recovery");
    }

    /** tcp_end_cwnd_reduction: cwnd settles at ssthresh. */
    void endCwndReduction() {
        CcSock cc = sk.cc;
        if (cc.sndSsthresh < 0x7fff_ffffL) {
            cc.sndCwnd = cc.sndSsthresh;
            sk.cwv.stamp();
        }
    }

    /** tcp_enter_loss: after an RTO everything not SACKed is presumed lost and cwnd restarts from one. */
    void enterLoss() {
        CcSock cc = sk.cc;
        CaState st = cc.caState;
        // F-RTO judges a timeout that starts a new episode, or one of a series on the same snd_una.
        frto = switches.frto() > 0 && (st.ordinal() < CaState.RECOVERY.ordinal() || sk.timers.retransmits > 0);
        frtoNewData = false;
        if (st.ordinal() <= CaState.DISORDER.ordinal() || !Seq.after(highSeq, sk.sndUna)
                || st == CaState.LOSS && sk.timers.retransmits == 0) {
            cc.priorSsthresh = cc.currentSsthresh();
            cc.priorCwnd = cc.sndCwnd;
            cc.sndSsthresh = sk.ops.ssthresh(cc);
            sk.ops.cwndEvent(cc, CaEvent.LOSS);
            sk.undo.startEpisode();
        }
        cc.sndCwnd = 1;
        cc.sndCwndCnt = 0;
        sk.cwv.stamp();
        boolean reneged = sb.headSacked();
        sb.markAllLost(reneged, detector.forgetSacksOnLoss(reneged));
        highSeq = sk.sndNxt;
        sk.tlp.cancel();
        sk.setCaState(CaState.LOSS);
        sk.traceEvent("rto");
    }

    /**
     * tcp_simple_retransmit's state change, for a path MTU that dropped below the segments in flight: Loss without
     * a window reduction (cwnd stays; the segments were not lost to congestion), so that the re-cut segments go out
     * now; once per episode.
     */
    void enterLossForMtu() {
        CcSock cc = sk.cc;
        if (cc.caState == CaState.LOSS) {
            return;
        }
        highSeq = sk.sndNxt;
        cc.sndSsthresh = cc.currentSsthresh();
        cc.priorSsthresh = 0;
        sk.setCaState(CaState.LOSS);
    }

    /** NewReno's guard (no SACK): snd_una has reached high_seq exactly, and nothing above it is ACKed yet. */
    private boolean renoHoldsRecovery() {
        return !sack() && sk.sndUna == highSeq;
    }
}
