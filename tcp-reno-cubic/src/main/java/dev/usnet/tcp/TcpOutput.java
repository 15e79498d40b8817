package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.SEG_FIN;
import static dev.usnet.tcp.TcpSkbCb.SEG_PSH;
import static dev.usnet.tcp.TcpSkbCb.SEG_SYN;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.cc.CaEvent;
import dev.usnet.tcp.cc.CaState;
import io.netty.buffer.ByteBuf;

/**
 * What a connection sends (tcp_output.c): new data within cwnd and the peer's window in segments of up to the
 * TSO size goal, with Nagle's algorithm and Minshall's rule (tcp_write_xmit); the SYN, SYN-ACK and FIN that
 * occupy sequence space; pure ACKs with SACK blocks, probes and resets. Every header is written here, by one
 * writer; a queued segment goes to IP as a clone, as tcp_transmit_skb does.
 */
final class TcpOutput {
    /** The Ethernet header in front of the network header: a segment's frame is its TCP bytes plus both. */
    private static final int ETH_HEADER = EthernetFrame.HEADER_LEN;

    private final TcpSock sk;
    private final long[] sackStartOut = new long[TcpOptions.MAX_SACK_BLOCKS];
    private final long[] sackEndOut = new long[TcpOptions.MAX_SACK_BLOCKS];

    TcpOutput(TcpSock sk) {
        this.sk = sk;
    }

    /** tcp_push_pending_frames. */
    void pushPending() {
        TcpState st = sk.state;
        if (st == TcpState.ESTABLISHED || st == TcpState.CLOSE_WAIT || st == TcpState.FIN_WAIT1
                || st == TcpState.LAST_ACK || st == TcpState.CLOSING) {
            writeXmit();
        }
    }

    /**
     * Whether new data could go out right now: cwnd has room, data is waiting, and the peer's window takes a full
     * segment (or all that is left). A flow for which this is false is cwnd-, window- or application-limited.
     */
    boolean canSendNewData() {
        int queued = sk.sendBuf.size();
        return queued > 0 && sk.cc.sndCwnd > sk.sb.inFlight() && sk.sendWindowLeft() >= Math.min(queued, sk.mssCache);
    }

    /** tcp_write_xmit: retransmits what is marked lost, then sends new data within cwnd and the peer's window. */
    void writeXmit() {
        TcpState st = sk.state;
        if (st == TcpState.SYN_SENT || st == TcpState.SYN_RECV || st == TcpState.CLOSED
                || st == TcpState.LISTEN || st == TcpState.TIME_WAIT) {
            return;
        }
        Scoreboard sb = sk.sb;
        if (sb.lostOut() > 0 || sk.cc.caState == dev.usnet.tcp.cc.CaState.RECOVERY) {
            sk.retransmit.xmitQueue();
        }
        boolean cwndLimited = false;
        boolean sent = false;
        int roundSegs = 0;
        while (sk.sendBuf.size() > 0 || sk.finQueued && !sk.finSent) {
            long inflight = sb.inFlight();
            if (inflight >= sk.cc.sndCwnd) {
                cwndLimited = true;
                break;
            }
            int avail = sk.sendBuf.size();
            if (avail == 0) {
                // Only the FIN is left.
                sk.finSent = true;
                queueControl(SEG_FIN);
                sent = true;
                break;
            }
            long wndLeft = sk.sendWindowLeft();
            boolean smallUnacked = sb.packetsOut() > 0 && Seq.after(sk.sndSml, sk.sndUna);
            int len = nextSegmentLength(avail, inflight, wndLeft, smallUnacked);
            if (len == WINDOW_SHUT) {
                if (sb.packetsOut() == 0) {
                    sk.timers.armProbe0();
                }
                break;
            }
            if (len == NAGLE_HOLDS || len == CORK_HOLDS) {
                break;
            }
            if (sk.tsq.throttled(len + sk.dataHeaderLen() + sk.af.netHeaderLen() + ETH_HEADER)) {
                // TCP small queues: enough of this connection waits below TCP; a completion resumes it.
                break;
            }
            boolean fin = sk.finQueued && !sk.finSent && len == avail;
            // PSH as the kernel's traces show it: on the tail of the write (tcp_push marks it), and on the last
            // segment of a round cut short by cwnd, the peer's window or Nagle when that round ends a whole chunk of
            // tcp_min_tso_segs (2) segments, the unit tcp_tso_autosize cuts a round into at these rates; a round
            // ending in a lone segment (one limited-transmit segment, five segments of cwnd) carries none. A tail
            // TCP_CORK or MSG_MORE holds keeps the mark. Whether this is the round's last segment is the same
            // computation one segment ahead, on the state this one leaves.
            int mss = sk.mssCache;
            int pcount = Math.max(1, (len + mss - 1) / mss);
            roundSegs += pcount;
            int next = nextSegmentLength(avail - len, inflight + pcount, wndLeft - len, smallUnacked || len < mss);
            boolean last = len == avail
                    || next < 0 && next != CORK_HOLDS && roundSegs % MIN_TSO_SEGS == 0;
            sendNewSegment(len, fin, last);
            sent = true;
        }
        if (sent || cwndLimited) {
            sk.cwv.validate(cwndLimited || sb.inFlight() >= sk.cc.sndCwnd);
        }
        if (sent) {
            sk.tlp.schedule();
        }
    }

