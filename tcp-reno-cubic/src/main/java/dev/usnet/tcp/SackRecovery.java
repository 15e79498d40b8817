package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;

/**
 * Loss recovery on SACK information: segments are tagged from the peer's SACK blocks, and a segment not SACKed
 * is lost once enough SACKed data lies above it — by FACK (net.ipv4.tcp_fack, the default until Linux 4.15:
 * more than {@code reordering} segments between it and the highest SACK) or by RFC 6675's IsLost (at least
 * {@code reordering} SACKed segments above it). A retransmission is lost again when data sent after it is SACKed.
 */
final class SackRecovery extends LossRecovery {
    SackRecovery(TcpSock sk) {
        super(sk);
    }

    @Override
    boolean sack() {
        return true;
    }

    @Override
    long sackTag(TcpOptions o, long ack) {
        if (o.sackBlocks == 0) {
            return 0;
        }
        long newly = sb.sacktag(o, ack);
        if (newly > 0 && sb.retransOut > 0) {
            sb.markLostRetrans();
        }
        return newly;
    }

    @Override
    void sackTagOld(TcpOptions o, long ack) {
        if (o.sackBlocks > 0) {
            sb.sacktag(o, ack);
        }
    }

    @Override
    void cumulativeAcked(long packets) {
        // SACKed segments leave the scoreboard with their own marks.
    }

    @Override
    long dupAck() {
        return 0;
    }

    /**
     * tcp_check_sack_reneging: the cumulative ACK stops at a segment the peer SACKed, so the peer threw that data
     * away (it pruned its out-of-order queue). Recovery cannot trust the scoreboard: that is left to an early RTO,
     * which forgets the SACK marks.
     */
    @Override
    boolean reneged(boolean unaMoved) {
        return unaMoved && sb.headSacked();
    }

    @Override
    void recoveryAck(boolean advanced) {
        updateScoreboard();
    }

    @Override
    void markLosses() {
        updateScoreboard();
    }

    /**
     * With FACK the distance from snd_una to the highest SACKed segment; otherwise the SACKed count plus one.
     */
    @Override
    long dupackHeuristic() {
        if (sk.fack && sb.sackedOut > 0 && Seq.after(sb.highSackedEnd, sk.sndUna)) {
            return (Seq.sub(sb.highSackedEnd, sk.sndUna) + sk.mssCache - 1) / sk.mssCache;
        }
        return sb.sackedOut + 1;
    }

    @Override
    boolean forgetSacksOnLoss(boolean reneged) {
        return reneged;
    }

    @Override
    Mib recoveryMib() {
        return Mib.TcpExtTCPSackRecovery;
    }

    /**
     * Marks lost what the SACK information condemns. FACK: everything not SACKed more than {@code reordering}
     * segments below the highest SACK. RFC 6675: walks the queue from the highest SACKed segment down, counting
     * SACKed segments, and marks a segment once {@code reordering} of them lie above it.
     */
    private void updateScoreboard() {
        if (sb.sackedOut == 0 || !Seq.after(sb.highSackedEnd, sk.sndUna)) {
            return;
        }
        if (sk.fack) {
            long limit = Seq.add(sb.highSackedEnd, -sk.reordering * sk.mssCache);
            if (!Seq.after(limit, sk.sndUna)) {
                sb.markHeadLost();
                return;
            }
            for (int k = sb.firstEndingAfter(sb.fackMarked); k < sb.size(); k++) {
                Packet s = sb.get(k);
                if (Seq.after(TcpSkbCb.endSeq(s), limit)) {
                    break;
                }
                if ((TcpSkbCb.sacked(s) & (SACKED | LOST | RETRANS)) == 0) {
                    sb.markLost(s);
                }
                sb.fackMarked = TcpSkbCb.endSeq(s);
            }
            return;
        }
        long sackedAbove = 0;
        // Nothing above the highest SACKed segment can be lost yet; below an already marked segment the
        // earlier passes did the work (Linux keeps lost_skb_hint for the same reason).
        for (int k = sb.firstEndingAfter(sb.highSackedEnd) - 1; k >= 0; k--) {
            Packet s = sb.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & SACKED) != 0) {
                sackedAbove += TcpSkbCb.pcount(s);
                continue;
            }
            if (sackedAbove >= sk.reordering) {
                if ((bits & (LOST | RETRANS)) != 0) {
                    break;
                }
                sb.markLost(s);
            }
        }
    }
}
