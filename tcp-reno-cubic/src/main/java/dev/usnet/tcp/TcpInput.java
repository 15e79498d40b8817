package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.SEG_FIN;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.TcpSegment;

/**
 * What a connection does with a segment (tcp_rcv_state_process, tcp_validate_incoming, tcp_data_queue): the
 * handshake's replies, the checks every segment passes — PAWS (RFC 7323), the sequence window, RFC 5961's
 * answers to resets and SYNs inside the window — then the ACK, then the data and the FIN.
 */
final class TcpInput {
    private final TcpSock sk;

    TcpInput(TcpSock sk) {
        this.sk = sk;
    }

    /** A segment for this connection; {@code seg} and {@code o} are parsed views valid for this call. Owns p. */
    void rcv(Packet p, TcpSegment seg, TcpOptions o) {
        int gsoSegs = p.gsoSize() > 0 ? Math.max(1, (seg.payloadLength() + p.gsoSize() - 1) / p.gsoSize()) : 1;
        sk.stats.segsIn += gsoSegs;
        long now = sk.stack.now();
        int flags = seg.flags();
        if (sk.state == TcpState.SYN_SENT) {
            synSentRcv(p, seg, o, flags);
            return;
        }
        if (sk.state == TcpState.TIME_WAIT) {
            timewaitRcv(p, flags);
            return;
        }
        long seq = seg.seq();
        int payload = seg.payloadLength();
        long endSeq = Seq.add(seq, payload + ((flags & TcpSegment.SYN) != 0 ? 1 : 0) + ((flags & TcpSegment.FIN) != 0 ? 1 : 0));
        boolean rst = (flags & TcpSegment.RST) != 0;

        // PAWS (RFC 7323): a timestamp older than the last one in order is an old duplicate.
        if (sk.tsOk && o.hasTimestamp && sk.tsRecentValid && !rst && (int) (o.tsVal - sk.tsRecent) < 0) {
            sk.stack.mib().inc(Mib.TcpExtPAWSEstab);
            if (payload > 0 || !oowRateLimited(now)) {
                sendDupack(seq, Seq.add(seq, payload));
            }
            sk.stack.drop(p, DropReason.TCP_OLD_SEGMENT);
            return;
        }
        // tcp_sequence: the segment must overlap what we are willing to receive.
        if (!sequenceAcceptable(seq, endSeq)) {
            if (!rst && (payload > 0 && (flags & TcpSegment.SYN) == 0 || !oowRateLimited(now))) {
                sendDupack(seq, Seq.add(seq, payload));
            }
            sk.stack.drop(p, DropReason.TCP_OUT_OF_WINDOW);
            return;
        }
        if (rst) {
            // RFC 5961: only an exact match resets; anything else in the window gets a challenge ACK.
            if (seq == sk.rcvNxt) {
                p.release();
                sk.resetByPeer();
            } else {
                challengeAck(now);
                p.release();
            }
            return;
        }
        if ((flags & TcpSegment.SYN) != 0) {
            if (sk.state == TcpState.SYN_RECV && seq == sk.irs) {
                // Our SYN-ACK was lost: the peer retransmitted its SYN (tcp_check_req). Answer at once, at most
                // once per tcp_invalid_ratelimit, and restart the SYN-ACK timer from now with its current backoff;
                // the resend is not a timeout, so it does not count toward tcp_synack_retries.
                if (!oowRateLimited(now)) {
                    sk.retransmit.head();
                    sk.timers.armRto();
                }
            } else {
                challengeAck(now);
            }
            p.release();
            return;
        }
        if ((flags & TcpSegment.ACK_FLAG) == 0) {
            sk.stack.drop(p, DropReason.TCP_NO_ACK);
            return;
        }
        sk.lastRcvNanos = now;
        sk.keepalive.probesOut = 0;
        if (sk.state == TcpState.SYN_RECV) {
            long ack = seg.ack();
            // Our SYN-ACK must be acknowledged; a child made from a cookie has none outstanding (snd_una is past it).
            if (Seq.before(ack, sk.sndUna) || ack == sk.sndUna && !sk.fromCookie || Seq.after(ack, sk.sndNxt)) {
                sk.out.sendReset(seg.ack(), 0, TcpSegment.RST);
                sk.stack.drop(p, DropReason.TCP_INVALID_ACK);
                return;
            }
            TcpListener parent = sk.parent;
            if (parent != null && parent.acceptQueueFull()) {
                // tcp_check_req with a full accept queue: ignore the ACK; our SYN-ACK retransmission will
                // make the peer send it again, by when the application may have accepted.
                parent.countOverflow();
                sk.stack.drop(p, DropReason.TCP_LISTEN_OVERFLOW);
                return;
            }
            sk.established();
            sk.sndWnd = (long) seg.window() << sk.sndWscale;
            sk.maxWindow = sk.sndWnd;
            sk.sndWl1 = seq;
            sk.ack.process(ack, seg, o, now);
            sk.rtt.handshakeDone();
            if (sk.parent != null) {
                sk.parent.childEstablished(sk);
            }
        } else if (!sk.ack.ack(seg, o, now)) {
            sk.stack.drop(p, DropReason.TCP_INVALID_ACK);
            return;
        }
        if (sk.state == TcpState.CLOSED) {
            p.release();
            return;
        }
        // Remember the peer's timestamp only for segments that start at or before the left window edge.
        if (sk.tsOk && o.hasTimestamp && !Seq.after(seq, sk.rwnd.rcvWup)) {
            sk.tsRecent = o.tsVal;
            sk.tsRecentValid = true;
        }
        boolean fin = (flags & TcpSegment.FIN) != 0;
        if (payload > 0 && sk.tsOk && o.hasTimestamp) {
            sk.autotune.rcvRttMeasureTs(o.tsEcr, payload);
        }
        if (payload > 0 || fin) {
            TcpState st = sk.state;
            boolean afterPeerFin = st == TcpState.CLOSE_WAIT || st == TcpState.CLOSING || st == TcpState.LAST_ACK;
            if (st.receivesData()) {
                dataQueue(p, seg, seq, payload, fin, now);
            } else if (afterPeerFin && Seq.before(seq, sk.rcvNxt)) {
                // As tcp_rcv_state_process: after the peer's FIN only what starts before rcv_nxt goes on to the data
                // queue, a retransmission answered as old data. Bytes past the FIN never join the stream.
                long finSeq = Seq.add(sk.rcvNxt, -1);
                if (Seq.after(Seq.add(seq, payload), finSeq)) {
                    payload = (int) Math.max(0, Seq.sub(finSeq, seq));
                    fin = false;
                }
                dataQueue(p, seg, seq, payload, fin, now);
            } else {
                // New data (or a FIN) after the peer's FIN: the stream has ended.
                sk.stack.drop(p, DropReason.TCP_OUT_OF_WINDOW);
            }
        } else {
            p.release();
        }
        // Data first: a segment we send carries the ACK, so a pure one is needed only if nothing went out.
        sk.out.writeXmit();
        sk.delack.ackSndCheck();
    }