    /** tcp_min_tso_segs: the fewest segments tcp_tso_autosize puts in one chunk of a round. */
    private static final int MIN_TSO_SEGS = 2;

    /** The peer's window does not take a full segment (or all that is left): {@link #nextSegmentLength}. */
    private static final int WINDOW_SHUT = -1;
    /** Nagle holds a small tail while small data is unacknowledged: {@link #nextSegmentLength}. */
    private static final int NAGLE_HOLDS = -2;
    /** TCP_CORK or MSG_MORE holds a small tail: {@link #nextSegmentLength}. */
    private static final int CORK_HOLDS = -4;

    /**
     * How many of {@code avail} queued bytes the next new segment carries with {@code inflight} packets in
     * flight and {@code wndLeft} bytes of the peer's window open, or why none: {@link #WINDOW_SHUT},
     * {@link #NAGLE_HOLDS}, {@link #CORK_HOLDS}, or -3 when cwnd is full. {@code smallUnacked}: a segment shorter
     * than the MSS is unacknowledged (Minshall's rule). Pure: it changes nothing, so it can also look one segment
     * ahead.
     */
    private int nextSegmentLength(int avail, long inflight, long wndLeft, boolean smallUnacked) {
        if (avail <= 0) {
            return 0;
        }
        if (inflight >= sk.cc.sndCwnd) {
            return -3;
        }
        int mss = sk.mssCache;
        long quota = sk.cc.sndCwnd - inflight;
        long goal = Math.min(sk.sizeGoal, quota * mss);
        int len = (int) Math.min(avail, goal);
        if (wndLeft < Math.min(len, mss)) {
            // tcp_snd_wnd_test: at least one full segment (or all that is left) must fit the window.
            return WINDOW_SHUT;
        }
        len = (int) Math.min(len, wndLeft);
        if (len > mss) {
            len = len / mss * mss;
        }
        if (len == avail && sk.finQueued && !sk.finSent) {
            // tcp_nagle_test: the segment carrying the final FIN is never held, by Nagle or by a cork.
            return len;
        }
        if (len < mss && len == avail && (sk.cork || sk.moreComing)) {
            // tcp_nagle_check with TCP_NAGLE_CORK: a partial segment waits for more data, whatever is in flight.
            return CORK_HOLDS;
        }
        if (len < mss && len == avail && !sk.nodelay && smallUnacked) {
            // Nagle with Minshall's rule: one small segment in flight at a time.
            return NAGLE_HOLDS;
        }
        return len;
    }

    /** Takes {@code len} bytes off the send buffer into a new segment (with the FIN when {@code fin}) and sends it. */
    void sendNewSegment(int len, boolean fin) {
        sendNewSegment(len, fin, sk.sendBuf.size() == len);
    }

