package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.EVER_RETRANS;
import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;
import static dev.usnet.tcp.TcpSkbCb.SEG_SYN;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaState;

/**
 * The sender's scoreboard: the retransmission queue and what is known of each segment in it (SACKed, lost,
 * retransmitted), with Linux's counters packets_out, sacked_out, lost_out and retrans_out kept equal to the
 * marks. Every mark and counter changes here and nowhere else; loss recovery decides what to mark.
 */
final class Scoreboard {
    private final TcpSock sk;
    private final RtxQueue rtx = new RtxQueue();
    private long packetsOut;
    private long sackedOut;
    private long lostOut;
    private long retransOut;
    // End of the highest SACKed segment, and where the retransmission walk resumes (Linux's skb hints).
    private long highSackedEnd;
    private long retransHint;
    // The ACK being processed carried a D-SACK (FLAG_DSACKING_ACK).
    private boolean lastAckDsack;
    // The ACK being processed delivered a segment sent before high_seq and never retransmitted
    // (FLAG_ORIG_SACK_ACKED).
    private boolean origDelivered;

    /** What one cumulative ACK removed from the queue (tcp_clean_rtx_queue's findings). */
    static final class Acked {
        long packets;
        long sacked;
        long syn;
        boolean retrans;
        /** Packets acknowledged before the first never-retransmitted, never-SACKed one (MAX_VALUE: none). */
        long reord;
        long firstTxNanos;
        long lastTxNanos;

        boolean hasTxStamp() {
            return firstTxNanos != Long.MIN_VALUE;
        }
    }

    Scoreboard(TcpSock sk) {
        this.sk = sk;
    }

    /** packets_out: segments sent and not yet cumulatively acknowledged (a TSO segment counts its MSS pieces). */
    long packetsOut() {
        return packetsOut;
    }

    /** sacked_out: SACKed segments (without SACK: duplicate ACKs counted, NewReno). */
    long sackedOut() {
        return sackedOut;
    }

    /** lost_out: segments marked lost. */
    long lostOut() {
        return lostOut;
    }

    /** retrans_out: retransmissions not yet known to have left the network. */
    long retransOut() {
        return retransOut;
    }

    /** The end of the highest SACKed segment (highest_sack's end_seq); snd_una or below with nothing SACKed. */
    long highSackedEnd() {
        return highSackedEnd;
    }

    /** Where the walk over segments marked lost resumes (retransmit_skb_hint). */
    long retransHint() {
        return retransHint;
    }

    /** The retransmission walk has resent everything marked lost up to {@code seq}. */
    void retransmittedUpTo(long seq) {
        retransHint = seq;
    }

    /** Whether the ACK being processed carried a D-SACK (FLAG_DSACKING_ACK). */
    boolean lastAckDsack() {
        return lastAckDsack;
    }

    /** Whether the ACK being processed delivered original data sent before high_seq (FLAG_ORIG_SACK_ACKED). */
    boolean origDelivered() {
        return origDelivered;
    }

    /** A new ACK is being processed: it has shown no D-SACK and delivered nothing yet. */
    void startAck() {
        lastAckDsack = false;
        origDelivered = false;
    }

    private void delivered(Packet s, int bits) {
        if ((bits & (RETRANS | EVER_RETRANS)) == 0 && !Seq.after(TcpSkbCb.endSeq(s), sk.recovery.highSeq())) {
            origDelivered = true;
        }
        sk.recovery.detector().delivered(s, bits);
    }

    /** packets_out - (sacked_out + lost_out) + retrans_out: what the network holds (tcp_packets_in_flight). */
    long inFlight() {
        return packetsOut - (sackedOut + lostOut) + retransOut;
    }

    boolean isEmpty() {
        return rtx.isEmpty();
    }

    int size() {
        return rtx.size();
    }

    Packet get(int i) {
        return rtx.get(i);
    }

    Packet head() {
        return rtx.peekFirst();
    }

