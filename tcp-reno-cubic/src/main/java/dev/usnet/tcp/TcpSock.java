package dev.usnet.tcp;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.IpOutput;
import dev.usnet.core.route.Route;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.cc.CaEvent;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;
import dev.usnet.tcp.cc.CongestionOps;
import io.netty.buffer.ByteBuf;
import static dev.usnet.tcp.TcpSkbCb.EVER_RETRANS;
import static dev.usnet.tcp.TcpSkbCb.LOST;
import static dev.usnet.tcp.TcpSkbCb.RETRANS;
import static dev.usnet.tcp.TcpSkbCb.SACKED;
import static dev.usnet.tcp.TcpSkbCb.SEG_FIN;
import static dev.usnet.tcp.TcpSkbCb.SEG_SYN;
import java.util.ArrayDeque;

/**
 * One TCP connection (struct tcp_sock): RFC 9293's state machine with what Linux peers expect — MSS, window
 * scaling, timestamps, SACK, RTO per RFC 6298 with a 200 ms floor, SACK-based recovery with proportional rate
 * reduction (NewReno without SACK), delayed ACKs with quick-ack mode, Nagle, keep-alive, half-close and
 * TIME-WAIT. Congestion control is pluggable ({@link CongestionOps}) and sees the connection through
 * {@link CcSock}.
 *
 * <p>Sent segments stay in the retransmission queue as packets and what goes to IP is a clone, as
 * tcp_transmit_skb does: a forwarder on the path sees shared data and must copy before editing it. All
 * methods must be called on the namespace's scheduler thread.
 */
public final class TcpSock {
    /** What the application hears from a connection; all calls come on the namespace thread. */
    public interface Callbacks {
        /** The three-way handshake completed (active open). */
        default void connected(TcpSock s) {}

        /** Data (or the peer's FIN: {@link #read} returns -1) is waiting. */
        default void readable(TcpSock s) {}

        /** Room in the send buffer again after a short write. */
        default void writable(TcpSock s) {}

        /** The connection is gone; {@code error} says why. */
        default void closed(TcpSock s, TcpError error) {}
    }

    private static final Callbacks NO_CALLBACKS = new Callbacks() {};


    static final long TCP_TIMEWAIT_NANOS = 60_000_000_000L;
    static final long TCP_TIMEOUT_INIT_NANOS = 1_000_000_000L;
    static final long TCP_RTO_MAX_NANOS = 120_000_000_000L;
    static final long TCP_ATO_MIN_NANOS = 40_000_000L;
    static final long TCP_DELACK_MAX_NANOS = 200_000_000L;
    static final int TCP_MAX_QUICKACKS = 16;
    static final int GSO_MAX_SIZE = 65_535;

    final Tcp tcp;
    final NetStack stack;
    private final CcSock cc;

    /** What congestion control reads of this connection, read through at the moment of each call. */
    private final class CcView extends CcSock {
        CcView(dev.usnet.tcp.cc.CcSwitches sw, long cwnd) {
            super(sw, cwnd, 0x7fff_ffffL);
        }

        @Override
        public long nowNanos() {
            return stack.now();
        }

        @Override
        public int hz() {
            return stack.knobs().hz();
        }

        @Override
        public long sndNxt() {
            return sndNxt;
        }

        @Override
        public long lastSendNanos() {
            return lastSendNanos;
        }

        @Override
        public long packetsOut() {
            return packetsOut;
        }

        @Override
        public long srttUs() {
            return srttUs;
        }

        @Override
        public int mss() {
            return mssCache;
        }
    }
    private CongestionOps ops;
    private final TcpOptions opts = new TcpOptions();

    int laddr;
    int lport;
    int raddr;
    int rport;
    long key;
    private Route route;
    TcpState state = TcpState.CLOSED;
    TcpListener parent;
    private Callbacks callbacks = NO_CALLBACKS;
    private TcpError error = TcpError.NONE;
    private boolean orphan;
    private boolean closedNotified;

    // Negotiated options.
    private boolean tsOk;
    private boolean sackOk;
    private boolean wscaleOk;
    private int sndWscale;
    private int rcvWscale;
    private int peerMss = 536;
    private int advMss;
    private long tsOffset;
    private long tsRecent;
    private boolean tsRecentValid;

    // Send side (byte sequence numbers as unsigned 32-bit values in longs).
    private long iss;
    private long sndUna;
    private long sndNxt;
    private long sndWnd;
    private long sndWl1;
    private long sndSml;
    private long maxWindow;
    private int mssCache = 536;
    private int sizeGoal = 536;
    private final SendBuffer sendBuf;
    private final RtxQueue rtx = new RtxQueue();
    // End of the highest SACKed segment, and where the retransmission walk resumes (Linux's skb hints).
    private long highSackedEnd;
    // The ACK being processed carried a D-SACK (FLAG_DSACKING_ACK).
    private boolean lastAckDsack;
    private long retransHint;
    // net.ipv4.tcp_fack (Linux 2.6-4.14 default 1) and how far FACK has marked losses.
    private boolean fack;
    private long fackMarked;
    private boolean finQueued;
    private boolean finSent;
    private boolean writeBlocked;
    private boolean nodelay;

    // Scoreboard and recovery (packets_out, sacked_out, lost_out, retrans_out, high_seq, PRR).
    private long packetsOut;
    private long sackedOut;
    private long lostOut;
    private long retransOut;
    private long highSeq;
    private long prrDelivered;
    private long prrOut;
    private long reordering;
    private long maxPacketsOut;
    private long maxPacketsSeq;
    private boolean isCwndLimited;
    private long sndCwndUsed;
    private long sndCwndStampNanos;

    // RTT and RTO (RFC 6298).
    private long srttUs;
    private long rttvarUs;
    private long minRttUs = Long.MAX_VALUE;
    private long rtoNanos = TCP_TIMEOUT_INIT_NANOS;
    private int backoff;
    private int retransmits;
    private int probesOut;

    // Receive side.
    private long irs;
    private long rcvNxt;
    private long rcvWup;
    private long rcvWnd;
    private int rcvbuf;
    private boolean rcvbufLocked;
    private int rcvQueuedBytes;
    private final ArrayDeque<Packet> rcvQueue = new ArrayDeque<>();
    private final OfoQueue ofo = new OfoQueue();
    // The SACK blocks this receiver reports (tp->selective_acks, tp->duplicate_sack); net.ipv4.tcp_dsack.
    private final SelectiveAcks selectiveAcks = new SelectiveAcks();
    private boolean dsackOk;
    private boolean finReceived;
    private int rcvMss = 536;

    // Delayed ACK (icsk_ack).
    private boolean ackPending;
    private int quickAcks;
    private boolean pingpong;
    private long atoNanos;
    private long lastRcvNanos;
    private long lrcvNanos;
    private long lastAckRcvNanos;

    // Keep-alive.
    private boolean keepalive;
    private int keepIdleS = -1;
    private int keepIntvlS = -1;
    private int keepCnt = -1;

    // Timers.
    private final SockTimer retransmitTimer;
    private final SockTimer delackTimer;
    private final SockTimer keepaliveTimer;
    private final SockTimer timewaitTimer;
    // What the retransmission timer is armed for (icsk_pending): RTO, zero-window probe, or tail loss probe.
    private static final int TIMER_RTO = 0;
    private static final int TIMER_PROBE0 = 1;
    private static final int TIMER_TLP = 2;
    private static final int TIMER_EARLY_RETRANS = 3;
    private int timerKind = TIMER_RTO;
    // tlp_high_seq: snd_nxt when the outstanding loss probe went out, 0 when none is outstanding.
    private long tlpHighSeq;
    private boolean tlpPending;
    // Undo (RFC 3522, Eifel with timestamps): the TS value of the episode's first retransmission.
    private long retransStampTs;
    private boolean retransStamped;
    private boolean undoPossible;

    // Statistics for ss -ti.
    private long segsOut;
    private long segsIn;
    private long dataSegsOut;
    private long dataSegsIn;
    private long totalRetrans;
    private long rtoCount;
    private long bytesAcked;
    private long bytesReceived;
    private long bytesSent;
    private long bytesRetrans;
    private long lastSendNanos;
    private TcpTrace trace;

    TcpSock(Tcp tcp, int sndbuf, int rcvbuf) {
        this.tcp = tcp;
        this.stack = tcp.stack();
        this.cc = new CcView(tcp.ccSwitches(), tcp.initCwnd());
        this.ops = tcp.newCongestionOps(null);
        this.sendBuf = new SendBuffer(sndbuf);
        this.rcvbuf = rcvbuf;
        this.reordering = stack.knobs().get(TcpSysctl.REORDERING);
        this.fack = stack.knobs().get(TcpSysctl.FACK) != 0;
        this.dsackOk = stack.knobs().get(TcpSysctl.DSACK) != 0;
        var sched = stack.scheduler();
        this.retransmitTimer = new SockTimer(sched, this::retransmitTimerFired);
        this.delackTimer = new SockTimer(sched, this::delackTimerFired);
        this.keepaliveTimer = new SockTimer(sched, this::keepaliveTimerFired);
        this.timewaitTimer = new SockTimer(sched, this::timewaitTimerFired);
    }

    // ------------------------------------------------------------------------------------------------------
    // Application API

    public void setCallbacks(Callbacks cb) {
        this.callbacks = cb == null ? NO_CALLBACKS : cb;
    }

    public TcpState state() {
        return state;
    }

    public TcpError error() {
        return error;
    }

    public NetStack stack() {
        return stack;
    }

    public int localAddr() {
        return laddr;
    }

    public int localPort() {
        return lport;
    }

    public int remoteAddr() {
        return raddr;
    }

    public int remotePort() {
        return rport;
    }

    /** TCP_NODELAY: send small segments at once instead of holding them while data is unacknowledged. */
    public void setNoDelay(boolean on) {
        nodelay = on;
        if (on) {
            pushPending();
        }
    }

    public boolean noDelay() {
        return nodelay;
    }

    /** SO_KEEPALIVE with TCP_KEEPIDLE/TCP_KEEPINTVL/TCP_KEEPCNT; -1 takes the namespace's net.ipv4.tcp_keepalive_*. */
    public void setKeepAlive(boolean on, int idleS, int intvlS, int cnt) {
        keepalive = on;
        keepIdleS = idleS;
        keepIntvlS = intvlS;
        keepCnt = cnt;
        if (on && state == TcpState.ESTABLISHED) {
            keepaliveTimer.arm(keepIdleNanos());
        } else if (!on) {
            keepaliveTimer.cancel();
        }
    }

    /** TCP_CONGESTION: switches this connection's congestion control ("reno", "cubic"). */
    public void setCongestionControl(String name) {
        CongestionOps n = tcp.newCongestionOps(name);
        ops = n;
        ops.init(cc);
    }

    public String congestionControl() {
        return ops.name();
    }

    /** SO_SNDBUF: bytes the application may have written and TCP not yet sent. */
    public void setSendBufferSize(int bytes) {
        sendBuf.resize(Math.max(4096, bytes));
    }

    /** SO_RCVBUF: bytes of received data held for the application (sets the advertised window). */
    public void setReceiveBufferSize(int bytes) {
        rcvbuf = Math.max(4096, bytes);
        rcvbufLocked = true;
    }

    /** Records cwnd, ssthresh, snd_cwnd_cnt and RTT on every ACK and congestion event into {@code t}. */
    public void setTrace(TcpTrace t) {
        this.trace = t;
        if (t != null) {
            t.record(stack.now(), cc, srttUs, packetsInFlight(), "start");
        }
    }

    /** Bytes the peer acknowledged so far (tcpi_bytes_acked), without building a {@link TcpInfo}. */
    public long bytesAcked() {
        return bytesAcked;
    }

    /** The initial send sequence number (ISS) this connection chose. */
    long initialSendSequence() {
        return iss;
    }

    /** Segments retransmitted so far (tcpi_total_retrans). */
    public long totalRetrans() {
        return totalRetrans;
    }

    /** Retransmission timeouts so far. */
    public long timeouts() {
        return rtoCount;
    }

    /** snd_cwnd in segments. */
    public long cwnd() {
        return cc.sndCwnd;
    }

    /** Bytes that {@link #write} would take now. */
    public int writableBytes() {
        return canSend() ? sendBuf.free() : 0;
    }

    /** Bytes waiting to be read. */
    public int readableBytes() {
        return rcvQueuedBytes;
    }

