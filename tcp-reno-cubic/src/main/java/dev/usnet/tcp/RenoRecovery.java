package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;

/**
 * Loss recovery without SACK (NewReno, RFC 6582, as Linux's tcp_is_reno paths do it): each duplicate ACK counts
 * as one packet that left the network (sacked_out), more than {@code reordering} of them start fast recovery,
 * and during recovery a partial ACK marks the next hole lost too.
 */
final class RenoRecovery extends LossRecovery {
    RenoRecovery(TcpSock sk) {
        super(sk);
    }

    @Override
    boolean sack() {
        return false;
    }

    @Override
    long sackTag(TcpOptions o, long ack) {
        return 0;
    }

    @Override
    void sackTagOld(TcpOptions o, long ack) {
        // Without SACK an old ACK tells nothing.
    }

    @Override
    void cumulativeAcked(long packets) {
        sb.removeRenoSacks(packets);
    }

    @Override
    long dupAck() {
        sb.addRenoSack();
        return 1;
    }

    @Override
    boolean reneged(boolean unaMoved) {
        return false;
    }

    @Override
    void recoveryAck(boolean advanced) {
        if (advanced) {
            // A partial ACK: the next hole is lost too.
            sb.markHeadLost();
        }
    }

    @Override
    void markLosses() {
        // Duplicate ACKs alone mark nothing; time_to_recover counts them.
    }

    @Override
    long dupackHeuristic() {
        return sb.sackedOut + 1;
    }

    @Override
    boolean forgetSacksOnLoss(boolean reneged) {
        return true;
    }

    @Override
    Mib recoveryMib() {
        return Mib.TcpExtTCPRenoRecovery;
    }
}