    Packet tail() {
        return rtx.peekLast();
    }

    int firstEndingAfter(long seq) {
        return rtx.firstEndingAfter(seq);
    }

    /** The first segment SACKed while the cumulative ACK stops at it: the peer reneged (dropped what it SACKed). */
    boolean headSacked() {
        return !rtx.isEmpty() && (TcpSkbCb.sacked(rtx.peekFirst()) & SACKED) != 0;
    }

    /** Marks start at the initial sequence number (nothing is SACKed, marked or retransmitted yet). */
    void start(long iss) {
        highSackedEnd = iss;
        retransHint = iss;
        sk.recovery.detector().sequenceStarts(iss);
    }

    /** A segment of {@code pcount} packets was sent for the first time. */
    void queued(Packet seg, int pcount) {
        rtx.addLast(seg);
        packetsOut += pcount;
    }

    /**
     * tcp_clean_rtx_queue: removes what {@code ack} covers, releasing it, and counts it into {@code a}; a TSO
     * segment acknowledged in part counts the MSS-sized pieces that are done.
     */
    void cleanAcked(long ack, int mss, Acked a) {
        a.packets = 0;
        a.sacked = 0;
        a.syn = 0;
        a.retrans = false;
        a.reord = Long.MAX_VALUE;
        a.firstTxNanos = Long.MIN_VALUE;
        a.lastTxNanos = Long.MIN_VALUE;
        while (!rtx.isEmpty()) {
            Packet s = rtx.peekFirst();
            if (Seq.after(TcpSkbCb.endSeq(s), ack)) {
                if (Seq.after(ack, TcpSkbCb.seq(s))) {
                    long remaining = Seq.sub(TcpSkbCb.endSeq(s), ack);
                    int newPcount = (int) Math.max(1, (remaining + mss - 1) / mss);
                    int done = TcpSkbCb.pcount(s) - newPcount;
                    if (done > 0) {
                        a.packets += done;
                        adjustCounters(s, -done);
                        TcpSkbCb.setPcount(s, newPcount);
                    }
                }
                break;
            }
            rtx.pollFirst();
            int bits = TcpSkbCb.sacked(s);
            int pc = TcpSkbCb.pcount(s);
            if ((bits & SACKED) == 0) {
                delivered(s, bits);
            }
            if ((bits & SACKED) != 0) {
                sackedOut -= pc;
                a.sacked += pc;
            }
            if ((bits & LOST) != 0) {
                lostOut -= pc;
            }
            if ((bits & RETRANS) != 0) {
                retransOut -= pc;
            }
            if ((bits & SEG_SYN) != 0) {
                a.syn++;
            }
            if ((bits & EVER_RETRANS) != 0) {
                a.retrans = true;
            } else {
                if ((bits & SACKED) == 0) {
                    // A hole filled by the original transmission (tcp_clean_rtx_queue's reord).
                    a.reord = Math.min(a.reord, a.packets);
                }
                if (a.firstTxNanos == Long.MIN_VALUE) {
                    a.firstTxNanos = TcpSkbCb.txNanos(s);
                }
                a.lastTxNanos = TcpSkbCb.txNanos(s);
            }
            packetsOut -= pc;
            a.packets += pc;
            s.release();
        }
    }

    private void adjustCounters(Packet s, int delta) {
        int bits = TcpSkbCb.sacked(s);
        packetsOut += delta;
        if ((bits & SACKED) != 0) {
            sackedOut += delta;
        }
        if ((bits & LOST) != 0) {
            lostOut += delta;
        }
        if ((bits & RETRANS) != 0) {
            retransOut += delta;
        }
    }

