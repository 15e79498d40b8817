package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;

/**
 * Undoing a reduction that turns out to have been spurious. Every preset has the timestamp test (RFC 3522, the
 * Eifel detection, as tcp_try_undo_recovery / tcp_try_undo_loss with tcp_packet_delayed do it): the first
 * retransmission of an episode is stamped; an ACK echoing an older timestamp acknowledges an original
 * transmission, so nothing was lost. With usnet.tcp.dsack_undo (6.x) also the D-SACK test (RFC 2883, Linux's
 * undo_marker / undo_retrans): each retransmission of the episode counts one up, each D-SACK reporting one of
 * them back (the original had arrived too) counts one down; at zero every retransmission was unnecessary.
 */
final class Undo {
    private final TcpSock sk;
    // The TS value of the episode's first retransmission.
    private long retransStampTs;
    private boolean retransStamped;
    private boolean possible;
    // undo_marker (snd_una when the episode began; valid while markerSet) and undo_retrans (-1: nothing resent).
    private boolean markerSet;
    private long marker;
    private long retransCount = -1;

    Undo(TcpSock sk) {
        this.sk = sk;
    }

    /** A reduction starts (recovery or RTO): undo is possible when timestamps or D-SACKs can tell (tcp_init_undo). */
    void startEpisode() {
        possible = sk.tsOk;
        retransStamped = false;
        markerSet = true;
        marker = sk.sndUna;
        long out = sk.sb.retransOut();
        retransCount = out > 0 ? out : -1;
    }

    /** {@code pcount} packets are retransmitted: the first of the episode is stamped; all are counted. */
    void retransmitting(int pcount) {
        if (possible && !retransStamped) {
            retransStampTs = sk.tsNow();
            retransStamped = true;
        }
        retransCount = Math.max(retransCount, 0) + pcount;
    }

    /**
     * A D-SACK reported [start, end) as received twice; {@code retransPackets} of it are queued segments we had
     * retransmitted, -1 when it lies below the queue (already acknowledged, counted as one: tcp_check_dsack's
     * "dumb counting"). Only what lies above undo_marker belongs to this episode.
     */
    void dsackReceived(long start, long end, long retransPackets) {
        if (!markerSet || retransCount <= 0 || !Seq.after(end, marker)) {
            return;
        }
        retransCount = Math.max(0, retransCount - (retransPackets < 0 ? 1 : retransPackets));
    }

    /** tcp_try_undo_dsack's test: D-SACKs came back for every retransmission of the episode (usnet.tcp.dsack_undo). */
    boolean dsackUndoDue() {
        return markerSet && retransCount == 0 && sk.recovery.switches().dsackUndo();
    }

    /** Whether an ACK that moved snd_una echoes a timestamp older than the episode's first retransmission. */
    boolean spurious(TcpOptions o) {
        CaState st = sk.cc.caState;
        return possible && retransStamped && sk.tsOk && o.hasTimestamp
                && (st == CaState.RECOVERY || st == CaState.LOSS) && Seq.before(o.tsEcr, retransStampTs);
    }

    /**
     * In Recovery, an ACK that still leaves data sent before the loss unacknowledged is a partial ACK
     * (tcp_try_undo_partial, counted TCPPartialUndo); one that reaches high_seq undoes the whole episode
     * (tcp_try_undo_recovery, TCPFullUndo). Differs: Linux does not undo on a partial ACK while retransmissions
     * are still out (it goes on reducing); usnet undoes either way.
     */
    boolean partial() {
        return sk.cc.caState == CaState.RECOVERY && Seq.before(sk.sndUna, sk.recovery.highSeq());
    }

    /**
     * The loss was not real (the timestamp test): cwnd goes back to what congestion control says (undo_cwnd),
     * ssthresh to its value before the reduction, and nothing stays marked lost (tcp_undo_cwnd_reduction).
     */
    void undo() {
        boolean fromLoss = sk.cc.caState == CaState.LOSS;
        boolean partial = partial();
        restore();
        sk.stack.mib().inc(fromLoss ? Mib.TcpExtTCPLossUndo : partial ? Mib.TcpExtTCPPartialUndo : Mib.TcpExtTCPFullUndo);
        sk.setCaState(CaState.OPEN);
        sk.traceEvent("undo");
    }

    /**
     * tcp_try_undo_dsack (and tcp_try_undo_loss on D-SACK evidence): every retransmission came back as a
     * D-SACK. Counted TCPDSACKUndo (TCPLossUndo after an RTO); the connection reopens (Disorder while SACKed
     * data is still out, tcp_try_keep_open).
     */
    void undoDsack() {
        boolean fromLoss = sk.cc.caState == CaState.LOSS;
        restore();
        sk.stack.mib().inc(fromLoss ? Mib.TcpExtTCPLossUndo : Mib.TcpExtTCPDSACKUndo);
        sk.recovery.detector().recoveryEnded(true);
        sk.setCaState(sk.sb.sackedOut() > 0 || sk.sb.retransOut() > 0 ? CaState.DISORDER : CaState.OPEN);
        sk.traceEvent("undo");
    }

    /**
     * tcp_try_undo_loss with F-RTO's verdict (RFC 5682): data never retransmitted was acknowledged after the RTO,
     * so the timeout was spurious. Counted TCPLossUndo and TCPSpuriousRTOs. (The ACK moved snd_una, which already
     * ended the timeout series.)
     */
    void undoSpuriousRto() {
        restore();
        sk.stack.mib().inc(Mib.TcpExtTCPLossUndo);
        sk.stack.mib().inc(Mib.TcpExtTCPSpuriousRTOs);
        sk.setCaState(CaState.OPEN);
        sk.traceEvent("undo");
    }

    /** tcp_undo_cwnd_reduction: cwnd and ssthresh back, no LOST marks left, undo_marker cleared. */
    private void restore() {
        CcSock cc = sk.cc;
        cc.sndCwnd = Math.max(cc.sndCwnd, sk.ops.undoCwnd(cc));
        if (cc.priorSsthresh > cc.sndSsthresh) {
            cc.sndSsthresh = cc.priorSsthresh;
        }
        sk.sb.clearLostMarks();
        possible = false;
        retransStamped = false;
        markerSet = false;
    }
}