    /** tcp_send_challenge_ack: at most one per tcp_invalid_ratelimit per connection (the global limit is off). */
    private void challengeAck(long now) {
        if (!oowRateLimited(now)) {
            sk.out.sendChallengeAck();
        }
    }

    /** tcp_invalid_ratelimit (ms): the least time between two answers to out-of-window segments. */
    private static final long INVALID_RATELIMIT_NANOS = 500_000_000L;
    /** last_oow_ack_time: when the last such answer went out; NO_OOW_ACK before the first. */
    private static final long NO_OOW_ACK = Long.MIN_VALUE;
    private long lastOowAckNanos = NO_OOW_ACK;

    /**
     * tcp_oow_rate_limited: whether an answer now to a segment without data (a pure ACK, a RST, a SYN) would come
     * too soon after the last one; then it is skipped, so two misbehaving peers cannot make an ACK storm.
     */
    private boolean oowRateLimited(long now) {
        if (lastOowAckNanos != NO_OOW_ACK && now - lastOowAckNanos < INVALID_RATELIMIT_NANOS) {
            return true;
        }
        lastOowAckNanos = now;
        return false;
    }

    /** tcp_rcv_synsent_state_process: the answer to our SYN. */
    private void synSentRcv(Packet p, TcpSegment seg, TcpOptions o, int flags) {
        boolean ackFlag = (flags & TcpSegment.ACK_FLAG) != 0;
        if (ackFlag && (!Seq.after(seg.ack(), sk.iss) || Seq.after(seg.ack(), sk.sndNxt))) {
            if ((flags & TcpSegment.RST) == 0) {
                sk.out.sendReset(seg.ack(), 0, TcpSegment.RST);
            }
            sk.timers.synSentBadAck();
            sk.stack.drop(p, DropReason.TCP_INVALID_ACK);
            return;
        }
        if ((flags & TcpSegment.RST) != 0) {
            p.release();
            if (ackFlag) {
                sk.stack.mib().inc(Mib.TcpAttemptFails);
                sk.finish(TcpError.ECONNREFUSED);
            }
            return;
        }
        if ((flags & TcpSegment.SYN) == 0) {
            sk.stack.drop(p, DropReason.TCP_NO_ACK);
            return;
        }
        if (!ackFlag) {
            // Simultaneous open is rare and Linux peers never do it on purpose; reset rather than model it.
            sk.out.sendReset(0, Seq.add(seg.seq(), 1), TcpSegment.RST | TcpSegment.ACK_FLAG);
            sk.stack.drop(p, DropReason.TCP_NO_ACK);
            return;
        }
        long now = sk.stack.now();
        sk.lastRcvNanos = now;
        sk.adoptPeerSyn(seg, o);
        sk.computeMss();
        sk.maxWindow = sk.sndWnd;
        sk.established();
        sk.ack.process(seg.ack(), seg, o, now);
        sk.rtt.handshakeDone();
        p.release();
        sk.callbacks.connected(sk);
        if (sk.state != TcpState.ESTABLISHED) {
            return;
        }
        sk.out.sendAck();
        sk.out.writeXmit();
    }