    /**
     * The remembered sequence numbers never fall behind snd_una. They are compared modulo 2^32 (before/after),
     * which is only meaningful within 2 GiB: a mark left behind while gigabytes flowed without a loss — or left
     * at 0 from before the connection chose its ISS — reads as lying ahead, and then FACK marked nothing lost
     * and the retransmission walk found nothing to send (a stall until the RTO, with a window of SACKed data
     * and dozens of holes).
     */
    void keepMarksInWindow(long sndUna) {
        if (Seq.before(highSackedEnd, sndUna)) {
            highSackedEnd = sndUna;
        }
        if (Seq.before(retransHint, sndUna)) {
            retransHint = sndUna;
        }
        sk.recovery.detector().unaAdvanced(sndUna);
    }

    /**
     * tcp_check_dsack (RFC 2883): the first block is a D-SACK when it lies below the cumulative ACK or inside the
     * second block. It reports data that arrived twice, never new data: it is counted and otherwise ignored.
     */
    private boolean isDsack(TcpOptions o, long ack) {
        if (o.sackBlocks == 0) {
            return false;
        }
        long s0 = o.sackStart[0];
        long e0 = o.sackEnd[0];
        if (Seq.before(s0, ack)) {
            sk.stack.mib().inc(Mib.TcpExtTCPDSACKRecv);
            sk.undo.dsackReceived(s0, e0, retransmittedIn(s0, e0));
            return true;
        }
        if (o.sackBlocks > 1 && !Seq.after(e0, o.sackEnd[1]) && !Seq.before(s0, o.sackStart[1])) {
            sk.stack.mib().inc(Mib.TcpExtTCPDSACKOfoRecv);
            sk.undo.dsackReceived(s0, e0, retransmittedIn(s0, e0));
            return true;
        }
        return false;
    }

    /**
     * Packets of retransmitted segments still queued inside [start, end) (a D-SACK for them means the original
     * and the retransmission both arrived); -1 when the range lies wholly below the queue, data already
     * acknowledged and forgotten.
     */
    private long retransmittedIn(long start, long end) {
        if (rtx.isEmpty() || !Seq.after(end, TcpSkbCb.seq(rtx.peekFirst()))) {
            return -1;
        }
        long n = 0;
        for (int k = rtx.firstEndingAfter(start); k < rtx.size(); k++) {
            Packet s = rtx.get(k);
            if (!Seq.before(TcpSkbCb.seq(s), end)) {
                break;
            }
            if ((TcpSkbCb.sacked(s) & EVER_RETRANS) != 0) {
                n += TcpSkbCb.pcount(s);
            }
        }
        return n;
    }

    /**
     * Marks segments covered by the SACK blocks (tcp_sacktag_write_queue); a D-SACK block is skipped. Sets
     * {@link #lastAckDsack}. Returns the packets newly SACKed.
     */
    long sacktag(TcpOptions o, long ack) {
        long newly = 0;
        long sndUna = sk.sndUna;
        lastAckDsack = isDsack(o, ack);
        // tcp_sacktag_one: a never-retransmitted segment SACKed below the highest SACK so far arrived out of order;
        // the lowest such one, in segments from snd_una, measures how far.
        long priorHigh = sackedOut > 0 && Seq.after(highSackedEnd, sndUna) ? highSackedEnd : sndUna;
        long reord = Long.MAX_VALUE;
        int mss = sk.mssCache;
        for (int i = lastAckDsack ? 1 : 0; i < o.sackBlocks; i++) {
            long start = o.sackStart[i];
            long end = o.sackEnd[i];
            if (!Seq.after(end, start) || !Seq.after(end, sndUna) || Seq.after(end, sk.sndNxt)) {
                // Invalid, below the window (a D-SACK or stale), or beyond what we sent.
                continue;
            }
            for (int k = rtx.firstEndingAfter(start); k < rtx.size(); k++) {
                Packet s = rtx.get(k);
                if (!Seq.before(TcpSkbCb.seq(s), end)) {
                    break;
                }
                int bits = TcpSkbCb.sacked(s);
                if ((bits & SACKED) != 0) {
                    continue;
                }
                if (!Seq.before(TcpSkbCb.seq(s), start) && !Seq.after(TcpSkbCb.endSeq(s), end)) {
                    int pc = TcpSkbCb.pcount(s);
                    if ((bits & LOST) != 0) {
                        lostOut -= pc;
                    }
                    if ((bits & RETRANS) != 0) {
                        retransOut -= pc;
                    }
                    if ((bits & (RETRANS | EVER_RETRANS)) == 0 && Seq.before(TcpSkbCb.seq(s), priorHigh)) {
                        reord = Math.min(reord, Seq.sub(TcpSkbCb.seq(s), sndUna) / mss);
                    }
                    delivered(s, bits);
                    TcpSkbCb.setSacked(s, (bits | SACKED) & ~(LOST | RETRANS));
                    sackedOut += pc;
                    newly += pc;
                    if (Seq.after(TcpSkbCb.endSeq(s), highSackedEnd) || Seq.before(highSackedEnd, sndUna)) {
                        highSackedEnd = TcpSkbCb.endSeq(s);
                    }
                }
            }
        }
        if (reord != Long.MAX_VALUE && sk.cc.caState != CaState.LOSS) {
            long fackets = sk.recovery.facketsOut();
            if (reord < fackets) {
                sk.recovery.updateReordering(fackets - reord, false);
            }
        }
        return newly;
    }