    /** As {@link #sendNewSegment(int, boolean)}, with PSH when {@code push}. */
    void sendNewSegment(int len, boolean fin, boolean push) {
        int mss = sk.mssCache;
        int hl = sk.dataHeaderLen();
        Packet seg = sk.af.allocate(hl + len);
        sk.sendBuf.take(seg.buf(), seg.transport() + hl, len);
        long seq = sk.sndNxt;
        long end = Seq.add(seq, len + (fin ? 1 : 0));
        TcpSkbCb.setSeq(seg, seq, end);
        TcpSkbCb.setSacked(seg, fin ? SEG_FIN : 0);
        int pcount = Math.max(1, (len + mss - 1) / mss);
        TcpSkbCb.setPcount(seg, pcount);
        if (pcount > 1) {
            seg.setGso(sk.af.gsoType(), mss);
        }
        if (fin) {
            sk.finSent = true;
        }
        dataSent();
        sk.sb.queued(seg, pcount);
        sk.sndNxt = end;
        if (len < mss) {
            sk.sndSml = end;
        }
        if (sk.cc.caState == CaState.RECOVERY) {
            sk.prr.sent(pcount);
        }
        sk.stats.dataSegsOut += pcount;
        sk.stats.bytesSent += len;
        transmit(seg, len > 0 && push);
        sk.timers.ensureRto();
    }

    /**
     * tcp_event_data_sent and CA_EVENT_TX_START: tells congestion control when data starts flowing again after
     * nothing was in flight, and applies RFC 2861's restart after idle.
     */
    private void dataSent() {
        long now = sk.stack.now();
        if (sk.sb.inFlight() == 0) {
            sk.ops.cwndEvent(sk.cc, CaEvent.TX_START);
        }
        long idle = now - sk.lastSendNanos;
        if (sk.tcp.slowStartAfterIdle() && sk.sb.packetsOut() == 0 && idle > sk.rtt.rtoNanos) {
            sk.cwv.restart(idle);
        }
        sk.lastSendNanos = now;
        sk.delack.dataSent(now);
    }

    /** A SYN, SYN-ACK or bare FIN that occupies sequence space and is retransmitted until acknowledged. */
    void queueControl(int kind) {
        boolean syn = kind == SEG_SYN;
        int optLen = syn ? synOptionsLength() : (sk.tsOk ? 12 : 0);
        Packet seg = sk.af.allocate(TcpSegment.MIN_HEADER_LEN + optLen);
        long seq = sk.sndNxt;
        TcpSkbCb.setSeq(seg, seq, Seq.add(seq, 1));
        TcpSkbCb.setSacked(seg, kind);
        TcpSkbCb.setPcount(seg, 1);
        sk.sb.queued(seg, 1);
        sk.sndNxt = Seq.add(seq, 1);
        if (!syn) {
            sk.lastSendNanos = sk.stack.now();
        }
        transmit(seg, false);
        sk.timers.ensureRto();
    }

    private int synOptionsLength() {
        return TcpOptions.synLength(sk.sackOk, sk.tsOk, sk.wscaleOk);
    }

    /**
     * tcp_transmit_skb: fills in the header of a queued segment and sends a clone; the original stays in the
     * retransmission queue. A segment whose previous clone is still held somewhere gets private data first,
     * so the in-flight copy never changes under its holder.
     */
    void transmit(Packet seg, boolean push) {
        if (seg.isShared()) {
            seg.copyAll(null);
        }
        int bits = TcpSkbCb.sacked(seg);
        if (push && (bits & SEG_PSH) == 0) {
            // The mark stays with the queued segment (tcp_flags), so a retransmission is pushed as the original was.
            bits |= SEG_PSH;
            TcpSkbCb.setSacked(seg, bits);
        }
        boolean syn = (bits & SEG_SYN) != 0;
        boolean fin = (bits & SEG_FIN) != 0;
        int flags = syn ? TcpSegment.SYN : 0;
        if (!syn || sk.state == TcpState.SYN_RECV) {
            flags |= TcpSegment.ACK_FLAG;
        }
        if (fin) {
            flags |= TcpSegment.FIN;
        }
        // A bare FIN is an ACK and a FIN only (tcp_send_fin); PSH rides on data.
        if ((bits & SEG_PSH) != 0) {
            flags |= TcpSegment.PSH;
        }
        ByteBuf b = seg.buf();
        int t = seg.transport();
        if (syn) {
            writeSynHeader(b, t, TcpSkbCb.seq(seg), flags);
        } else {
            writeHeader(b, t, TcpSkbCb.seq(seg), flags, false);
        }
        TcpSkbCb.setTxNanos(seg, sk.stack.now());
        sk.af.sendCheck(sk, seg);
        Packet c = seg.cloneShared();
        sk.tsq.charge(c);
        if ((flags & TcpSegment.ACK_FLAG) != 0) {
            sk.delack.ackSent();
        }
        // Linux counts a TSO segment as the MSS-sized segments it becomes (tcp_skb_pcount).
        int segs = Math.max(1, TcpSkbCb.pcount(seg));
        sk.stats.segsOut += segs;
        sk.stack.mib().add(Mib.TcpOutSegs, segs);
        sk.af.queueXmit(sk, c);
    }

