package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;

/**
 * RFC 6675's IsLost, as Linux judges SACKed connections without FACK or RACK: a segment not SACKed is lost once
 * {@code reordering} (DupThresh) SACKed segments lie above it, and recovery starts when more than
 * {@code reordering} segments are SACKed. A retransmission is lost again when data sent after it is SACKed
 * (tcp_mark_lost_retrans, Linux up to 4.3).
 */
final class Rfc6675Detector extends SackBasedDetector {
    private final LossRecovery recovery;

    Rfc6675Detector(TcpSock sk, LossRecovery recovery) {
        super(sk);
        this.recovery = recovery;
    }

    @Override
    public long sackTag(TcpOptions o, long ack) {
        long newly = super.sackTag(o, ack);
        if (newly > 0 && sb.retransOut() > 0) {
            sb.markLostRetrans();
        }
        return newly;
    }

    /** tcp_dupack_heuristics without FACK: the SACKed count plus one. */
    @Override
    public boolean enoughDupAcks() {
        return sb.sackedOut() + 1 > recovery.reordering();
    }

    @Override
    public void recoveryAck(boolean advanced) {
        markLosses();
    }

    /**
     * Walks the queue from the highest SACKed segment down, counting SACKed segments, and marks a segment once
     * {@code reordering} of them lie above it.
     */
    @Override
    public void markLosses() {
        if (!anythingSacked()) {
            return;
        }
        long reordering = recovery.reordering();
        long sackedAbove = 0;
        // Nothing above the highest SACKed segment can be lost yet; below an already marked segment the
        // earlier passes did the work (Linux keeps lost_skb_hint for the same reason).
        for (int k = sb.firstEndingAfter(sb.highSackedEnd()) - 1; k >= 0; k--) {
            Packet s = sb.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & SACKED) != 0) {
                sackedAbove += TcpSkbCb.pcount(s);
                continue;
            }
            if (sackedAbove >= reordering) {
                if ((bits & (LOST | RETRANS)) != 0) {
                    break;
                }
                sb.markLost(s);
            }
        }
    }

    @Override
    public Mib reorderMib() {
        return Mib.TcpExtTCPSACKReorder;
    }
}
