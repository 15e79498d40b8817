package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaEvent;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;

/**
 * The sender's congestion state machine (tcp_fastretrans_alert): Open, Disorder, Recovery and Loss, when a loss
 * is detected, how cwnd is cut once per episode and restored after it. What counts as evidence of a loss is the
 * subclass's: {@link SackRecovery} reads SACK blocks (FACK or RFC 6675), {@link RenoRecovery} counts duplicate
 * ACKs (NewReno, RFC 6582). A connection has one, chosen when the handshake settles SACK.
 */
abstract sealed class LossRecovery permits SackRecovery, RenoRecovery {
    final TcpSock sk;
    final Scoreboard sb;

    LossRecovery(TcpSock sk) {
        this.sk = sk;
        this.sb = sk.sb;
    }

    /** Whether SACK drives recovery (tcp_is_sack): tail loss probes and early retransmit need it. */
    abstract boolean sack();

    /** Marks what the SACK blocks of an acceptable ACK report; returns the packets newly SACKed. */
    abstract long sackTag(TcpOptions o, long ack);

    /** The SACK blocks of an old duplicate ACK (below snd_una) still tell something. */
    abstract void sackTagOld(TcpOptions o, long ack);

    /** A cumulative ACK removed {@code packets} from the queue. */
    abstract void cumulativeAcked(long packets);

    /** A duplicate ACK arrived; returns the packets it counts as delivered. */
    abstract long dupAck();

    /** Whether this ACK shows the peer reneged on data it SACKed ({@code unaMoved}: snd_una advanced). */
    abstract boolean reneged(boolean unaMoved);

    /** An ACK during Recovery ({@code advanced}: it acknowledged new data): mark what is now known lost. */
    abstract void recoveryAck(boolean advanced);

    /** Marks segments lost on the evidence there is, outside Recovery. */
    abstract void markLosses();

    /** The segments above the first hole that decide whether it is lost (tcp_dupack_heuristics). */
    abstract long dupackHeuristic();

    /** Whether an RTO forgets every SACK mark (no SACK, or the peer reneged). */
    abstract boolean forgetSacksOnLoss(boolean reneged);

    /** The counter of recovery episodes entered. */
    abstract Mib recoveryMib();

    /** tcp_fastretrans_alert: moves between Open, Disorder, Recovery and Loss and marks lost segments. */
    final void fastRetransAlert(boolean advanced, boolean isDupAck) {
        CcSock cc = sk.cc;
        CaState st = cc.caState;
        if (sb.packetsOut == 0 && st != CaState.OPEN) {
            // Everything is acknowledged: whatever reduction was running is over.
            if (st == CaState.RECOVERY || st == CaState.CWR) {
                endCwndReduction();
            }
            sk.setCaState(CaState.OPEN);
            return;
        }
        switch (st) {
            case RECOVERY -> {
                if (!Seq.before(sk.sndUna, sk.highSeq)) {
                    endCwndReduction();
                    sk.setCaState(CaState.OPEN);
                    break;
                }
                recoveryAck(advanced);
            }
            case LOSS -> {
                if (!Seq.before(sk.sndUna, sk.highSeq)) {
                    sk.setCaState(CaState.OPEN);
                    break;
                }
                markLosses();
            }
            default -> {
                markLosses();
                if (timeToRecover()) {
                    enterRecovery();
                } else if (sk.tlp.earlyRetransEligible()) {
                    sk.tlp.armEarlyRetransmit();
                    if (st == CaState.OPEN) {
                        sk.setCaState(CaState.DISORDER);
                    }
                } else if (sb.sackedOut > 0 || sb.retransOut > 0 || isDupAck) {
                    if (st == CaState.OPEN) {
                        sk.setCaState(CaState.DISORDER);
                    }
                } else if (st == CaState.DISORDER) {
                    sk.setCaState(CaState.OPEN);
                }
            }
        }
    }

    /** Linux's tcp_max_reordering: the most reordering detection raises the degree to. */
    static final long MAX_REORDERING = 300;

    /**
     * tcp_update_reordering: data arrived {@code metric} segments out of order. A degree above the one assumed
     * raises it (fewer segments are then judged lost) and is counted by what detected it — the timestamps of a
     * partial undo, NewReno's duplicate ACKs, FACK or SACK — and FACK is switched off for the connection (so a
     * later detection counts as SACK's); any reordering switches early retransmit off.
     */
    final void updateReordering(long metric, boolean ts) {
        if (metric > sk.reordering) {
            sk.reordering = Math.min(MAX_REORDERING, metric);
            sk.stack.mib().inc(ts ? Mib.TcpExtTCPTSReorder : !sack() ? Mib.TcpExtTCPRenoReorder
                    : sk.fack ? Mib.TcpExtTCPFACKReorder : Mib.TcpExtTCPSACKReorder);
            sk.fack = false;
        }
        if (metric > 0) {
            sk.earlyRetransOff = true;
        }
    }

    /** fackets_out: segments from snd_una to the end of the highest SACKed one (0 with nothing SACKed). */
    final long facketsOut() {
        if (sb.sackedOut == 0 || !Seq.after(sb.highSackedEnd, sk.sndUna)) {
            return 0;
        }
        return (Seq.sub(sb.highSackedEnd, sk.sndUna) + sk.mssCache - 1) / sk.mssCache;
    }

    /** tcp_time_to_recover: a loss is already marked, or more than {@code reordering} segments arrived above a hole. */
    final boolean timeToRecover() {
        return sb.lostOut > 0 || dupackHeuristic() > sk.reordering;
    }

    /** Fast retransmit: cwnd is reduced and the first hole is marked lost (tcp_enter_recovery). */
    final void enterRecovery() {
        sk.stack.mib().inc(recoveryMib());
        initCwndReduction();
        sk.setCaState(CaState.RECOVERY);
        sk.retransmit.startEpisode();
        sb.markHeadLost();
        markLosses();
    }

    /** tcp_init_cwnd_reduction: the loss halves (or beta-reduces) the window once per episode. */
    final void initCwndReduction() {
        CcSock cc = sk.cc;
        sk.highSeq = sk.sndNxt;
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
    final void endCwndReduction() {
        CcSock cc = sk.cc;
        if (cc.sndSsthresh < 0x7fff_ffffL) {
            cc.sndCwnd = cc.sndSsthresh;
            sk.cwv.stamp();
        }
    }

    /** tcp_enter_loss: after an RTO everything not SACKed is presumed lost and cwnd restarts from one. */
    final void enterLoss() {
        CcSock cc = sk.cc;
        CaState st = cc.caState;
        if (st.ordinal() <= CaState.DISORDER.ordinal() || !Seq.after(sk.highSeq, sk.sndUna)
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
        sb.markAllLost(reneged, forgetSacksOnLoss(reneged));
        sk.highSeq = sk.sndNxt;
        sk.tlp.cancel();
        sk.setCaState(CaState.LOSS);
        sk.traceEvent("rto");
    }
}