    /** tcp_timewait_state_process: the peer's retransmitted FIN is answered again, and the wait restarts. */
    private void timewaitRcv(Packet p, int flags) {
        p.release();
        if ((flags & TcpSegment.RST) != 0) {
            return;
        }
        if ((flags & TcpSegment.FIN) != 0) {
            // The peer did not get our last ACK: answer again and restart the 2MSL wait.
            sk.out.sendAck();
            sk.timers.timewait.arm(TcpTimers.TCP_TIMEWAIT_NANOS);
            return;
        }
        if ((flags & TcpSegment.ACK_FLAG) != 0 && (flags & TcpSegment.SYN) == 0) {
            return;
        }
        sk.out.sendAck();
    }

    /**
     * tcp_send_dupack: a segment we cannot take is answered at once; when it carried data we already have, that
     * is a retransmission the peer need not have sent, reported as a D-SACK (RFC 2883) so its sender can tell.
     */
    private void sendDupack(long seq, long dataEnd) {
        if (Seq.after(dataEnd, seq) && Seq.before(seq, sk.rcvNxt)) {
            sk.stack.mib().inc(Mib.TcpExtDelayedACKLost);
            sk.delack.enterQuickAckMode();
            sk.rq.dsackSet(seq, Seq.after(dataEnd, sk.rcvNxt) ? sk.rcvNxt : dataEnd);
        }
        sk.out.sendAck();
    }

    /** tcp_sequence: the segment overlaps the window we offered. */
    private boolean sequenceAcceptable(long seq, long endSeq) {
        long wndEnd = Seq.add(sk.rcvNxt, sk.rwnd.remaining());
        return !Seq.before(endSeq, sk.rwnd.rcvWup) && !Seq.after(seq, wndEnd);
    }