    /**
     * tcp_mark_lost_retrans (Linux up to 4.3, before RACK): a retransmission is lost when the peer SACKs data we
     * sent after it (its snd_nxt at retransmission lies below the highest SACK). It is marked lost again so fast
     * recovery resends it, instead of waiting for the RTO.
     */
    void markLostRetrans() {
        long seen = 0;
        for (int k = 0; k < rtx.size() && seen < retransOut; k++) {
            Packet s = rtx.get(k);
            if (!Seq.before(TcpSkbCb.seq(s), highSackedEnd)) {
                break;
            }
            int bits = TcpSkbCb.sacked(s);
            if ((bits & RETRANS) == 0 || (bits & SACKED) != 0) {
                continue;
            }
            seen += TcpSkbCb.pcount(s);
            if (Seq.after(highSackedEnd, TcpSkbCb.ackSeq(s))) {
                TcpSkbCb.setSacked(s, (bits & ~RETRANS) | LOST);
                retransOut -= TcpSkbCb.pcount(s);
                if ((bits & LOST) == 0) {
                    lostOut += TcpSkbCb.pcount(s);
                }
                if (Seq.before(TcpSkbCb.seq(s), retransHint)) {
                    retransHint = TcpSkbCb.seq(s);
                }
                sk.stack.mib().inc(Mib.TcpExtTCPLostRetransmit);
            }
        }
    }

    /** Marks {@code s} lost (TCPCB_LOST) and moves the retransmission walk back to it if needed. */
    void markLost(Packet s) {
        TcpSkbCb.setSacked(s, TcpSkbCb.sacked(s) | LOST);
        lostOut += TcpSkbCb.pcount(s);
        if (Seq.before(TcpSkbCb.seq(s), retransHint)) {
            retransHint = TcpSkbCb.seq(s);
        }
    }

    /**
     * tcp_mark_skb_lost as RACK uses it: a segment not yet marked becomes lost (a retransmission among them stays
     * counted as out until it is judged lost again); a marked one that was retransmitted is lost again: its
     * retransmission no longer counts as out (TCPLostRetransmit) and the walk resends it.
     */
    void markLostAgain(Packet s) {
        int bits = TcpSkbCb.sacked(s);
        if ((bits & SACKED) != 0) {
            return;
        }
        if ((bits & LOST) == 0) {
            markLost(s);
            return;
        }
        if ((bits & RETRANS) != 0) {
            int pc = TcpSkbCb.pcount(s);
            TcpSkbCb.setSacked(s, bits & ~RETRANS);
            retransOut -= pc;
            sk.stack.mib().add(Mib.TcpExtTCPLostRetransmit, pc);
            if (Seq.before(TcpSkbCb.seq(s), retransHint)) {
                retransHint = TcpSkbCb.seq(s);
            }
        }
    }