    /**
     * send(): copies up to {@code len} bytes into the send buffer and sends what cwnd and the peer's window
     * allow. Returns the bytes taken (less than {@code len} when the buffer is full: wait for
     * {@link Callbacks#writable}), or -1 when the connection can no longer send.
     */
    public int write(ByteBuf src, int off, int len) {
        if (!canSend()) {
            return state == TcpState.SYN_SENT || state == TcpState.SYN_RECV ? 0 : -1;
        }
        int n = sendBuf.write(src, off, len);
        if (n < len) {
            writeBlocked = true;
        }
        if (n > 0 && (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT)) {
            writeXmit();
        }
        return n;
    }

    /**
     * recv(): copies up to {@code max} bytes into {@code dst} (advancing its writer index). Returns the bytes
     * read, 0 when nothing is waiting, -1 at end of stream (the peer's FIN, or the connection is gone).
     */
    public int read(ByteBuf dst, int max) {
        return consume(dst, max);
    }

    /** Discards up to {@code max} received bytes without copying them (a sink); returns as {@link #read}. */
    public int skip(int max) {
        return consume(null, max);
    }

    /** Takes up to {@code max} bytes off the receive queue, copying them into {@code dst} unless it is null. */
    private int consume(ByteBuf dst, int max) {
        int done = 0;
        while (done < max && !rcvQueue.isEmpty()) {
            Packet p = rcvQueue.peekFirst();
            int n = Math.min(max - done, p.length());
            if (dst != null) {
                dst.writeBytes(p.buf(), p.start(), n);
            }
            done += n;
            if (n == p.length()) {
                rcvQueue.pollFirst();
                p.release();
            } else {
                p.pull(n);
            }
        }
        rcvQueuedBytes -= done;
        if (done > 0) {
            cleanupRbuf(done);
            return done;
        }
        return finReceived || state == TcpState.CLOSED || state == TcpState.TIME_WAIT ? -1 : 0;
    }

    /** shutdown(SHUT_WR): a FIN follows the data already written; reading goes on (half-close). */
    public void shutdownOutput() {
        if (finQueued) {
            return;
        }
        switch (state) {
            case ESTABLISHED -> setState(TcpState.FIN_WAIT1);
            case CLOSE_WAIT -> setState(TcpState.LAST_ACK);
            case SYN_SENT -> {
                finish(TcpError.NONE);
                return;
            }
            case SYN_RECV -> setState(TcpState.FIN_WAIT1);
            default -> {
                return;
            }
        }
        finQueued = true;
        writeXmit();
    }

    /**
     * close(): with unread data the connection is reset (as Linux does, TCPAbortOnData); otherwise a FIN is
     * sent after the data and the connection finishes on its own (FIN-WAIT-2 bounded by tcp_fin_timeout).
     */
    public void close() {
        orphan = true;
        callbacks = NO_CALLBACKS;
        if (state == TcpState.CLOSED) {
            // Reset by the peer with data unread: nobody will read it now.
            releaseReceiveQueue();
            return;
        }
        if (rcvQueuedBytes > 0 && state != TcpState.TIME_WAIT) {
            stack.mib().inc(Mib.TcpExtTCPAbortOnData);
            sendActiveReset();
            finish(TcpError.ECONNABORTED);
            return;
        }
        if (state == TcpState.LISTEN || state == TcpState.SYN_SENT) {
            finish(TcpError.NONE);
            return;
        }
        shutdownOutput();
        if (state == TcpState.FIN_WAIT2) {
            timewaitTimer.arm(stack.knobs().get(TcpSysctl.FIN_TIMEOUT) * 1_000_000_000L);
        }
    }

    /** Sends a reset and drops the connection at once (SO_LINGER with zero timeout). */
    public void abort() {
        if (state == TcpState.CLOSED || state == TcpState.TIME_WAIT) {
            finish(TcpError.NONE);
            return;
        }
        if (state != TcpState.SYN_SENT) {
            sendActiveReset();
        }
        finish(TcpError.ECONNABORTED);
    }

    long rcvNxtForTimeWait() {
        return rcvNxt;
    }

    /** A snapshot of the connection as {@code ss -ti} shows it. */
    public TcpInfo info() {
        return new TcpInfo(state, cc.caState, ops.name(), Ipv4Addr.format(laddr) + ":" + lport,
                Ipv4Addr.format(raddr) + ":" + rport, sendBuf.size(), rcvQueuedBytes,
                tsOk, sackOk, wscaleOk ? sndWscale : -1, wscaleOk ? rcvWscale : -1,
                rtoNanos / 1000, backoff, srttUs, rttvarUs, minRttUs == Long.MAX_VALUE ? 0 : minRttUs,
                atoNanos / 1000, mssCache, rcvMss, advMss, cc.sndCwnd, cc.sndSsthresh, cc.sndCwndCnt,
                bytesSent, bytesRetrans, bytesAcked, bytesReceived, segsOut, segsIn, dataSegsOut, dataSegsIn,
                packetsOut, retransOut, totalRetrans, lostOut, sackedOut, rtoCount, reordering,
                sndWnd, rcvWnd, isCwndLimited, lastSendNanos, lastRcvNanos, lastAckRcvNanos);
    }

    @Override
    public String toString() {
        return "tcp " + state.ssName() + " " + Ipv4Addr.format(laddr) + ":" + lport + " -> "
                + Ipv4Addr.format(raddr) + ":" + rport;
    }

    // ------------------------------------------------------------------------------------------------------
    // Opening

    /** The connection's 4-tuple, set before it is hashed. */
    void setAddresses(int localAddr, int localPort, int remoteAddr, int remotePort) {
        this.laddr = localAddr;
        this.lport = localPort;
        this.raddr = remoteAddr;
        this.rport = remotePort;
    }

    /** Active open (tcp_v4_connect + tcp_connect): sends the SYN. */
    void connect(Route rt) {
        open(rt);
        setState(TcpState.SYN_SENT);
        stack.mib().inc(Mib.TcpActiveOpens);
        queueControl(SEG_SYN);
    }

    /** Passive open: a SYN reached a listener; this child answers with a SYN-ACK (tcp_conn_request). */
    void acceptSyn(TcpListener l, Route rt, TcpSegment seg, TcpOptions o) {
        this.parent = l;
        open(rt);
        adoptPeerSyn(seg, o);
        computeMss();
        setState(TcpState.SYN_RECV);
        stack.mib().inc(Mib.TcpPassiveOpens);
        queueControl(SEG_SYN);
    }

    /** What both opens share: the route, our own options and what we offer, a random initial sequence number. */
    private void open(Route rt) {
        this.route = rt;
        initLocalOptions(rt);
        tsOk = stack.knobs().get(TcpSysctl.TIMESTAMPS) != 0;
        sackOk = stack.knobs().get(TcpSysctl.SACK) != 0;
        wscaleOk = stack.knobs().get(TcpSysctl.WINDOW_SCALING) != 0;
        iss = stack.random().nextLong(1L << 32);
        sndUna = iss;
        sndNxt = iss;
        highSackedEnd = iss;
        retransHint = iss;
        fackMarked = iss;
        sndSml = iss;
    }

    /**
     * What the peer's SYN (or SYN-ACK) settles: an option is used only when both sides offered it (our offer is
     * in tsOk/sackOk/wscaleOk); the peer's MSS (536 without the option, RFC 9293), its first timestamp, its
     * initial sequence number and its window, which a SYN never scales.
     */
    private void adoptPeerSyn(TcpSegment seg, TcpOptions o) {
        tsOk = tsOk && o.hasTimestamp;
        sackOk = sackOk && o.sackPermitted;
        wscaleOk = wscaleOk && o.hasWscale;
        sndWscale = wscaleOk ? o.wscale : 0;
        if (!wscaleOk) {
            rcvWscale = 0;
        }
        peerMss = o.hasMss ? o.mss : 536;
        if (tsOk) {
            tsRecent = o.tsVal;
            tsRecentValid = true;
        }
        irs = seg.seq();
        rcvNxt = Seq.add(irs, 1);
        rcvWup = rcvNxt;
        sndWnd = seg.window();
        sndWl1 = irs;
    }

    private void initLocalOptions(Route rt) {
        int mtu = rt.dev().mtu();
        advMss = Math.min(mtu - 40, 65_495);
        rcvMss = Math.min(advMss, 536);
        // Linux picks the smallest shift that lets the largest receive buffer fit the 16-bit window.
        // SO_RCVBUF set before connect() fixes the buffer (SOCK_RCVBUF_LOCK); otherwise tcp_rmem's maximum.
        long space = rcvbufLocked ? rcvbuf : Math.max(rcvbuf, stack.knobs().get(TcpSysctl.RMEM).max());
        int ws = 0;
        while (space > 65_535L << ws && ws < 14) {
            ws++;
        }
        rcvWscale = stack.knobs().get(TcpSysctl.WINDOW_SCALING) != 0 ? ws : 0;
        tsOffset = stack.random().nextLong(1L << 32);
        lastRcvNanos = stack.now();
        lastAckRcvNanos = lastRcvNanos;
    }

    private void computeMss() {
        int mtu = route.dev().mtu();
        int mss = Math.min(peerMss, mtu - 40);
        if (tsOk) {
            mss -= 12;
        }
        mssCache = Math.max(mss, 48);
        boolean tso = route.dev().gsoOffload() && stack.knobs().get(TcpSysctl.TSO) != 0;
        if (tso) {
            int max = GSO_MAX_SIZE - Ipv4Packet.MIN_HEADER_LEN - dataHeaderLen();
            sizeGoal = Math.max(mssCache, max / mssCache * mssCache);
        } else {
            sizeGoal = mssCache;
        }
    }

    private int dataHeaderLen() {
        return TcpSegment.MIN_HEADER_LEN + (tsOk ? 12 : 0);
    }

    private void established() {
        setState(TcpState.ESTABLISHED);
        ops.init(cc);
        // First data triggers quick-ack mode (tcp_incr_quickack via ato == 0).
        atoNanos = 0;
        lastSendNanos = stack.now();
        if (keepalive) {
            keepaliveTimer.arm(keepIdleNanos());
        }
    }

    // ------------------------------------------------------------------------------------------------------
    // Input

