package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;

/**
 * Undoing a reduction that turns out to have been spurious (RFC 3522, the Eifel detection with timestamps, as
 * tcp_try_undo_recovery / tcp_try_undo_loss with tcp_packet_delayed do it): the first retransmission of an
 * episode is stamped; an ACK echoing an older timestamp acknowledges an original transmission, so nothing was
 * lost.
 */
final class Undo {
    private final TcpSock sk;
    // The TS value of the episode's first retransmission.
    private long retransStampTs;
    private boolean retransStamped;
    private boolean possible;

    Undo(TcpSock sk) {
        this.sk = sk;
    }

    /** A reduction starts (recovery or RTO): undo is possible when timestamps can tell. */
    void startEpisode() {
        possible = sk.tsOk;
        retransStamped = false;
    }

    /** A segment is retransmitted: the first one of the episode is stamped. */
    void retransmitting() {
        if (possible && !retransStamped) {
            retransStampTs = sk.tsNow();
            retransStamped = true;
        }
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
        return sk.cc.caState == CaState.RECOVERY && Seq.before(sk.sndUna, sk.highSeq);
    }

    /**
     * The loss was not real: cwnd goes back to what congestion control says (undo_cwnd), ssthresh to its value
     * before the reduction, and nothing stays marked lost (tcp_undo_cwnd_reduction).
     */
    void undo() {
        CcSock cc = sk.cc;
        boolean fromLoss = cc.caState == CaState.LOSS;
        boolean partial = partial();
        cc.sndCwnd = Math.max(cc.sndCwnd, sk.ops.undoCwnd(cc));
        if (cc.priorSsthresh > cc.sndSsthresh) {
            cc.sndSsthresh = cc.priorSsthresh;
        }
        sk.sb.clearLostMarks();
        possible = false;
        retransStamped = false;
        sk.stack.mib().inc(fromLoss ? Mib.TcpExtTCPLossUndo : partial ? Mib.TcpExtTCPPartialUndo : Mib.TcpExtTCPFullUndo);
        sk.setCaState(CaState.OPEN);
        sk.traceEvent("undo");
    }
}