    /**
     * Writes a non-SYN header with timestamps (and the SACK blocks to report when {@code withSack}); returns
     * where it ends.
     */
    private int writeHeader(ByteBuf b, int t, long seq, int flags, boolean withSack) {
        int sackN = withSack && sk.sackOk ? sk.rq.writeSackBlocks(sackStartOut, sackEndOut, sackRoom()) : 0;
        int optLen = (sk.tsOk ? 12 : 0) + (sackN > 0 ? 4 + 8 * sackN : 0);
        int hl = TcpSegment.MIN_HEADER_LEN + optLen;
        int window = (flags & TcpSegment.RST) != 0 ? 0 : sk.rwnd.selectWindow();
        long ack = (flags & TcpSegment.ACK_FLAG) != 0 ? sk.rcvNxt : 0;
        int i = TcpSegment.writeHeader(b, t, sk.lport, sk.rport, seq, ack, hl, flags, window);
        if (sk.tsOk) {
            i = TcpOptions.writeTimestamp(b, i, sk.tsNow(), sk.tsRecentValid ? sk.tsRecent : 0);
        }
        if (sackN > 0) {
            i = TcpOptions.writeSack(b, i, sackStartOut, sackEndOut, sackN);
        }
        return i;
    }

    /** A SYN's header: MSS, SACK-permitted, timestamps and window scale in Linux's layout, the window unscaled. */
    private int writeSynHeader(ByteBuf b, int t, long seq, int flags) {
        int hl = TcpSegment.MIN_HEADER_LEN + synOptionsLength();
        long ack = (flags & TcpSegment.ACK_FLAG) != 0 ? sk.rcvNxt : 0;
        int window = sk.rwnd.selectSynWindow();
        int i = TcpSegment.writeHeader(b, t, sk.lport, sk.rport, seq, ack, hl, flags, window);
        return TcpOptions.writeSyn(b, i, sk.advMss, sk.sackOk, sk.tsOk, sk.tsNow(),
                sk.tsRecentValid ? sk.tsRecent : 0, sk.wscaleOk ? sk.rcvWscale : -1);
    }

    /** Room for SACK blocks: 4, or 3 next to timestamps. */
    private int sackRoom() {
        return sk.tsOk ? SelectiveAcks.MAX_BLOCKS - 1 : SelectiveAcks.MAX_BLOCKS;
    }

    /** A pure ACK (with SACK blocks when out-of-order data is held, or a D-SACK is owed). */
    void sendAck() {
        TcpState st = sk.state;
        if (st == TcpState.CLOSED || st == TcpState.SYN_SENT || st == TcpState.LISTEN) {
            return;
        }
        int sackN = sk.sackOk ? sk.rq.sackBlocksPending(sackRoom()) : 0;
        int optLen = (sk.tsOk ? 12 : 0) + (sackN > 0 ? 4 + 8 * sackN : 0);
        Packet p = sk.af.allocate(TcpSegment.MIN_HEADER_LEN + optLen);
        int end = writeHeader(p.buf(), p.transport(), sk.sndNxt, TcpSegment.ACK_FLAG, sackN > 0);
        // The SACK block count may merge to fewer than reserved: shrink the frame to what was written.
        p.trim(end - p.start());
        sk.af.sendCheck(sk, p);
        sk.delack.ackSent();
        sk.stats.segsOut++;
        sk.stack.mib().inc(Mib.TcpOutSegs);
        sk.af.queueXmit(sk, p);
    }

