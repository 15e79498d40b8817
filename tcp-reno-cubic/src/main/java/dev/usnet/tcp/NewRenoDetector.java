package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;

/**
 * Loss detection without SACK (NewReno, RFC 6582, as Linux's tcp_is_reno paths do it): each duplicate ACK counts
 * as one packet that left the network (sacked_out), more than {@code reordering} of them start fast recovery,
 * and during recovery a partial ACK marks the next hole lost too.
 */
final class NewRenoDetector implements LossDetector {
    private final Scoreboard sb;
    private final LossRecovery recovery;

    NewRenoDetector(TcpSock sk, LossRecovery recovery) {
        this.sb = sk.sb;
        this.recovery = recovery;
    }

    @Override
    public boolean sack() {
        return false;
    }

    @Override
    public long sackTag(TcpOptions o, long ack) {
        return 0;
    }

    @Override
    public void sackTagOld(TcpOptions o, long ack) {
        // Without SACK an old ACK tells nothing.
    }

    @Override
    public void cumulativeAcked(long packets) {
        sb.removeRenoSacks(packets);
    }

    @Override
    public long dupAck() {
        sb.addRenoSack();
        return 1;
    }

    @Override
    public boolean reneged(boolean unaMoved) {
        return false;
    }

    /** tcp_dupack_heuristics: the duplicate ACKs counted, plus one. */
    @Override
    public boolean enoughDupAcks() {
        return sb.sackedOut() + 1 > recovery.reordering();
    }

    @Override
    public void recoveryAck(boolean advanced) {
        if (advanced) {
            // A partial ACK: the next hole is lost too.
            sb.markHeadLost();
        }
    }

    @Override
    public void markLosses() {
        // Duplicate ACKs alone mark nothing; time_to_recover counts them.
    }

    @Override
    public boolean forgetSacksOnLoss(boolean reneged) {
        return true;
    }

    @Override
    public Mib recoveryMib() {
        return Mib.TcpExtTCPRenoRecovery;
    }

    @Override
    public Mib reorderMib() {
        return Mib.TcpExtTCPRenoReorder;
    }
}