    /** Marks the first not-SACKed segment lost (tcp_mark_head_lost with one packet). */
    void markHeadLost() {
        for (int k = 0; k < rtx.size(); k++) {
            Packet s = rtx.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & SACKED) != 0) {
                continue;
            }
            if ((bits & (LOST | RETRANS)) == 0) {
                markLost(s);
            }
            return;
        }
    }

    /** A queued segment now goes out as {@code delta} more (or fewer) packets (tcp_adjust_pcount). */
    void pcountChanged(Packet s, int delta) {
        adjustCounters(s, delta);
    }

    /** tcp_limit_reno_sacked: duplicate ACKs counted as SACKs cannot exceed what is not lost. */
    void limitRenoSacked() {
        long holes = Math.min(Math.max(lostOut, 1), packetsOut);
        if (sackedOut + holes > packetsOut) {
            sackedOut = packetsOut - holes;
        }
    }

    /** NewReno: a duplicate ACK counts as one more packet that left the network (tcp_add_reno_sack). */
    void addRenoSack() {
        if (sackedOut + 1 < packetsOut) {
            sackedOut++;
        }
    }

    /** NewReno: a cumulative ACK of {@code packets} consumes as many counted duplicate ACKs (tcp_remove_reno_sacks). */
    void removeRenoSacks(long packets) {
        sackedOut = Math.max(0, sackedOut - packets);
    }

    /** Undo: nothing stays marked lost (tcp_undo_cwnd_reduction), so FACK may have to mark again from snd_una. */
    void clearLostMarks() {
        for (int k = 0; k < rtx.size(); k++) {
            Packet s = rtx.get(k);
            TcpSkbCb.setSacked(s, TcpSkbCb.sacked(s) & ~LOST);
        }
        lostOut = 0;
        sk.recovery.detector().lostMarksCleared();
    }

    /**
     * tcp_enter_loss's marking: every segment not SACKed is lost and none counts as retransmitted; when the head
     * itself is SACKed the peer reneged, so no SACK is trusted. {@code forgetSacks}: sacked_out restarts at 0 (no
     * SACK, or reneging).
     */
    void markAllLost(boolean reneged, boolean forgetSacks) {
        retransOut = 0;
        lostOut = 0;
        if (forgetSacks) {
            sackedOut = 0;
        }
        for (int k = 0; k < rtx.size(); k++) {
            Packet s = rtx.get(k);
            int bits = TcpSkbCb.sacked(s) & ~RETRANS;
            if (reneged) {
                bits &= ~SACKED;
            }
            if ((bits & SACKED) == 0) {
                bits |= LOST;
                lostOut += TcpSkbCb.pcount(s);
            }
            TcpSkbCb.setSacked(s, bits);
        }
        retransHint = sk.sndUna;
    }

    /** {@code s} is being sent again: RETRANS and EVER_RETRANS set, snd_nxt remembered (for markLostRetrans). */
    void retransmitting(Packet s) {
        TcpSkbCb.setSacked(s, TcpSkbCb.sacked(s) | RETRANS | EVER_RETRANS);
        TcpSkbCb.setAckSeq(s, sk.sndNxt);
        retransOut += TcpSkbCb.pcount(s);
    }

    /** Replaces the head segment (partly acknowledged, cut down to its unacknowledged bytes). */
    void replaceHead(Packet old, Packet n) {
        if (rtx.peekFirst() != old) {
            throw new IllegalStateException("partly acknowledged segment not at the head");
        }
        rtx.replaceFirst(n);
        old.release();
    }

    /** Releases every segment and zeroes the counters (the send side is done). */
    void release() {
        rtx.clear();
        packetsOut = 0;
        sackedOut = 0;
        lostOut = 0;
        retransOut = 0;
    }
}