    /** tcp_send_challenge_ack (RFC 5961): a SYN or an inexact RST inside the window is answered with an ACK. */
    void sendChallengeAck() {
        sk.stack.mib().inc(Mib.TcpExtTCPChallengeACK);
        sendAck();
    }

    /** A keep-alive or zero-window probe: an ACK with an already acknowledged sequence number. */
    void sendProbe() {
        Packet p = sk.af.allocate(TcpSegment.MIN_HEADER_LEN + (sk.tsOk ? 12 : 0));
        writeHeader(p.buf(), p.transport(), Seq.add(sk.sndUna, -1), TcpSegment.ACK_FLAG, false);
        sk.af.sendCheck(sk, p);
        sk.stats.segsOut++;
        sk.stack.mib().inc(Mib.TcpOutSegs);
        sk.af.queueXmit(sk, p);
    }

    /** tcp_send_active_reset: this side aborts the connection. */
    void sendActiveReset() {
        Packet p = sk.af.allocate(TcpSegment.MIN_HEADER_LEN + (sk.tsOk ? 12 : 0));
        writeHeader(p.buf(), p.transport(), sk.sndNxt, TcpSegment.RST | TcpSegment.ACK_FLAG, false);
        sk.af.sendCheck(sk, p);
        sk.stack.mib().inc(Mib.TcpOutRsts);
        sk.stats.segsOut++;
        sk.af.queueXmit(sk, p);
    }

    /**
     * A SYN-ACK that no socket keeps (a SYN cookie's, tcp_v4_send_synack for a request freed at once): the
     * options and window a fresh child would offer on {@code rt} — MSS, SACK-permitted, timestamps
     * ({@code tsVal}, echoing {@code tsEcr}) and window scale in Linux's layout — never retransmitted.
     */
    static void sendStatelessSynAck(Tcp tcp, TcpAfOps af, Packet syn, dev.usnet.core.route.Dst rt, int lport,
            int rport, long iss, long rcvNxt, boolean sack, boolean ts, long tsVal, long tsEcr, boolean wscale) {
        var knobs = tcp.stack().knobs();
        int advMss = af.advMss(rt);
        long rcvbuf = knobs.get(TcpSysctl.RMEM).max();
        int ws = wscale ? TcpSock.windowScaleFor(rcvbuf) : -1;
        boolean autotune = knobs.get(TcpSysctl.BUFFERS) == TcpSysctl.BufferMode.AUTOTUNE;
        int optLen = TcpOptions.synLength(sack, ts, wscale);
        int hl = TcpSegment.MIN_HEADER_LEN + optLen;
        Packet p = af.allocate(hl);
        ByteBuf b = p.buf();
        int t = p.transport();
        int unit = ts ? advMss - 12 : advMss;
        // As a child's SYN-ACK would: tcp_rmem default's initial window (autotune), or the whole maximum.
        int window = autotune
                ? (int) Math.min(65_535, BufferAutotune.initialWindow(BufferAutotune.winFromSpace(knobs.get(TcpSysctl.RMEM).def(),
                        (int) knobs.get(TcpSysctl.ADV_WIN_SCALE)), Long.MAX_VALUE, unit, Math.max(ws, 0),
                        InitialRwndSysctl.rule(knobs)))
                : ReceiveWindow.synWindow(rcvbuf, unit);
        int i = TcpSegment.writeHeader(b, t, lport, rport, iss, rcvNxt, hl, TcpSegment.SYN | TcpSegment.ACK_FLAG,
                window);
        TcpOptions.writeSyn(b, i, advMss, sack, ts, tsVal, tsEcr, ws);
        af.sendSynAck(syn, rt, p);
    }

    /** A bare reset answering a segment this connection cannot accept (tcp_v4_send_reset). */
    void sendReset(long seq, long ackSeq, int flags) {
        sk.af.sendReset(sk, seq, ackSeq, flags);
    }
}