    /** tcp_data_queue: in order into the receive queue, above a hole into the out-of-order queue, old data away. */
    private void dataQueue(Packet p, TcpSegment seg, long seq, int payload, boolean fin, long now) {
        if (payload > 0) {
            sk.stats.dataSegsIn += p.gsoSize() > 0 ? Math.max(1, (payload + p.gsoSize() - 1) / p.gsoSize()) : 1;
        }
        measureRcvMss(p, payload);
        sk.delack.dataReceived(payload, now);
        // Make the packet hold exactly its payload.
        int payloadStart = seg.payloadOffset();
        p.pull(payloadStart - p.start());
        p.trim(payload);
        TcpSkbCb.setSeq(p, seq, Seq.add(seq, payload));
        TcpSkbCb.setSacked(p, fin ? SEG_FIN : 0);
        ReceiveQueue rq = sk.rq;
        long rcvNxt = sk.rcvNxt;
        if (seq == rcvNxt || Seq.before(seq, rcvNxt) && Seq.after(Seq.add(seq, payload + (fin ? 1 : 0)), rcvNxt)) {
            if (rq.queuedBytes() + payload > sk.rcvbuf + sk.rcvMss && payload > 0 && seq == rcvNxt) {
                // The application is not reading and the peer ignored our window.
                sk.stack.mib().inc(Mib.TcpExtTCPRcvQDrop);
                sk.stack.drop(p, DropReason.TCP_RCVBUF_FULL);
                sk.delack.ackSoon();
                return;
            }
            if (Seq.before(seq, rcvNxt)) {
                // Starts below rcv_nxt: the part we already have is a duplicate.
                rq.dsackSet(seq, rcvNxt);
            }
            rq.queueInOrder(p);
            if (payload > 0) {
                // tcp_event_data_recv: the receiver's RTT and rcv_ssthresh.
                sk.autotune.dataReceived(payload);
            }
            rq.drainOutOfOrder();
            rq.advanceSacks();
            if (rq.hasOutOfOrder() || fin) {
                // Filling a hole or a FIN: tell the sender at once.
                sk.delack.quickAckNext();
            }
            sk.notifyReadable();
        } else if (Seq.after(seq, rcvNxt)) {
            rq.queueOutOfOrder(p);
            sk.delack.quickAckNext();
        } else {
            // Entirely old: a retransmission we already have. Answer at once with a D-SACK so the sender learns.
            sk.stack.mib().inc(Mib.TcpExtDelayedACKLost);
            sk.delack.enterQuickAckMode();
            rq.dsackSet(seq, Seq.add(seq, payload));
            sk.stack.drop(p, DropReason.TCP_OLD_DATA);
        }
        sk.delack.ackPending = true;
    }

    /** tcp_fin: the peer's FIN is in order; the stream ends and the state moves on. */
    void rcvFin() {
        if (sk.finReceived) {
            return;
        }
        sk.finReceived = true;
        sk.rcvNxt = Seq.add(sk.rcvNxt, 1);
        sk.delack.ackSoon();
        switch (sk.state) {
            case SYN_RECV, ESTABLISHED -> {
                sk.setState(TcpState.CLOSE_WAIT);
                // tcp_fin: the FIN of an open connection is acknowledged as in an interactive exchange (delayed,
                // so the ACK can ride on the reply or our own FIN).
                sk.delack.pingpong = true;
            }
            case FIN_WAIT1 -> {
                if (sk.finSent && !Seq.after(sk.sndNxt, sk.sndUna)) {
                    sk.enterTimeWait();
                } else {
                    sk.setState(TcpState.CLOSING);
                }
            }
            case FIN_WAIT2 -> sk.enterTimeWait();
            default -> { }
        }
        // Release data we will never receive.
        sk.rq.clearOutOfOrder();
        sk.notifyReadable();
    }

    /** tcp_measure_rcv_mss: the peer's segment size, from gso_size for a coalesced (GRO-like) segment. */
    private void measureRcvMss(Packet p, int payload) {
        int len = p.gsoSize() > 0 ? p.gsoSize() : payload;
        len = Math.min(len, sk.advMss);
        if (len > sk.rcvMss) {
            sk.rcvMss = len;
        }
    }
}
