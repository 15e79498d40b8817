package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;

/**
 * Forward acknowledgment (net.ipv4.tcp_fack, the default from Linux 2.6 to 4.14): everything not SACKed more than
 * {@code reordering} segments below the highest SACK is lost, and recovery starts when the highest SACK lies more
 * than {@code reordering} segments above snd_una (fackets_out). Linux switches FACK off for a connection once it
 * sees reordering; {@link LossRecovery} then chooses {@link Rfc6675Detector} in its place. A retransmission is lost
 * again when data sent after it is SACKed (tcp_mark_lost_retrans).
 */
final class FackDetector extends SackBasedDetector {
    private final LossRecovery recovery;
    // How far losses are marked: below it every segment is SACKed, marked or retransmitted.
    private long marked;

    FackDetector(TcpSock sk, LossRecovery recovery) {
        super(sk);
        this.recovery = recovery;
        this.marked = sk.sndUna;
    }

    @Override
    public long sackTag(TcpOptions o, long ack) {
        long newly = super.sackTag(o, ack);
        if (newly > 0 && sb.retransOut() > 0) {
            sb.markLostRetrans();
        }
        return newly;
    }

    /** tcp_dupack_heuristics with FACK: the distance from snd_una to the highest SACK, in segments. */
    @Override
    public boolean enoughDupAcks() {
        long heuristic = anythingSacked() ? recovery.facketsOut() : sb.sackedOut() + 1;
        return heuristic > recovery.reordering();
    }

    /**
     * The mark never falls behind snd_una: compared modulo 2^32, one left behind while gigabytes flowed reads as
     * lying ahead, and FACK would mark nothing lost.
     */
    @Override
    public void unaAdvanced(long sndUna) {
        if (Seq.before(marked, sndUna)) {
            marked = sndUna;
        }
    }

    @Override
    public void sequenceStarts(long iss) {
        marked = iss;
    }

    @Override
    public void lostMarksCleared() {
        marked = sk.sndUna;
    }

    @Override
    public void recoveryAck(boolean advanced) {
        markLosses();
    }

    @Override
    public void markLosses() {
        if (!anythingSacked()) {
            return;
        }
        long limit = Seq.add(sb.highSackedEnd(), -recovery.reordering() * sk.mssCache);
        if (!Seq.after(limit, sk.sndUna)) {
            sb.markHeadLost();
            return;
        }
        for (int k = sb.firstEndingAfter(marked); k < sb.size(); k++) {
            Packet s = sb.get(k);
            if (Seq.after(TcpSkbCb.endSeq(s), limit)) {
                break;
            }
            if ((TcpSkbCb.sacked(s) & (SACKED | LOST | RETRANS)) == 0) {
                sb.markLost(s);
            }
            marked = TcpSkbCb.endSeq(s);
        }
    }

    @Override
    public Mib reorderMib() {
        return Mib.TcpExtTCPFACKReorder;
    }
}
