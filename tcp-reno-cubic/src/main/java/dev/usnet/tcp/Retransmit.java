package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;
import static dev.usnet.tcp.TcpSkbCb.SEG_FIN;
import static dev.usnet.tcp.TcpSkbCb.SEG_SYN;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.cc.CaState;

/**
 * Sending segments again (tcp_retransmit_skb, tcp_xmit_retransmit_queue): what the scoreboard marks lost goes
 * out while cwnd allows, from where the last walk stopped; a segment partly acknowledged since it was sent is cut
 * to its unacknowledged bytes first (tcp_trim_head).
 */
final class Retransmit {
    private final TcpSock sk;

    Retransmit(TcpSock sk) {
        this.sk = sk;
    }

    // Where the forward-retransmission walk of this recovery episode resumes: below it every segment is SACKed,
    // retransmitted or marked lost (and so the first pass's).
    private long forwardHint;

    /** A recovery episode starts: forward retransmission walks from snd_una again. */
    void startEpisode() {
        forwardHint = sk.sndUna;
    }

    /**
     * tcp_xmit_retransmit_queue: resends segments marked lost while cwnd allows; then, in SACK recovery when no new
     * data can go out, the segments below the highest SACK not yet SACKed nor marked lost (forward retransmission,
     * tcp_can_forward_retransmit).
     */
    void xmitQueue() {
        if (sk.recovery.frtoSendsNewData()) {
            // F-RTO step 2b: this ACK clocks out new data, not retransmissions; the next ACK tells which was right.
            return;
        }
        Scoreboard sb = sk.sb;
        if (sb.lostOut() > 0 && !retransmitLost(sb)) {
            return;
        }
        if (sk.cc.caState == CaState.RECOVERY && sk.recovery.sack() && !sk.out.canSendNewData()) {
            forwardRetransmit(sb);
        }
    }

    private void forwardRetransmit(Scoreboard sb) {
        long high = sb.highSackedEnd();
        if (sb.sackedOut() == 0 || !Seq.after(high, sk.sndUna)) {
            return;
        }
        if (Seq.before(forwardHint, sk.sndUna)) {
            forwardHint = sk.sndUna;
        }
        for (int k = sb.firstEndingAfter(forwardHint); k < sb.size(); k++) {
            if (sb.inFlight() >= sk.cc.sndCwnd) {
                return;
            }
            Packet s = sb.get(k);
            if (!Seq.before(TcpSkbCb.seq(s), high)) {
                return;
            }
            if ((TcpSkbCb.sacked(s) & (LOST | RETRANS | SACKED)) == 0) {
                segment(s);
                sk.stack.mib().inc(Mib.TcpExtTCPForwardRetrans);
                s = sb.get(k);
                sk.prr.sent(TcpSkbCb.pcount(s));
            }
            forwardHint = TcpSkbCb.endSeq(s);
        }
    }

    /** The first pass: returns false when cwnd stopped it. */
    private boolean retransmitLost(Scoreboard sb) {
        for (int k = sb.firstEndingAfter(sb.retransHint()); k < sb.size(); k++) {
            if (sb.inFlight() >= sk.cc.sndCwnd) {
                return false;
            }
            Packet s = sb.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & LOST) == 0 || (bits & (RETRANS | SACKED)) != 0) {
                continue;
            }
            segment(s);
            // tcp_xmit_retransmit_queue's counters: a lost segment resent in Recovery (or Disorder, CWR) is a fast
            // retransmit, after an RTO (Loss) a slow-start retransmit.
            sk.stack.mib().inc(sk.cc.caState == CaState.LOSS ? Mib.TcpExtTCPSlowStartRetrans : Mib.TcpExtTCPFastRetrans);
            s = sb.get(k);
            sb.retransmittedUpTo(TcpSkbCb.endSeq(s));
            if (sk.cc.caState == CaState.RECOVERY) {
                sk.prr.sent(TcpSkbCb.pcount(s));
            }
        }
        return true;
    }

    /** Resends the head of the queue (the SYN, SYN-ACK or first data segment, after a timeout). */
    void head() {
        Packet s = sk.sb.head();
        if (s != null) {
            segment(s);
        }
    }

    /** tcp_retransmit_skb: sends {@code s} again. */
    void segment(Packet s) {
        if (Seq.before(TcpSkbCb.seq(s), sk.sndUna)) {
            s = trimHead(s);
        }
        int bits = TcpSkbCb.sacked(s);
        sk.undo.retransmitting(TcpSkbCb.pcount(s));
        sk.sb.retransmitting(s);
        int pcount = TcpSkbCb.pcount(s);
        sk.stats.totalRetrans += pcount;
        int payload = (int) Seq.sub(TcpSkbCb.endSeq(s), TcpSkbCb.seq(s)) - ((bits & (SEG_SYN | SEG_FIN)) != 0 ? 1 : 0);
        sk.stats.bytesRetrans += Math.max(0, payload);
        sk.stack.mib().add(Mib.TcpRetransSegs, pcount);
        sk.out.transmit(s, false);
    }

    /** Replaces a partly acknowledged queued segment with one holding only its unacknowledged bytes. */
    private Packet trimHead(Packet s) {
        int hl = sk.dataHeaderLen();
        int oldHl = (s.buf().getUnsignedByte(s.transport() + TcpSegment.DATA_OFF) >>> 4) * 4;
        long cut = Seq.sub(sk.sndUna, TcpSkbCb.seq(s));
        boolean fin = (TcpSkbCb.sacked(s) & SEG_FIN) != 0;
        int oldPayload = (int) Seq.sub(TcpSkbCb.endSeq(s), TcpSkbCb.seq(s)) - (fin ? 1 : 0);
        int len = (int) Math.max(0, oldPayload - cut);
        Packet n = sk.af.allocate(hl + len);
        n.buf().setBytes(n.transport() + hl, s.buf(), s.transport() + oldHl + (int) cut, len);
        TcpSkbCb.setSeq(n, sk.sndUna, TcpSkbCb.endSeq(s));
        TcpSkbCb.setSacked(n, TcpSkbCb.sacked(s));
        TcpSkbCb.setPcount(n, TcpSkbCb.pcount(s));
        if (len > sk.mssCache) {
            n.setGso(sk.af.gsoType(), sk.mssCache);
        }
        sk.sb.replaceHead(s, n);
        return n;
    }
}