    /** A segment for this connection; {@code seg} and {@code o} are parsed views valid for this call. Owns p. */
    void rcv(Packet p, TcpSegment seg, TcpOptions o) {
        int gsoSegs = p.gsoSize() > 0 ? Math.max(1, (seg.payloadLength() + p.gsoSize() - 1) / p.gsoSize()) : 1;
        segsIn += gsoSegs;
        long now = stack.now();
        int flags = seg.flags();
        if (state == TcpState.SYN_SENT) {
            synSentRcv(p, seg, o, flags);
            return;
        }
        if (state == TcpState.TIME_WAIT) {
            timewaitRcv(p, seg, o, flags);
            return;
        }
        long seq = seg.seq();
        int payload = seg.payloadLength();
        long endSeq = Seq.add(seq, payload + ((flags & TcpSegment.SYN) != 0 ? 1 : 0) + ((flags & TcpSegment.FIN) != 0 ? 1 : 0));
        boolean rst = (flags & TcpSegment.RST) != 0;

        // PAWS (RFC 7323): a timestamp older than the last one in order is an old duplicate.
        if (tsOk && o.hasTimestamp && tsRecentValid && !rst && (int) (o.tsVal - tsRecent) < 0) {
            stack.mib().inc(Mib.TcpExtPAWSEstab);
            sendDupack(seq, Seq.add(seq, payload));
            stack.drop(p, DropReason.TCP_OLD_SEGMENT);
            return;
        }
        // tcp_sequence: the segment must overlap what we are willing to receive.
        if (!sequenceAcceptable(seq, endSeq)) {
            if (!rst) {
                sendDupack(seq, Seq.add(seq, payload));
            }
            stack.drop(p, DropReason.TCP_OUT_OF_WINDOW);
            return;
        }
        if (rst) {
            // RFC 5961: only an exact match resets; anything else in the window gets a challenge ACK.
            if (seq == rcvNxt) {
                p.release();
                resetByPeer();
            } else {
                sendChallengeAck();
                p.release();
            }
            return;
        }
        if ((flags & TcpSegment.SYN) != 0) {
            if (state == TcpState.SYN_RECV && seq == irs) {
                // Our SYN-ACK was lost: the peer retransmitted its SYN.
                retransmitHead();
            } else {
                sendChallengeAck();
            }
            p.release();
            return;
        }
        if ((flags & TcpSegment.ACK_FLAG) == 0) {
            stack.drop(p, DropReason.TCP_NO_ACK);
            return;
        }
        lastRcvNanos = now;
        probesOut = 0;
        if (state == TcpState.SYN_RECV) {
            long ack = seg.ack();
            if (!Seq.after(ack, sndUna) || Seq.after(ack, sndNxt)) {
                sendReset(seg.ack(), 0, TcpSegment.RST);
                stack.drop(p, DropReason.TCP_INVALID_ACK);
                return;
            }
            if (parent != null && parent.acceptQueueFull()) {
                // tcp_check_req with a full accept queue: ignore the ACK; our SYN-ACK retransmission will
                // make the peer send it again, by when the application may have accepted.
                parent.countOverflow();
                stack.drop(p, DropReason.TCP_LISTEN_OVERFLOW);
                return;
            }
            established();
            sndWnd = (long) seg.window() << sndWscale;
            maxWindow = sndWnd;
            sndWl1 = seq;
            cleanRtxAndAdvance(ack, seg, o, now);
            if (parent != null) {
                parent.childEstablished(this);
            }
        } else if (!ack(seg, o, seq, now)) {
            stack.drop(p, DropReason.TCP_INVALID_ACK);
            return;
        }
        if (state == TcpState.CLOSED) {
            p.release();
            return;
        }
        // Remember the peer's timestamp only for segments that start at or before the left window edge.
        if (tsOk && o.hasTimestamp && !Seq.after(seq, rcvWup)) {
            tsRecent = o.tsVal;
            tsRecentValid = true;
        }
        boolean fin = (flags & TcpSegment.FIN) != 0;
        if (payload > 0 || fin) {
            if (state.receivesData() || fin && (state == TcpState.CLOSE_WAIT || state == TcpState.CLOSING
                    || state == TcpState.LAST_ACK)) {
                dataQueue(p, seg, seq, payload, fin, now);
            } else {
                // Data after our side saw the peer's FIN: nothing sensible to do with it.
                stack.drop(p, DropReason.TCP_OUT_OF_WINDOW);
            }
        } else {
            p.release();
        }
        // Data first: a segment we send carries the ACK, so a pure one is needed only if nothing went out.
        writeXmit();
        ackSndCheck();
    }

    /**
     * tcp_send_dupack: a segment we cannot take is answered at once; when it carried data we already have, that
     * is a retransmission the peer need not have sent, reported as a D-SACK (RFC 2883) so its sender can tell.
     */
    private void sendDupack(long seq, long dataEnd) {
        if (Seq.after(dataEnd, seq) && Seq.before(seq, rcvNxt)) {
            stack.mib().inc(Mib.TcpExtDelayedACKLost);
            enterQuickAckMode();
            dsackSet(seq, Seq.after(dataEnd, rcvNxt) ? rcvNxt : dataEnd);
        }
        sendAck();
    }

    /** tcp_enter_quickack_mode: acknowledge the next segments at once. */
    private void enterQuickAckMode() {
        incrQuickAck();
        pingpong = false;
        atoNanos = TCP_ATO_MIN_NANOS;
    }

    /**
     * tcp_dsack_set: [{@code seq}, {@code end}) arrived twice; the next ACK reports it first (tcp_dsack_extend when
     * one is already pending). Only with SACK negotiated and net.ipv4.tcp_dsack on.
     */
    private void dsackSet(long seq, long end) {
        if (!sackOk || !dsackOk || !Seq.after(end, seq)) {
            return;
        }
        if (!selectiveAcks.hasDsack()) {
            stack.mib().inc(Seq.before(seq, rcvNxt) ? Mib.TcpExtTCPDSACKOldSent : Mib.TcpExtTCPDSACKOfoSent);
        }
        selectiveAcks.duplicate(seq, end);
    }

    private boolean sequenceAcceptable(long seq, long endSeq) {
        long wndEnd = Seq.add(rcvNxt, receiveWindowNow());
        return !Seq.before(endSeq, rcvWup) && !Seq.after(seq, wndEnd);
    }

    /** tcp_receive_window: what is left of the window last advertised. */
    private long receiveWindowNow() {
        long w = Seq.sub(Seq.add(rcvWup, rcvWnd), rcvNxt);
        return Math.max(0, w);
    }

    private void synSentRcv(Packet p, TcpSegment seg, TcpOptions o, int flags) {
        boolean ackFlag = (flags & TcpSegment.ACK_FLAG) != 0;
        if (ackFlag && (!Seq.after(seg.ack(), iss) || Seq.after(seg.ack(), sndNxt))) {
            if ((flags & TcpSegment.RST) == 0) {
                sendReset(seg.ack(), 0, TcpSegment.RST);
            }
            stack.drop(p, DropReason.TCP_INVALID_ACK);
            return;
        }
        if ((flags & TcpSegment.RST) != 0) {
            p.release();
            if (ackFlag) {
                stack.mib().inc(Mib.TcpAttemptFails);
                finish(TcpError.ECONNREFUSED);
            }
            return;
        }
        if ((flags & TcpSegment.SYN) == 0) {
            stack.drop(p, DropReason.TCP_NO_ACK);
            return;
        }
        if (!ackFlag) {
            // Simultaneous open is rare and Linux peers never do it on purpose; reset rather than model it.
            sendReset(0, Seq.add(seg.seq(), 1), TcpSegment.RST | TcpSegment.ACK_FLAG);
            stack.drop(p, DropReason.TCP_NO_ACK);
            return;
        }
        long now = stack.now();
        lastRcvNanos = now;
        adoptPeerSyn(seg, o);
        computeMss();
        maxWindow = sndWnd;
        established();
        cleanRtxAndAdvance(seg.ack(), seg, o, now);
        p.release();
        callbacks.connected(this);
        if (state != TcpState.ESTABLISHED) {
            return;
        }
        sendAck();
        writeXmit();
    }

    private void timewaitRcv(Packet p, TcpSegment seg, TcpOptions o, int flags) {
        p.release();
        if ((flags & TcpSegment.RST) != 0) {
            return;
        }
        if ((flags & TcpSegment.FIN) != 0) {
            // The peer did not get our last ACK: answer again and restart the 2MSL wait.
            sendAck();
            timewaitTimer.arm(TCP_TIMEWAIT_NANOS);
            return;
        }
        if ((flags & TcpSegment.ACK_FLAG) != 0 && (flags & TcpSegment.SYN) == 0) {
            return;
        }
        sendAck();
    }

    /**
     * tcp_ack: processes the acknowledgment and the window of an incoming segment. Returns false when the
     * segment acknowledges data never sent (it is answered with an ACK and dropped).
     */
    private boolean ack(TcpSegment seg, TcpOptions o, long seq, long now) {
        long ack = seg.ack();
        if (Seq.after(ack, sndNxt)) {
            sendAck();
            return false;
        }
        if (Seq.before(ack, sndUna)) {
            // An old duplicate ACK: nothing to learn except possibly SACK information.
            if (sackOk && o.sackBlocks > 0) {
                sacktag(o, ack);
            }
            return true;
        }
        cleanRtxAndAdvance(ack, seg, o, now);
        return true;
    }

    /** The heart of tcp_ack once the ACK is known to be acceptable. */
    private void cleanRtxAndAdvance(long ack, TcpSegment seg, TcpOptions o, long now) {
        long priorUna = sndUna;
        long priorSacked = sackedOut;
        lastAckRcvNanos = now;
        boolean windowUpdate = updateWindow(seg, ack, seg.seq());
        long newlySacked = 0;
        lastAckDsack = false;
        if (sackOk && o.sackBlocks > 0) {
            newlySacked = sacktag(o, ack);
            if (newlySacked > 0 && retransOut > 0) {
                markLostRetrans();
            }
        }
        long pktsAcked = 0;
        long seqRttUs = -1;
        long caRttUs = -1;
        boolean retransAcked = false;
        long firstTx = Long.MIN_VALUE;
        long lastTx = Long.MIN_VALUE;
        long sackedAcked = 0;
        long synAcked = 0;
        while (!rtx.isEmpty()) {
            Packet s = rtx.peekFirst();
            if (Seq.after(TcpSkbCb.endSeq(s), ack)) {
                // Partly acknowledged (a TSO segment): count the MSS-sized pieces that are done.
                if (Seq.after(ack, TcpSkbCb.seq(s))) {
                    long remaining = Seq.sub(TcpSkbCb.endSeq(s), ack);
                    int newPcount = (int) Math.max(1, (remaining + mssCache - 1) / mssCache);
                    int done = TcpSkbCb.pcount(s) - newPcount;
                    if (done > 0) {
                        pktsAcked += done;
                        adjustCounters(s, -done);
                        TcpSkbCb.setPcount(s, newPcount);
                    }
                }
                break;
            }
            rtx.pollFirst();
            int bits = TcpSkbCb.sacked(s);
            int pc = TcpSkbCb.pcount(s);
            if ((bits & SACKED) != 0) {
                sackedOut -= pc;
                sackedAcked += pc;
            }
            if ((bits & LOST) != 0) {
                lostOut -= pc;
            }
            if ((bits & RETRANS) != 0) {
                retransOut -= pc;
            }
            if ((bits & SEG_SYN) != 0) {
                synAcked++;
            }
            if ((bits & EVER_RETRANS) != 0) {
                retransAcked = true;
            } else {
                if (firstTx == Long.MIN_VALUE) {
                    firstTx = TcpSkbCb.txNanos(s);
                }
                lastTx = TcpSkbCb.txNanos(s);
            }
            packetsOut -= pc;
            pktsAcked += pc;
            s.release();
        }
        if (!sackOk) {
            // NewReno counts duplicate ACKs as "sacked" packets; a cumulative ACK consumes them.
            sackedOut = Math.max(0, sackedOut - pktsAcked);
        }
        long ackedBytes = Seq.sub(ack, priorUna);
        boolean advanced = ackedBytes > 0;
        boolean unaMoved = advanced;
        if (advanced) {
            sndUna = ack;
            keepMarksInWindow();
            bytesAcked += ackedBytes;
            backoff = 0;
            retransmits = 0;
        }
        if (firstTx != Long.MIN_VALUE) {
            seqRttUs = (now - firstTx) / 1000;
            caRttUs = (now - lastTx) / 1000;
        } else if (retransAcked && tsOk && o.hasTimestamp && o.tsEcr != 0) {
            // Karn: no send stamp is trustworthy after a retransmission, but the echoed timestamp is.
            long ms = Seq.sub(tsNow(), o.tsEcr);
            if (ms >= 0 && ms < 1L << 31) {
                seqRttUs = ms * 1000;
                caRttUs = seqRttUs;
            }
        }
        if (seqRttUs >= 0) {
            rttEstimator(Math.max(1, seqRttUs));
        }
        if (pktsAcked > 0) {
            ops.pktsAcked(cc, pktsAcked, caRttUs >= 0 ? Math.max(1, caRttUs) : -1);
        }
        boolean isDupAck = !advanced && !windowUpdate && seg.payloadLength() == 0
                && (seg.flags() & (TcpSegment.SYN | TcpSegment.FIN)) == 0 && packetsOut > 0;
        if (!sackOk && isDupAck) {
            addRenoSack();
        }
        // A SYN is not data: acknowledging it does not grow cwnd (FLAG_DATA_ACKED stays clear).
        long delivered = pktsAcked - synAcked - sackedAcked + newlySacked + (!sackOk && isDupAck ? 1 : 0);
        advanced = advanced && pktsAcked > synAcked;
        if (unaMoved && undoPossible && retransStamped && tsOk && o.hasTimestamp
                && (cc.caState == CaState.RECOVERY || cc.caState == CaState.LOSS)
                && Seq.before(o.tsEcr, retransStampTs)) {
            undoSpuriousReduction();
        }
        // tcp_check_sack_reneging: the cumulative ACK stops at a segment the peer SACKed, so the peer threw
        // that data away (it pruned its out-of-order queue). Recovery cannot trust the scoreboard: leave it to
        // an early RTO, which forgets the SACK marks.
        boolean reneged = sackOk && unaMoved && !rtx.isEmpty() && (TcpSkbCb.sacked(rtx.peekFirst()) & SACKED) != 0;
        if (state == TcpState.ESTABLISHED || state.ordinal() >= TcpState.FIN_WAIT1.ordinal()) {
            if (!reneged) {
                fastRetransAlert(advanced, isDupAck, pktsAcked, priorSacked, delivered);
            }
            congControl(ack, delivered, advanced);
        }
        if (tlpPending) {
            processTlpAck(ack, unaMoved, isDupAck, newlySacked);
        }
        // Re-arm the retransmission timer from this ACK (tcp_rearm_rto), then maybe a tail loss probe.
        if (packetsOut == 0) {
            if (timerKind != TIMER_PROBE0) {
                retransmitTimer.cancel();
            }
        } else if (unaMoved) {
            armRto();
        }
        if (timerKind == TIMER_RTO && retransmitTimer.isArmed()) {
            scheduleLossProbe();
        }
        if (reneged) {
            stack.mib().inc(Mib.TcpExtTCPSACKReneging);
            timerKind = TIMER_RTO;
            retransmitTimer.arm(Math.max(srttUs * 1000 / 16, 10_000_000L));
        }
        if (unaMoved) {
            finAckedTransitions();
            if (writeBlocked && sendBuf.free() >= sendBuf.capacity() / 3 && canSend()) {
                writeBlocked = false;
                callbacks.writable(this);
            }
        }
        if (trace != null) {
            trace.record(now, cc, srttUs, packetsInFlight(), advanced ? "ack" : "dupack");
        }
    }

    /**
     * The scoreboard's remembered sequence numbers never fall behind snd_una. They are compared modulo 2^32
     * (before/after), which is only meaningful within 2 GiB: a mark left behind while gigabytes flowed without a
     * loss — or left at 0 from before the connection chose its ISS — reads as lying ahead, and then FACK marked
     * nothing lost and the retransmission walk found nothing to send (a stall until the RTO, with a window of
     * SACKed data and dozens of holes).
     */
    private void keepMarksInWindow() {
        if (Seq.before(highSackedEnd, sndUna)) {
            highSackedEnd = sndUna;
        }
        if (Seq.before(fackMarked, sndUna)) {
            fackMarked = sndUna;
        }
        if (Seq.before(retransHint, sndUna)) {
            retransHint = sndUna;
        }
        if (Seq.before(sndSml, sndUna)) {
            sndSml = sndUna;
        }
    }

    /** tcp_ack_update_window (RFC 9293's SND.WL1/WL2 rule). Returns true when the window changed. */
    private boolean updateWindow(TcpSegment seg, long ack, long seq) {
        long nwin = (long) seg.window() << sndWscale;
        if (Seq.after(ack, sndUna) || Seq.after(seq, sndWl1) || seq == sndWl1 && nwin > sndWnd) {
            boolean changed = sndWnd != nwin;
            sndWl1 = seq;
            sndWnd = nwin;
            if (nwin > maxWindow) {
                maxWindow = nwin;
            }
            if (changed && nwin > 0 && timerKind == TIMER_PROBE0) {
                retransmitTimer.cancel();
                timerKind = TIMER_RTO;
                if (packetsOut > 0) {
                    armRto();
                }
            }
            return changed;
        }
        return false;
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
            stack.mib().inc(Mib.TcpExtTCPDSACKRecv);
            return true;
        }
        if (o.sackBlocks > 1 && !Seq.after(e0, o.sackEnd[1]) && !Seq.before(s0, o.sackStart[1])) {
            stack.mib().inc(Mib.TcpExtTCPDSACKOfoRecv);
            return true;
        }
        return false;
    }

    /**
     * Marks retransmission-queue segments covered by the SACK blocks (tcp_sacktag_write_queue); a D-SACK block
     * is skipped. Sets {@link #lastAckDsack}.
     */
    private long sacktag(TcpOptions o, long ack) {
        long newly = 0;
        lastAckDsack = isDsack(o, ack);
        for (int i = lastAckDsack ? 1 : 0; i < o.sackBlocks; i++) {
            long start = o.sackStart[i];
            long end = o.sackEnd[i];
            if (!Seq.after(end, start) || !Seq.after(end, sndUna) || Seq.after(end, sndNxt)) {
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
                    TcpSkbCb.setSacked(s, (bits | SACKED) & ~(LOST | RETRANS));
                    sackedOut += pc;
                    newly += pc;
                    if (Seq.after(TcpSkbCb.endSeq(s), highSackedEnd) || Seq.before(highSackedEnd, sndUna)) {
                        highSackedEnd = TcpSkbCb.endSeq(s);
                    }
                }
            }
        }
        return newly;
    }

    /**
     * tcp_mark_lost_retrans (Linux up to 4.3, before RACK): a retransmission is lost when the peer SACKs data we
     * sent after it (its snd_nxt at retransmission lies below the highest SACK). It is marked lost again so fast
     * recovery resends it, instead of waiting for the RTO.
     */
    private void markLostRetrans() {
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
                stack.mib().inc(Mib.TcpExtTCPLostRetransmit);
            }
        }
    }

    private void addRenoSack() {
        if (sackedOut + 1 < packetsOut) {
            sackedOut++;
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

    /** tcp_fastretrans_alert: moves between Open, Disorder, Recovery and Loss and marks lost segments. */
    private void fastRetransAlert(boolean advanced, boolean isDupAck, long pktsAcked, long priorSacked,
            long delivered) {
        CaState st = cc.caState;
        if (packetsOut == 0 && st != CaState.OPEN) {
            // Everything is acknowledged: whatever reduction was running is over.
            if (st == CaState.RECOVERY || st == CaState.CWR) {
                endCwndReduction();
            }
            setCaState(CaState.OPEN);
            return;
        }
        switch (st) {
            case RECOVERY -> {
                if (!Seq.before(sndUna, highSeq)) {
                    endCwndReduction();
                    setCaState(CaState.OPEN);
                    break;
                }
                if (!sackOk && advanced) {
                    // NewReno partial ACK: the next hole is lost too.
                    markHeadLost();
                }
                if (sackOk) {
                    updateScoreboard();
                }
            }
            case LOSS -> {
                if (!Seq.before(sndUna, highSeq)) {
                    setCaState(CaState.OPEN);
                    break;
                }
                if (sackOk) {
                    updateScoreboard();
                }
            }
            default -> {
                if (sackOk) {
                    updateScoreboard();
                }
                if (timeToRecover()) {
                    enterRecovery();
                } else if (earlyRetransEligible()) {
                    // RFC 5827 with Linux's mitigation: wait a quarter RTT (at least 2 ms) for reordering.
                    if (timerKind != TIMER_EARLY_RETRANS) {
                        timerKind = TIMER_EARLY_RETRANS;
                        retransmitTimer.arm(Math.max(srttUs * 1000 / 4, 2_000_000L));
                    }
                    if (st == CaState.OPEN) {
                        setCaState(CaState.DISORDER);
                    }
                } else if (sackedOut > 0 || retransOut > 0 || isDupAck) {
                    if (st == CaState.OPEN) {
                        setCaState(CaState.DISORDER);
                    }
                } else if (st == CaState.DISORDER) {
                    setCaState(CaState.OPEN);
                }
            }
        }
    }

    /** tcp_time_to_recover: a loss is already marked, or more than {@code reordering} segments arrived above a hole. */
    private boolean timeToRecover() {
        return lostOut > 0 || dupackHeuristic() > reordering;
    }

    /**
     * tcp_dupack_heuristics: with FACK (net.ipv4.tcp_fack, on by default until Linux 4.15) the distance from
     * snd_una to the highest SACKed segment; otherwise the SACKed (or duplicate-ACKed) count plus one.
     */
    private long dupackHeuristic() {
        if (sackOk && fack && sackedOut > 0 && Seq.after(highSackedEnd, sndUna)) {
            return (Seq.sub(highSackedEnd, sndUna) + mssCache - 1) / mssCache;
        }
        return sackedOut + 1;
    }

    /**
     * Early retransmit (RFC 5827, tcp_early_retrans): with fewer than four segments out there cannot be three
     * duplicate ACKs, so one SACKed segment above a hole is enough once nothing new can be sent.
     */
    private boolean earlyRetransEligible() {
        if (!sackOk || retransOut > 0 || sackedOut == 0 || packetsOut < sackedOut + 1 || packetsOut >= 4) {
            return false;
        }
        boolean canSendNew = sendBuf.size() > 0 && cc.sndCwnd > packetsInFlight()
                && Seq.sub(Seq.add(sndUna, sndWnd), sndNxt) >= Math.min(sendBuf.size(), mssCache);
        return !canSendNew;
    }

    private void earlyRetransTimerFired() {
        timerKind = TIMER_RTO;
        if ((cc.caState == CaState.OPEN || cc.caState == CaState.DISORDER) && earlyRetransEligible()) {
            enterRecovery();
            xmitRetransmitQueue();
        }
        if (packetsOut > 0) {
            armRto();
        }
    }

    private void enterRecovery() {
        stack.mib().inc(sackOk ? Mib.TcpExtTCPSackRecovery : Mib.TcpExtTCPRenoRecovery);
        initCwndReduction();
        setCaState(CaState.RECOVERY);
        markHeadLost();
        if (sackOk) {
            updateScoreboard();
        }
    }

    /** tcp_init_cwnd_reduction: the loss halves (or beta-reduces) the window once per episode. */
    private void initCwndReduction() {
        highSeq = sndNxt;
        tlpPending = false;
        cc.sndCwndCnt = 0;
        cc.priorCwnd = cc.sndCwnd;
        cc.priorSsthresh = cc.sndSsthresh;
        prrDelivered = 0;
        prrOut = 0;
        cc.sndSsthresh = ops.ssthresh(cc);
        startUndoEpisode();
        traceEvent("recovery");
    }

    private void startUndoEpisode() {
        undoPossible = tsOk;
        retransStamped = false;
    }

    /**
     * tcp_try_undo_recovery / tcp_try_undo_loss with tcp_packet_delayed: this ACK echoes a timestamp older than our
     * first retransmission, so it acknowledges an original transmission — the loss was not real. cwnd goes back
     * to what congestion control says (undo_cwnd), ssthresh to its value before the reduction, and nothing stays
     * marked lost (tcp_undo_cwnd_reduction).
     */
    private void undoSpuriousReduction() {
        boolean fromLoss = cc.caState == CaState.LOSS;
        cc.sndCwnd = Math.max(cc.sndCwnd, ops.undoCwnd(cc));
        if (cc.priorSsthresh > cc.sndSsthresh) {
            cc.sndSsthresh = cc.priorSsthresh;
        }
        for (int k = 0; k < rtx.size(); k++) {
            Packet s = rtx.get(k);
            TcpSkbCb.setSacked(s, TcpSkbCb.sacked(s) & ~LOST);
        }
        lostOut = 0;
        // Nothing is marked lost any more: FACK may have to mark those segments again.
        fackMarked = sndUna;
        undoPossible = false;
        retransStamped = false;
        stack.mib().inc(fromLoss ? Mib.TcpExtTCPLossUndo : Mib.TcpExtTCPFullUndo);
        setCaState(CaState.OPEN);
        traceEvent("undo");
    }

    private void endCwndReduction() {
        if (cc.sndSsthresh < 0x7fff_ffffL) {
            cc.sndCwnd = cc.sndSsthresh;
            sndCwndStampNanos = stack.now();
        }
    }

    /** Marks the first not-SACKed segment lost (tcp_mark_head_lost with one packet). */
    private void markHeadLost() {
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

    private void markLost(Packet s) {
        TcpSkbCb.setSacked(s, TcpSkbCb.sacked(s) | LOST);
        lostOut += TcpSkbCb.pcount(s);
        if (Seq.before(TcpSkbCb.seq(s), retransHint)) {
            retransHint = TcpSkbCb.seq(s);
        }
    }

    /**
     * RFC 6675's IsLost: a segment not SACKed with at least {@code reordering} SACKed segments above it is
     * lost. Walks the queue from the highest sequence down, counting SACKed segments.
     */
    private void updateScoreboard() {
        if (sackedOut == 0 || !Seq.after(highSackedEnd, sndUna)) {
            return;
        }
        if (fack) {
            // FACK: everything not SACKed more than `reordering` segments below the highest SACK is lost.
            long limit = Seq.add(highSackedEnd, -reordering * mssCache);
            if (!Seq.after(limit, sndUna)) {
                markHeadLost();
                return;
            }
            for (int k = rtx.firstEndingAfter(fackMarked); k < rtx.size(); k++) {
                Packet s = rtx.get(k);
                if (Seq.after(TcpSkbCb.endSeq(s), limit)) {
                    break;
                }
                if ((TcpSkbCb.sacked(s) & (SACKED | LOST | RETRANS)) == 0) {
                    markLost(s);
                }
                fackMarked = TcpSkbCb.endSeq(s);
            }
            return;
        }
        long sackedAbove = 0;
        // Nothing above the highest SACKed segment can be lost yet; below an already marked segment the
        // earlier passes did the work (Linux keeps lost_skb_hint for the same reason).
        for (int k = rtx.firstEndingAfter(highSackedEnd) - 1; k >= 0; k--) {
            Packet s = rtx.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & SACKED) != 0) {
                sackedAbove += TcpSkbCb.pcount(s);
                continue;
            }
            if (sackedAbove >= reordering) {
                if ((bits & (LOST | RETRANS)) != 0) {
                    break;
                }
                markLost(s);
            }
        }
    }

    /** tcp_cong_control: PRR while in a reduction, otherwise let the algorithm grow cwnd. */
    private void congControl(long ack, long delivered, boolean advanced) {
        CaState st = cc.caState;
        if (st == CaState.RECOVERY || st == CaState.CWR) {
            cwndReduction(delivered, advanced);
            return;
        }
        if (!advanced || delivered <= 0) {
            return;
        }
        cc.cwndLimited = isCwndLimitedNow();
        ops.congAvoid(cc, ack, delivered);
    }

    /** tcp_is_cwnd_limited: in slow start, cwnd below twice the most ever in flight; else the last window filled cwnd. */
    private boolean isCwndLimitedNow() {
        boolean slowStart = cc.sw.ssWhileLeq() ? cc.sndCwnd <= cc.sndSsthresh : cc.sndCwnd < cc.sndSsthresh;
        if (slowStart) {
            return cc.sndCwnd < 2 * maxPacketsOut;
        }
        return isCwndLimited;
    }

    /** Proportional rate reduction (RFC 6937), as tcp_cwnd_reduction does it. */
    private void cwndReduction(long delivered, boolean advanced) {
        if (delivered <= 0 || cc.priorCwnd == 0) {
            return;
        }
        long inflight = packetsInFlight();
        long delta = cc.sndSsthresh - inflight;
        prrDelivered += delivered;
        long sndcnt;
        if (delta < 0) {
            long dividend = cc.sndSsthresh * prrDelivered + cc.priorCwnd - 1;
            sndcnt = dividend / cc.priorCwnd - prrOut;
        } else if (advanced) {
            sndcnt = Math.min(delta, Math.max(prrDelivered - prrOut, delivered) + 1);
        } else {
            sndcnt = Math.min(delta, delivered);
        }
        // Allow the fast retransmit itself even when the formula says zero.
        sndcnt = Math.max(sndcnt, prrOut > 0 ? 0 : 1);
        cc.sndCwnd = inflight + sndcnt;
    }

    private void finAckedTransitions() {
        if (!finSent || Seq.after(sndNxt, sndUna)) {
            return;
        }
        switch (state) {
            case FIN_WAIT1 -> {
                setState(TcpState.FIN_WAIT2);
                if (orphan) {
                    timewaitTimer.arm(stack.knobs().get(TcpSysctl.FIN_TIMEOUT) * 1_000_000_000L);
                }
            }
            case CLOSING -> enterTimeWait();
            case LAST_ACK -> finish(TcpError.NONE);
            default -> { }
        }
    }

    // ------------------------------------------------------------------------------------------------------
    // Receiving data

    private void dataQueue(Packet p, TcpSegment seg, long seq, int payload, boolean fin, long now) {
        if (payload > 0) {
            dataSegsIn += p.gsoSize() > 0 ? Math.max(1, (payload + p.gsoSize() - 1) / p.gsoSize()) : 1;
        }
        measureRcvMss(p, payload);
        eventDataRecv(payload, now);
        // Make the packet hold exactly its payload.
        int payloadStart = seg.payloadOffset();
        p.pull(payloadStart - p.start());
        p.trim(payload);
        TcpSkbCb.setSeq(p, seq, Seq.add(seq, payload));
        TcpSkbCb.setSacked(p, fin ? SEG_FIN : 0);
        if (seq == rcvNxt || Seq.before(seq, rcvNxt) && Seq.after(Seq.add(seq, payload + (fin ? 1 : 0)), rcvNxt)) {
            if (rcvQueuedBytes + payload > rcvbuf + rcvMss && payload > 0 && seq == rcvNxt) {
                // The application is not reading and the peer ignored our window.
                stack.mib().inc(Mib.TcpExtTCPRcvQDrop);
                stack.drop(p, DropReason.TCP_RCVBUF_FULL);
                ackPending = true;
                quickAcks = Math.max(quickAcks, 1);
                return;
            }
            if (Seq.before(seq, rcvNxt)) {
                // Starts below rcv_nxt: the part we already have is a duplicate.
                dsackSet(seq, rcvNxt);
            }
            queueInOrder(p);
            ofoDrain();
            selectiveAcks.advance(rcvNxt);
            if (!ofo.isEmpty() || fin) {
                // Filling a hole or a FIN: tell the sender at once.
                quickAcks = Math.max(quickAcks, 1);
            }
            notifyReadable();
        } else if (Seq.after(seq, rcvNxt)) {
            ofoQueue(p);
            quickAcks = Math.max(quickAcks, 1);
        } else {
            // Entirely old: a retransmission we already have. Answer at once with a D-SACK so the sender learns.
            stack.mib().inc(Mib.TcpExtDelayedACKLost);
            enterQuickAckMode();
            dsackSet(seq, Seq.add(seq, payload));
            stack.drop(p, DropReason.TCP_OLD_DATA);
        }
        ackPending = true;
    }

    private void queueInOrder(Packet p) {
        long seq = TcpSkbCb.seq(p);
        long end = TcpSkbCb.endSeq(p);
        boolean fin = (TcpSkbCb.sacked(p) & SEG_FIN) != 0;
        if (Seq.before(seq, rcvNxt)) {
            int dup = (int) Seq.sub(rcvNxt, seq);
            dup = Math.min(dup, p.length());
            p.pull(dup);
        }
        int len = p.length();
        if (len > 0) {
            rcvNxt = end;
            rcvQueuedBytes += len;
            bytesReceived += len;
            rcvQueue.addLast(p);
        } else {
            p.release();
        }
        if (fin) {
            rcvFin();
        }
    }

    /**
     * tcp_data_queue_ofo: holds a segment above rcv_nxt. Memory, not the number of holes, bounds the queue: when
     * the receive buffer would overflow, out-of-order data is pruned from the highest sequence down (it is the
     * data the sender will get to last) before this segment is refused. Duplicates are answered with a D-SACK;
     * the segment's block goes first in the SACK option.
     */
    private void ofoQueue(Packet p) {
        stack.mib().inc(Mib.TcpExtTCPOFOQueue);
        long seq = TcpSkbCb.seq(p);
        long end = TcpSkbCb.endSeq(p);
        long over = (long) rcvQueuedBytes + ofo.bytes() + p.length() - rcvbuf;
        if (over > 0) {
            pruneOfoQueue(seq, over);
            if ((long) rcvQueuedBytes + ofo.bytes() + p.length() > rcvbuf) {
                stack.mib().inc(Mib.TcpExtTCPOFODrop);
                stack.drop(p, DropReason.TCP_RCVBUF_FULL);
                return;
            }
        }
        OfoQueue.Added a = ofo.add(p, this::dropOfoDuplicate);
        if (a.hasDuplicate()) {
            dsackSet(a.dupStart(), a.dupEnd());
        }
        if (a.queued() && sackOk) {
            selectiveAcks.newOfoSegment(seq, end);
        }
    }

    private void dropOfoDuplicate(Packet p) {
        stack.mib().inc(Mib.TcpExtTCPOFOMerge);
        stack.drop(p, DropReason.TCP_OFOMERGE);
    }

    /**
     * tcp_prune_ofo_queue: frees at least {@code need} bytes (and an eighth of the buffer, so that pruning is not
     * repeated for every segment) from the top of the out-of-order queue, above {@code seq}. The SACK blocks are
     * forgotten, as Linux does: they may describe data that is gone (the sender learns of the reneging when its
     * cumulative ACK reaches a segment it saw SACKed).
     */
    private void pruneOfoQueue(long seq, long need) {
        if (ofo.isEmpty()) {
            return;
        }
        int goal = (int) Math.min(Integer.MAX_VALUE, Math.max(need, rcvbuf / 8));
        int freed = ofo.pruneAbove(seq, goal, q -> stack.drop(q, DropReason.TCP_OFO_QUEUE_PRUNE));
        if (freed > 0) {
            stack.mib().inc(Mib.TcpExtOfoPruned);
            selectiveAcks.clear();
        }
    }

    /** tcp_ofo_queue: moves what rcv_nxt reached into the receive queue; bytes already received are D-SACKed. */
    private void ofoDrain() {
        Packet p;
        while ((p = ofo.pollReady(rcvNxt)) != null) {
            boolean fin = (TcpSkbCb.sacked(p) & SEG_FIN) != 0;
            if (Seq.before(TcpSkbCb.seq(p), rcvNxt)) {
                dsackSet(TcpSkbCb.seq(p), Seq.after(TcpSkbCb.endSeq(p), rcvNxt) ? rcvNxt : TcpSkbCb.endSeq(p));
            }
            if (!Seq.after(TcpSkbCb.endSeq(p), rcvNxt) && !fin) {
                stack.drop(p, DropReason.TCP_OFOMERGE);
                continue;
            }
            queueInOrder(p);
        }
    }

    private void rcvFin() {
        if (finReceived) {
            return;
        }
        finReceived = true;
        rcvNxt = Seq.add(rcvNxt, 1);
        ackPending = true;
        quickAcks = Math.max(quickAcks, 1);
        switch (state) {
            case SYN_RECV, ESTABLISHED -> setState(TcpState.CLOSE_WAIT);
            case FIN_WAIT1 -> {
                if (finSent && !Seq.after(sndNxt, sndUna)) {
                    enterTimeWait();
                } else {
                    setState(TcpState.CLOSING);
                }
            }
            case FIN_WAIT2 -> enterTimeWait();
            default -> { }
        }
        // Release data we will never receive.
        ofo.clear();
        selectiveAcks.clear();
        notifyReadable();
    }

    private void notifyReadable() {
        if (!orphan) {
            callbacks.readable(this);
        }
    }

    /** tcp_measure_rcv_mss: the peer's segment size, from gso_size for a coalesced (GRO-like) segment. */
    private void measureRcvMss(Packet p, int payload) {
        int len = p.gsoSize() > 0 ? p.gsoSize() : payload;
        len = Math.min(len, advMss);
        if (len > rcvMss) {
            rcvMss = len;
        }
    }

    /** tcp_event_data_recv: the delayed-ACK timeout adapts to how fast data arrives. */
    private void eventDataRecv(int payload, long now) {
        if (payload == 0) {
            return;
        }
        long m = now - lrcvNanos;
        lrcvNanos = now;
        if (atoNanos == 0) {
            incrQuickAck();
            atoNanos = TCP_ATO_MIN_NANOS;
        } else {
            if (m <= TCP_ATO_MIN_NANOS / 2) {
                atoNanos = (atoNanos >> 1) + TCP_ATO_MIN_NANOS / 2;
            } else if (m < atoNanos) {
                atoNanos = (atoNanos >> 1) + m;
                if (atoNanos > rtoNanos) {
                    atoNanos = rtoNanos;
                }
            } else if (m > rtoNanos) {
                // A long pause: the sender may be restarting slowly, so acknowledge quickly again.
                incrQuickAck();
            }
        }
    }

    private void incrQuickAck() {
        long q = rcvWnd / (2L * Math.max(rcvMss, 1));
        q = Math.max(2, Math.min(q, TCP_MAX_QUICKACKS));
        if (q > quickAcks) {
            quickAcks = (int) q;
        }
    }

    /** __tcp_ack_snd_check: acknowledge now, or arm the delayed-ACK timer. */
    private void ackSndCheck() {
        if (!ackPending) {
            return;
        }
        boolean fullSegments = Seq.sub(rcvNxt, rcvWup) > rcvMss && selectWindowPeek() >= rcvWnd;
        boolean quick = quickAcks > 0 && !pingpong;
        if (fullSegments || quick || !ofo.isEmpty()) {
            sendAck();
            return;
        }
        if (!delackTimer.isArmed()) {
            long ato = Math.max(atoNanos, TCP_ATO_MIN_NANOS);
            delackTimer.arm(Math.min(ato, TCP_DELACK_MAX_NANOS));
        }
    }

    /** tcp_cleanup_rbuf: after the application read, announce a window that grew a lot. */
    private void cleanupRbuf(int copied) {
        if (state == TcpState.CLOSED || !state.receivesData()) {
            return;
        }
        long rcvWindowNow = receiveWindowNow();
        if (2 * rcvWindowNow <= rcvWnd || ackPending && Seq.sub(rcvNxt, rcvWup) > rcvMss) {
            long newWindow = selectWindowPeek();
            if (newWindow >= 2 * rcvWindowNow && newWindow > 0) {
                sendAck();
            }
        }
    }

    // ------------------------------------------------------------------------------------------------------
    // Output

    private boolean canSend() {
        return !finQueued && (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT
                || state == TcpState.SYN_SENT || state == TcpState.SYN_RECV);
    }

    /** tcp_push_pending_frames. */
    private void pushPending() {
        if (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT || state == TcpState.FIN_WAIT1
                || state == TcpState.LAST_ACK || state == TcpState.CLOSING) {
            writeXmit();
        }
    }

    /** packets_out - (sacked_out + lost_out) + retrans_out. */
    long packetsInFlight() {
        return packetsOut - (sackedOut + lostOut) + retransOut;
    }

    /** tcp_write_xmit: retransmit what is marked lost, then send new data within cwnd and the peer's window. */
    private void writeXmit() {
        if (state == TcpState.SYN_SENT || state == TcpState.SYN_RECV || state == TcpState.CLOSED
                || state == TcpState.LISTEN || state == TcpState.TIME_WAIT) {
            return;
        }
        if (lostOut > 0) {
            xmitRetransmitQueue();
        }
        boolean cwndLimited = false;
        boolean sent = false;
        while (sendBuf.size() > 0 || finQueued && !finSent) {
            long inflight = packetsInFlight();
            if (inflight >= cc.sndCwnd) {
                cwndLimited = true;
                break;
            }
            int avail = sendBuf.size();
            if (avail == 0) {
                // Only the FIN is left.
                sendFinAlone();
                sent = true;
                break;
            }
            long quota = cc.sndCwnd - inflight;
            long wndLeft = Seq.sub(Seq.add(sndUna, sndWnd), sndNxt);
            long goal = Math.min(sizeGoal, quota * mssCache);
            int len = (int) Math.min(avail, goal);
            if (wndLeft < Math.min(len, mssCache)) {
                // tcp_snd_wnd_test: at least one full segment (or all that is left) must fit the window.
                if (packetsOut == 0) {
                    armProbeTimer();
                }
                break;
            }
            len = (int) Math.min(len, wndLeft);
            if (len > mssCache) {
                len = len / mssCache * mssCache;
            }
            if (len < mssCache && len == avail && !nodelay && packetsOut > 0 && Seq.after(sndSml, sndUna)) {
                // Nagle with Minshall's rule: one small segment in flight at a time.
                break;
            }
            boolean fin = finQueued && !finSent && len == avail;
            sendNewSegment(len, fin);
            sent = true;
        }
        if (sent || cwndLimited) {
            cwndValidate(cwndLimited || packetsInFlight() >= cc.sndCwnd);
        }
        if (sent) {
            scheduleLossProbe();
        }
    }

    private void armRto() {
        timerKind = TIMER_RTO;
        retransmitTimer.arm(rtoNanos);
    }

    /**
     * tcp_schedule_loss_probe (TLP, on by default since Linux 3.10 with tcp_early_retrans=3): when a
     * SACK connection in Open state has nothing more it may send, probe after 2 * SRTT (at least 10 ms; with
     * one segment out, allow for the peer's delayed ACK) instead of waiting for the RTO, so a lost tail is
     * repaired by fast recovery.
     */
    private void scheduleLossProbe() {
        if (!sackOk || packetsOut == 0 || cc.caState != CaState.OPEN || tlpPending
                || state != TcpState.ESTABLISHED && state != TcpState.CLOSE_WAIT) {
            return;
        }
        if (cc.sndCwnd > packetsInFlight() && sendBuf.size() > 0
                && Seq.sub(Seq.add(sndUna, sndWnd), sndNxt) >= Math.min(sendBuf.size(), mssCache)) {
            // More can be sent right now: not cwnd- or application-limited.
            return;
        }
        long timeout;
        if (srttUs > 0) {
            long srtt = srttUs * 1000;
            timeout = 2 * srtt;
            if (packetsOut == 1) {
                timeout = Math.max(timeout, srtt + (srtt >> 1) + TCP_DELACK_MAX_NANOS);
            }
        } else {
            timeout = TCP_TIMEOUT_INIT_NANOS;
        }
        timeout = Math.max(timeout, 10_000_000L);
        if (retransmitTimer.isArmed()) {
            long rtoLeft = retransmitTimer.deadline() - stack.now();
            if (timeout > rtoLeft) {
                // The RTO comes first: let it fire in the probe's place.
                timeout = Math.max(rtoLeft, 0);
            }
        }
        timerKind = TIMER_TLP;
        retransmitTimer.arm(timeout);
    }

    /** tcp_send_loss_probe: new data if the window allows, else the last segment again; then the RTO. */
    private void sendLossProbe() {
        stack.mib().inc(Mib.TcpExtTCPLossProbes);
        tlpPending = true;
        tlpHighSeq = sndNxt;
        long wndLeft = Seq.sub(Seq.add(sndUna, sndWnd), sndNxt);
        int avail = sendBuf.size();
        if (avail > 0 && wndLeft > 0) {
            int len = (int) Math.min(Math.min(avail, mssCache), wndLeft);
            sendNewSegment(len, finQueued && !finSent && len == avail);
            tlpHighSeq = sndNxt;
        } else if (!rtx.isEmpty()) {
            Packet tail = rtx.peekLast();
            if ((TcpSkbCb.sacked(tail) & SACKED) == 0) {
                retransmitSegment(tail);
            }
        }
        armRto();
    }

    /**
     * tcp_process_tlp_ack: an ACK beyond the probe means a loss was repaired by it, so cwnd is reduced once
     * (CWR) — unless the ACK carries a D-SACK: then the original and the probe both arrived and nothing was lost.
     */
    private void processTlpAck(long ack, boolean unaMoved, boolean isDupAck, long newlySacked) {
        if (Seq.before(ack, tlpHighSeq)) {
            return;
        }
        if (lastAckDsack) {
            tlpPending = false;
        } else if (Seq.after(ack, tlpHighSeq)) {
            tlpPending = false;
            stack.mib().inc(Mib.TcpExtTCPLossProbeRecovery);
            initCwndReduction();
            setCaState(CaState.CWR);
            endCwndReduction();
            setCaState(CaState.OPEN);
        } else if (!unaMoved && isDupAck && newlySacked == 0) {
            // A pure duplicate ACK at the probe's edge: original and probe both arrived, no loss.
            tlpPending = false;
        }
    }

    /** tcp_cwnd_validate: remember whether the last window was limited by cwnd (RFC 7661's pipeACK idea). */
    private void cwndValidate(boolean cwndLimited) {
        if (!Seq.before(sndUna, maxPacketsSeq) || packetsOut > maxPacketsOut) {
            maxPacketsOut = packetsOut;
            maxPacketsSeq = sndNxt;
            isCwndLimited = cwndLimited;
        }
        if (isCwndLimitedNow()) {
            sndCwndUsed = 0;
            sndCwndStampNanos = stack.now();
        } else {
            if (packetsOut > sndCwndUsed) {
                sndCwndUsed = packetsOut;
            }
            if (tcp.slowStartAfterIdle()
                    && stack.now() - sndCwndStampNanos >= rtoNanos && cc.caState == CaState.OPEN) {
                // tcp_cwnd_application_limited: shrink cwnd toward what the application used.
                long winUsed = Math.max(sndCwndUsed, 2);
                if (winUsed < cc.sndCwnd) {
                    cc.sndSsthresh = Math.max(cc.sndSsthresh, (cc.sndCwnd >> 1) + (cc.sndCwnd >> 2));
                    cc.sndCwnd = (cc.sndCwnd + winUsed) >> 1;
                }
                sndCwndUsed = 0;
                sndCwndStampNanos = stack.now();
            }
        }
    }

    private void sendNewSegment(int len, boolean fin) {
        int hl = dataHeaderLen();
        Packet seg = IpOutput.allocate(hl + len);
        sendBuf.take(seg.buf(), seg.transport() + hl, len);
        long seq = sndNxt;
        long end = Seq.add(seq, len + (fin ? 1 : 0));
        TcpSkbCb.setSeq(seg, seq, end);
        TcpSkbCb.setSacked(seg, fin ? SEG_FIN : 0);
        int pcount = Math.max(1, (len + mssCache - 1) / mssCache);
        TcpSkbCb.setPcount(seg, pcount);
        if (pcount > 1) {
            seg.setGso(Packet.GSO_TCPV4, mssCache);
        }
        if (fin) {
            finSent = true;
        }
        dataSent();
        rtx.addLast(seg);
        sndNxt = end;
        packetsOut += pcount;
        if (len < mssCache) {
            sndSml = end;
        }
        if (cc.caState == CaState.RECOVERY) {
            prrOut += pcount;
        }
        dataSegsOut += pcount;
        bytesSent += len;
        transmit(seg, len > 0 && sendBuf.size() == 0);
        if (!retransmitTimer.isArmed() || timerKind == TIMER_PROBE0) {
            armRto();
        }
    }

    /**
     * tcp_event_data_sent and CA_EVENT_TX_START: tell congestion control when data starts flowing again after
     * nothing was in flight, and apply RFC 2861's restart after idle.
     */
    private void dataSent() {
        long now = stack.now();
        if (packetsInFlight() == 0) {
            ops.cwndEvent(cc, CaEvent.TX_START);
        }
        if (tcp.slowStartAfterIdle() && packetsOut == 0
                && now - lastSendNanos > rtoNanos) {
            cwndRestart(now - lastSendNanos);
        }
        lastSendNanos = now;
        // A reply within the delayed-ACK timeout of the last data received: an interactive exchange.
        if (now - lrcvNanos < atoNanos) {
            pingpong = true;
        }
    }

    /** tcp_cwnd_restart: halve cwnd for every RTO of idle, down to the initial window; snd_cwnd_cnt survives. */
    private void cwndRestart(long idleNanos) {
        long restartCwnd = Math.min(tcp.initCwnd(), cc.sndCwnd);
        cc.sndSsthresh = cc.currentSsthresh();
        ops.cwndEvent(cc, CaEvent.CWND_RESTART);
        long cwnd = cc.sndCwnd;
        long delta = idleNanos - rtoNanos;
        while (delta > 0 && cwnd > restartCwnd) {
            cwnd >>= 1;
            delta -= rtoNanos;
        }
        cc.sndCwnd = Math.max(cwnd, restartCwnd);
        sndCwndStampNanos = stack.now();
        sndCwndUsed = 0;
        traceEvent("restart");
    }

    private void sendFinAlone() {
        finSent = true;
        queueControl(SEG_FIN);
    }

    /** A SYN, SYN-ACK or bare FIN that occupies sequence space and is retransmitted until acknowledged. */
    private void queueControl(int kind) {
        boolean syn = kind == SEG_SYN;
        int optLen = syn ? synOptionsLength() : (tsOk ? 12 : 0);
        Packet seg = IpOutput.allocate(TcpSegment.MIN_HEADER_LEN + optLen);
        long seq = sndNxt;
        TcpSkbCb.setSeq(seg, seq, Seq.add(seq, 1));
        TcpSkbCb.setSacked(seg, kind);
        TcpSkbCb.setPcount(seg, 1);
        rtx.addLast(seg);
        sndNxt = Seq.add(seq, 1);
        packetsOut += 1;
        if (!syn) {
            lastSendNanos = stack.now();
        }
        transmit(seg, false);
        if (!retransmitTimer.isArmed() || timerKind == TIMER_PROBE0) {
            armRto();
        }
    }

    private int synOptionsLength() {
        return TcpOptions.synLength(sackOk, tsOk, wscaleOk);
    }

    /**
     * tcp_transmit_skb: fills in the header of a queued segment and sends a clone; the original stays in the
     * retransmission queue. A segment whose previous clone is still held somewhere gets private data first,
     * so the in-flight copy never changes under its holder.
     */
    private void transmit(Packet seg, boolean push) {
        if (seg.isShared()) {
            seg.copyAll(null);
        }
        int bits = TcpSkbCb.sacked(seg);
        boolean syn = (bits & SEG_SYN) != 0;
        boolean fin = (bits & SEG_FIN) != 0;
        int flags = syn ? TcpSegment.SYN : 0;
        if (!syn || state == TcpState.SYN_RECV) {
            flags |= TcpSegment.ACK_FLAG;
        }
        if (fin) {
            flags |= TcpSegment.FIN;
        }
        if (push || fin) {
            flags |= TcpSegment.PSH;
        }
        ByteBuf b = seg.buf();
        int t = seg.transport();
        if (syn) {
            writeSynHeader(b, t, TcpSkbCb.seq(seg), flags);
        } else {
            writeHeader(b, t, TcpSkbCb.seq(seg), flags, false);
        }
        TcpSkbCb.setTxNanos(seg, stack.now());
        finishChecksum(seg);
        Packet c = seg.cloneShared();
        if ((flags & TcpSegment.ACK_FLAG) != 0) {
            ackSent();
        }
        // Linux counts a TSO segment as the MSS-sized segments it becomes (tcp_skb_pcount).
        int segs = Math.max(1, TcpSkbCb.pcount(seg));
        segsOut += segs;
        stack.mib().add(Mib.TcpOutSegs, segs);
        ipSend(c);
    }

    private static int headerLenOf(ByteBuf b, int t) {
        return (b.getUnsignedByte(t + TcpSegment.DATA_OFF) >>> 4) * 4;
    }

    /** Writes a non-SYN header with timestamps (and SACK blocks when {@code withSack}); returns its end. */
    private int writeHeader(ByteBuf b, int t, long seq, int flags, boolean withSack) {
        int sackN = withSack ? sackBlocksToSend() : 0;
        int optLen = (tsOk ? 12 : 0) + (sackN > 0 ? 4 + 8 * sackN : 0);
        int hl = TcpSegment.MIN_HEADER_LEN + optLen;
        b.setShort(t + TcpSegment.SRC_PORT, lport);
        b.setShort(t + TcpSegment.DST_PORT, rport);
        b.setInt(t + TcpSegment.SEQ, (int) seq);
        b.setInt(t + TcpSegment.ACK, (flags & TcpSegment.ACK_FLAG) != 0 ? (int) rcvNxt : 0);
        b.setByte(t + TcpSegment.DATA_OFF, (hl / 4) << 4);
        b.setByte(t + TcpSegment.FLAGS, flags);
        b.setShort(t + TcpSegment.WINDOW, (flags & TcpSegment.RST) != 0 ? 0 : selectWindow());
        b.setShort(t + TcpSegment.CHECKSUM, 0);
        b.setShort(t + TcpSegment.URGENT, 0);
        int i = t + TcpSegment.MIN_HEADER_LEN;
        if (tsOk) {
            i = TcpOptions.writeTimestamp(b, i, tsNow(), tsRecentValid ? tsRecent : 0);
        }
        if (sackN > 0) {
            i = TcpOptions.writeSack(b, i, sackStartOut, sackEndOut, sackN);
        }
        return i;
    }

    private int writeSynHeader(ByteBuf b, int t, long seq, int flags) {
        int optLen = synOptionsLength();
        int hl = TcpSegment.MIN_HEADER_LEN + optLen;
        b.setShort(t + TcpSegment.SRC_PORT, lport);
        b.setShort(t + TcpSegment.DST_PORT, rport);
        b.setInt(t + TcpSegment.SEQ, (int) seq);
        b.setInt(t + TcpSegment.ACK, (flags & TcpSegment.ACK_FLAG) != 0 ? (int) rcvNxt : 0);
        b.setByte(t + TcpSegment.DATA_OFF, (hl / 4) << 4);
        b.setByte(t + TcpSegment.FLAGS, flags);
        // The window of a SYN is never scaled; Linux offers whole MSS-sized segments (64240 for MSS 1460).
        long synWin = Math.min(65_535, freeReceiveSpace());
        // A SYN-ACK knows timestamps are on and rounds by the MSS they leave (65160 = 45 * 1448).
        int unit = state == TcpState.SYN_RECV && tsOk ? advMss - 12 : advMss;
        if (synWin > unit) {
            synWin = synWin / unit * unit;
        }
        b.setShort(t + TcpSegment.WINDOW, (int) synWin);
        b.setShort(t + TcpSegment.CHECKSUM, 0);
        b.setShort(t + TcpSegment.URGENT, 0);
        rcvWnd = synWin;
        rcvWup = rcvNxt;
        return TcpOptions.writeSyn(b, t + TcpSegment.MIN_HEADER_LEN, advMss, sackOk, tsOk, tsNow(),
                tsRecentValid ? tsRecent : 0, wscaleOk ? rcvWscale : -1);
    }

    private void finishChecksum(Packet p) {
        ByteBuf b = p.buf();
        int t = p.transport();
        int l4len = p.start() + p.length() - t;
        long ph = Checksum.pseudoHeader(laddr, raddr, Ipv4Packet.PROTO_TCP, l4len);
        if (route.dev().txChecksumOffload()) {
            // CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum; the device completes it.
            b.setShort(t + TcpSegment.CHECKSUM, ~Checksum.finish(ph) & 0xffff);
            p.setChecksum(ChecksumState.PARTIAL, t, TcpSegment.CHECKSUM);
        } else {
            b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, l4len, ph)));
            p.setChecksum(ChecksumState.NONE, 0, 0);
            // The software checksum a device without tx-checksumming costs the sender (Linux: csum_partial,
            // or csum_partial_copy_generic folded into the copy from user space): charged by the CPU model.
            stack.cpu().checksummed(l4len);
        }
    }

    private void ipSend(Packet p) {
        stack.ipOutput().sendLocal(p, route, laddr, raddr, Ipv4Packet.PROTO_TCP, 0,
                stack.knobs().defaultTtl(), true);
    }

    private final long[] sackStartOut = new long[TcpOptions.MAX_SACK_BLOCKS];
    private final long[] sackEndOut = new long[TcpOptions.MAX_SACK_BLOCKS];

    /**
     * Fills the SACK blocks to report (a pending D-SACK first, then the block of the latest out-of-order segment,
     * then the others most recently reported first) as far as the option space allows: 4 blocks, 3 next to
     * timestamps.
     */
    private int sackBlocksToSend() {
        if (!sackOk) {
            return 0;
        }
        return selectiveAcks.write(sackStartOut, sackEndOut, sackRoom());
    }

    private int sackRoom() {
        return tsOk ? SelectiveAcks.MAX_BLOCKS - 1 : SelectiveAcks.MAX_BLOCKS;
    }

    private long freeReceiveSpace() {
        return Math.max(0, (long) rcvbuf - rcvQueuedBytes - ofo.bytes());
    }

    /** __tcp_select_window without side effects: the window we would offer now. */
    private long selectWindowPeek() {
        long free = freeReceiveSpace();
        // Receiver-side silly window avoidance: with less than half the buffer free, offer nothing rather
        // than a sliver smaller than a segment (or a sixteenth of the buffer).
        if (free < rcvbuf / 2 && (free < rcvbuf / 16 || free < rcvMss)) {
            return 0;
        }
        long maxWin = 65_535L << rcvWscale;
        long w = Math.min(free, maxWin);
        // Keep the window a multiple of the scale unit so nothing is lost to the shift.
        return w >> rcvWscale << rcvWscale;
    }

    /** tcp_select_window: the offered window never moves its right edge left. Returns the header value. */
    private int selectWindow() {
        long w = selectWindowPeek();
        long curWin = receiveWindowNow();
        if (w < curWin) {
            // Never shrink: keep the edge we already offered.
            w = curWin + (1L << rcvWscale) - 1 >> rcvWscale << rcvWscale;
        }
        rcvWnd = w;
        rcvWup = rcvNxt;
        return (int) Math.min(65_535, w >> rcvWscale);
    }

    private long tsNow() {
        // Linux's TCP timestamp clock ticks in milliseconds, offset randomly per connection.
        return stack.now() / 1_000_000L + tsOffset & 0xffff_ffffL;
    }

    private void ackSent() {
        ackPending = false;
        delackTimer.cancel();
        if (quickAcks > 0) {
            quickAcks--;
        }
    }

    /** tcp_send_challenge_ack (RFC 5961): a SYN or an inexact RST inside the window is answered with an ACK. */
    private void sendChallengeAck() {
        stack.mib().inc(Mib.TcpExtTCPChallengeACK);
        sendAck();
    }

    /** A pure ACK (with SACK blocks when out-of-order data is held). */
    void sendAck() {
        if (state == TcpState.CLOSED || state == TcpState.SYN_SENT || state == TcpState.LISTEN) {
            return;
        }
        int sackN = sackOk ? selectiveAcks.pending(sackRoom()) : 0;
        int optLen = (tsOk ? 12 : 0) + (sackN > 0 ? 4 + 8 * sackN : 0);
        Packet p = IpOutput.allocate(TcpSegment.MIN_HEADER_LEN + optLen);
        ByteBuf b = p.buf();
        int t = p.transport();
        int end = writeHeader(b, t, sndNxt, TcpSegment.ACK_FLAG, sackN > 0);
        // The SACK block count may merge to fewer than reserved: shrink the frame to what was written.
        p.trim(end - p.start());
        finishChecksum(p);
        ackSent();
        segsOut++;
        stack.mib().inc(Mib.TcpOutSegs);
        ipSend(p);
    }

    /** A keep-alive or zero-window probe: an ACK with an already acknowledged sequence number. */
    private void sendProbe() {
        Packet p = IpOutput.allocate(TcpSegment.MIN_HEADER_LEN + (tsOk ? 12 : 0));
        writeHeader(p.buf(), p.transport(), Seq.add(sndUna, -1), TcpSegment.ACK_FLAG, false);
        finishChecksum(p);
        segsOut++;
        stack.mib().inc(Mib.TcpOutSegs);
        ipSend(p);
    }

    private void sendActiveReset() {
        Packet p = IpOutput.allocate(TcpSegment.MIN_HEADER_LEN + (tsOk ? 12 : 0));
        writeHeader(p.buf(), p.transport(), sndNxt, TcpSegment.RST | TcpSegment.ACK_FLAG, false);
        finishChecksum(p);
        stack.mib().inc(Mib.TcpOutRsts);
        segsOut++;
        ipSend(p);
    }

    private void sendReset(long seq, long ackSeq, int flags) {
        tcp.sendReset(laddr, lport, raddr, rport, seq, ackSeq, flags, route);
    }

    // ------------------------------------------------------------------------------------------------------
    // Retransmission

    /** tcp_xmit_retransmit_queue: resend segments marked lost while cwnd allows. */
    private void xmitRetransmitQueue() {
        if (lostOut == 0) {
            return;
        }
        for (int k = rtx.firstEndingAfter(retransHint); k < rtx.size(); k++) {
            if (packetsInFlight() >= cc.sndCwnd) {
                break;
            }
            Packet s = rtx.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & LOST) == 0 || (bits & (RETRANS | SACKED)) != 0) {
                continue;
            }
            retransmitSegment(s);
            s = rtx.get(k);
            retransHint = TcpSkbCb.endSeq(s);
            if (cc.caState == CaState.RECOVERY) {
                prrOut += TcpSkbCb.pcount(s);
            }
        }
    }

    private void retransmitSegment(Packet s) {
        if (Seq.before(TcpSkbCb.seq(s), sndUna)) {
            // Partly acknowledged since it was sent: resend only the rest, as tcp_trim_head would leave it.
            s = trimHead(s);
        }
        int bits = TcpSkbCb.sacked(s);
        if (undoPossible && !retransStamped) {
            retransStampTs = tsNow();
            retransStamped = true;
        }
        TcpSkbCb.setSacked(s, bits | RETRANS | EVER_RETRANS);
        TcpSkbCb.setAckSeq(s, sndNxt);
        retransOut += TcpSkbCb.pcount(s);
        totalRetrans += TcpSkbCb.pcount(s);
        int payload = (int) Seq.sub(TcpSkbCb.endSeq(s), TcpSkbCb.seq(s)) - ((bits & (SEG_SYN | SEG_FIN)) != 0 ? 1 : 0);
        bytesRetrans += Math.max(0, payload);
        stack.mib().add(Mib.TcpRetransSegs, TcpSkbCb.pcount(s));
        transmit(s, false);
    }

    /** Replaces a partly acknowledged queued segment with one holding only its unacknowledged bytes. */
    private Packet trimHead(Packet s) {
        int hl = dataHeaderLen();
        int oldHl = headerLenOf(s.buf(), s.transport());
        long cut = Seq.sub(sndUna, TcpSkbCb.seq(s));
        boolean fin = (TcpSkbCb.sacked(s) & SEG_FIN) != 0;
        int oldPayload = (int) Seq.sub(TcpSkbCb.endSeq(s), TcpSkbCb.seq(s)) - (fin ? 1 : 0);
        int len = (int) Math.max(0, oldPayload - cut);
        Packet n = IpOutput.allocate(hl + len);
        n.buf().setBytes(n.transport() + hl, s.buf(), s.transport() + oldHl + (int) cut, len);
        TcpSkbCb.setSeq(n, sndUna, TcpSkbCb.endSeq(s));
        TcpSkbCb.setSacked(n, TcpSkbCb.sacked(s));
        TcpSkbCb.setPcount(n, TcpSkbCb.pcount(s));
        if (len > mssCache) {
            n.setGso(Packet.GSO_TCPV4, mssCache);
        }
        // Swap it in at the head of the queue (a partly acked segment is always the first).
        if (rtx.peekFirst() != s) {
            throw new IllegalStateException("partly acknowledged segment not at the head");
        }
        rtx.replaceFirst(n);
        s.release();
        return n;
    }

    private void retransmitHead() {
        Packet s = rtx.peekFirst();
        if (s != null) {
            retransmitSegment(s);
        }
    }

    private void retransmitTimerFired() {
        if (state == TcpState.CLOSED) {
            return;
        }
        if (timerKind == TIMER_PROBE0) {
            probeTimerFired();
            return;
        }
        if (timerKind == TIMER_TLP) {
            if (packetsOut > 0) {
                sendLossProbe();
            }
            return;
        }
        if (timerKind == TIMER_EARLY_RETRANS) {
            earlyRetransTimerFired();
            return;
        }
        if (packetsOut == 0 || rtx.isEmpty()) {
            return;
        }
        boolean synPhase = state == TcpState.SYN_SENT || state == TcpState.SYN_RECV;
        int limit = (int) stack.knobs().get(state == TcpState.SYN_SENT ? TcpSysctl.SYN_RETRIES
                : state == TcpState.SYN_RECV ? TcpSysctl.SYNACK_RETRIES : TcpSysctl.RETRIES2);
        if (retransmits >= limit) {
            stack.mib().inc(Mib.TcpExtTCPAbortOnTimeout);
            if (!synPhase) {
                sendActiveReset();
            } else if (state == TcpState.SYN_SENT) {
                stack.mib().inc(Mib.TcpAttemptFails);
            }
            finish(TcpError.ETIMEDOUT);
            return;
        }
        stack.mib().inc(Mib.TcpExtTCPTimeouts);
        rtoCount++;
        if (!synPhase) {
            enterLoss();
        }
        retransmitHead();
        retransmits++;
        backoff++;
        rtoNanos = Math.min(rtoNanos << 1, TCP_RTO_MAX_NANOS);
        armRto();
    }

    /** tcp_enter_loss: after an RTO everything not SACKed is presumed lost and cwnd restarts from one. */
    private void enterLoss() {
        CaState st = cc.caState;
        if (st.ordinal() <= CaState.DISORDER.ordinal() || !Seq.after(highSeq, sndUna)
                || st == CaState.LOSS && retransmits == 0) {
            cc.priorSsthresh = cc.currentSsthresh();
            cc.priorCwnd = cc.sndCwnd;
            cc.sndSsthresh = ops.ssthresh(cc);
            ops.cwndEvent(cc, CaEvent.LOSS);
            startUndoEpisode();
        }
        cc.sndCwnd = 1;
        cc.sndCwndCnt = 0;
        sndCwndStampNanos = stack.now();
        retransOut = 0;
        lostOut = 0;
        // The head itself SACKed: the peer reneged on its SACKs, so none of them can be trusted.
        boolean reneg = !rtx.isEmpty() && (TcpSkbCb.sacked(rtx.peekFirst()) & SACKED) != 0;
        if (!sackOk || reneg) {
            sackedOut = 0;
        }
        for (int k = 0; k < rtx.size(); k++) {
            Packet s = rtx.get(k);
            int bits = TcpSkbCb.sacked(s) & ~RETRANS;
            if (reneg) {
                bits &= ~SACKED;
            }
            if ((bits & SACKED) == 0) {
                bits |= LOST;
                lostOut += TcpSkbCb.pcount(s);
            }
            TcpSkbCb.setSacked(s, bits);
        }
        retransHint = sndUna;
        highSeq = sndNxt;
        tlpPending = false;
        setCaState(CaState.LOSS);
        traceEvent("rto");
    }

    private void armProbeTimer() {
        if (retransmitTimer.isArmed() && timerKind != TIMER_PROBE0) {
            return;
        }
        timerKind = TIMER_PROBE0;
        long when = Math.min(rtoNanos << Math.min(backoff, 16), TCP_RTO_MAX_NANOS);
        retransmitTimer.arm(when);
    }

    /** tcp_probe_timer: the peer's window is closed; poke it so a lost window update cannot deadlock us. */
    private void probeTimerFired() {
        timerKind = TIMER_RTO;
        if (packetsOut > 0 || sendBuf.size() == 0) {
            return;
        }
        long wndLeft = Seq.sub(Seq.add(sndUna, sndWnd), sndNxt);
        if (wndLeft > 0) {
            // tcp_write_wakeup: a window too small for a full segment still takes what fits.
            int len = (int) Math.min(Math.min(wndLeft, mssCache), sendBuf.size());
            sendNewSegment(len, finQueued && !finSent && len == sendBuf.size());
            return;
        }
        sendProbe();
        backoff++;
        armProbeTimer();
    }

    private void delackTimerFired() {
        if (!ackPending || state == TcpState.CLOSED) {
            return;
        }
        stack.mib().inc(Mib.TcpExtDelayedACKs);
        if (pingpong) {
            // The exchange stopped being interactive: leave ping-pong mode (Linux's delayed-ACK timer does this).
            pingpong = false;
            atoNanos = TCP_ATO_MIN_NANOS;
        } else {
            atoNanos = Math.min(atoNanos << 1, rtoNanos);
        }
        sendAck();
    }

    private long keepIdleNanos() {
        long s = keepIdleS >= 0 ? keepIdleS : stack.knobs().get(TcpSysctl.KEEPALIVE_TIME);
        return s * 1_000_000_000L;
    }

    private void keepaliveTimerFired() {
        if (!keepalive || state == TcpState.CLOSED) {
            return;
        }
        if (state != TcpState.ESTABLISHED && state != TcpState.CLOSE_WAIT && state != TcpState.FIN_WAIT2) {
            return;
        }
        long now = stack.now();
        long idle = now - lastRcvNanos;
        long keepIdle = keepIdleNanos();
        long intvl = (keepIntvlS >= 0 ? keepIntvlS : stack.knobs().get(TcpSysctl.KEEPALIVE_INTVL))
                * 1_000_000_000L;
        int cnt = keepCnt >= 0 ? keepCnt : (int) stack.knobs().get(TcpSysctl.KEEPALIVE_PROBES);
        if (packetsOut > 0 || sendBuf.size() > 0) {
            // Data in flight: the retransmission timer is in charge.
            keepaliveTimer.arm(keepIdle);
            return;
        }
        if (idle >= keepIdle) {
            if (probesOut >= cnt) {
                sendActiveReset();
                finish(TcpError.ETIMEDOUT);
                return;
            }
            stack.mib().inc(Mib.TcpExtTCPKeepAlive);
            sendProbe();
            probesOut++;
            keepaliveTimer.arm(intvl);
        } else {
            keepaliveTimer.arm(keepIdle - idle);
        }
    }

    private void timewaitTimerFired() {
        if (state == TcpState.TIME_WAIT || state == TcpState.FIN_WAIT2) {
            finish(TcpError.NONE);
        }
    }

    private void enterTimeWait() {
        setState(TcpState.TIME_WAIT);
        stack.mib().inc(Mib.TcpExtTW);
        retransmitTimer.stop();
        keepaliveTimer.stop();
        timewaitTimer.arm(TCP_TIMEWAIT_NANOS);
        releaseSendSide();
    }

    /** RFC 6298 with Linux's floor: RTO = SRTT + max(4 * RTTVAR, rto_min), at most 120 s. */
    private void rttEstimator(long rttUs) {
        if (rttUs < minRttUs) {
            minRttUs = rttUs;
        }
        if (srttUs == 0) {
            srttUs = rttUs;
            rttvarUs = rttUs / 2;
        } else {
            long err = Math.abs(srttUs - rttUs);
            rttvarUs = (3 * rttvarUs + err) / 4;
            srttUs = (7 * srttUs + rttUs) / 8;
        }
        long rtoMinUs = tcp.rtoMinNanos() / 1000;
        long rtoUs = srttUs + Math.max(4 * rttvarUs, rtoMinUs);
        rtoNanos = Math.min(rtoUs * 1000, TCP_RTO_MAX_NANOS);
    }

    // ------------------------------------------------------------------------------------------------------
    // State

    private void setState(TcpState s) {
        if (s == TcpState.ESTABLISHED && state != TcpState.ESTABLISHED) {
            tcp.currEstab(+1);
        } else if (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT) {
            if (s != TcpState.CLOSE_WAIT && s != TcpState.ESTABLISHED) {
                tcp.currEstab(-1);
            }
        }
        state = s;
    }

    private void setCaState(CaState s) {
        if (cc.caState != s) {
            ops.setState(cc, s);
            cc.caState = s;
            traceEvent(CA_EVENT_NAMES[s.ordinal()]);
        }
    }

    // Trace event names per CA state, built once rather than concatenated on every state change.
    private static final String[] CA_EVENT_NAMES = java.util.Arrays.stream(CaState.values())
            .map(st -> "ca-" + st.ssName()).toArray(String[]::new);

    private void traceEvent(String what) {
        if (trace != null) {
            trace.record(stack.now(), cc, srttUs, packetsInFlight(), what);
        }
    }

    private void resetByPeer() {
        if (state == TcpState.SYN_RECV) {
            // An embryonic connection reset by the peer just disappears (the listener never saw it).
            finish(TcpError.NONE);
            return;
        }
        if (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT) {
            stack.mib().inc(Mib.TcpEstabResets);
        }
        finish(TcpError.ECONNRESET);
    }

    /** The connection is over: timers stop, buffers go back to the pool, the application hears why. */
    void finish(TcpError why) {
        if (state == TcpState.CLOSED && closedNotified) {
            return;
        }
        boolean wasSynRecv = state == TcpState.SYN_RECV;
        setState(TcpState.CLOSED);
        error = why;
        retransmitTimer.stop();
        delackTimer.stop();
        keepaliveTimer.stop();
        timewaitTimer.stop();
        releaseSendSide();
        ofo.clear();
        selectiveAcks.clear();
        if (orphan || wasSynRecv) {
            releaseReceiveQueue();
        }
        tcp.unhash(this);
        if (parent != null) {
            parent.childGone(this, wasSynRecv);
        }
        closedNotified = true;
        Callbacks cb = callbacks;
        cb.closed(this, why);
        if (orphan) {
            releaseReceiveQueue();
        }
    }

    private void releaseReceiveQueue() {
        for (Packet p : rcvQueue) {
            p.release();
        }
        rcvQueue.clear();
        rcvQueuedBytes = 0;
    }

    private void releaseSendSide() {
        rtx.clear();
        packetsOut = 0;
        sackedOut = 0;
        lostOut = 0;
        retransOut = 0;
        sendBuf.release();
    }

    /** Releases everything a closed connection still holds (unread data); called when the namespace goes. */
    void destroy() {
        orphan = true;
        callbacks = NO_CALLBACKS;
        if (state != TcpState.CLOSED) {
            finish(TcpError.ECONNABORTED);
        }
        releaseReceiveQueue();
    }
}
