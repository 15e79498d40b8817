package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.route.Dst;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;
import dev.usnet.tcp.cc.CcSwitches;
import dev.usnet.tcp.cc.CongestionOps;
import io.netty.buffer.ByteBuf;

/**
 * One TCP connection (struct tcp_sock): its state, the options it negotiated, its sequence space, and the
 * socket API. RFC 9293's state machine with what Linux peers expect — MSS, window scaling, timestamps, SACK,
 * RTO per RFC 6298 with a 200 ms floor, SACK-based recovery with proportional rate reduction (NewReno without
 * SACK), delayed ACKs with quick-ack mode, Nagle, keep-alive, half-close and TIME-WAIT. The work is done by the
 * parts it owns, one concern each, as Linux splits tcp_input.c, tcp_output.c and tcp_timer.c:
 * {@link TcpInput}, {@link TcpAck}, {@link Scoreboard}, {@link LossRecovery}, {@link TcpOutput}, {@link TcpTimers}
 * and the rest. Congestion control is pluggable ({@link CongestionOps}) and sees the connection through
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
    static final int GSO_MAX_SIZE = 65_535;

    final Tcp tcp;
    final NetStack stack;
    /** icsk_af_ops: the network-layer family this connection runs over ({@link TcpIpv4Ops}, {@link TcpIpv6Ops}). */
    final TcpAfOps af;
    final CcSock cc;
    CongestionOps ops;

    /** IPv4 addresses (0 on an IPv6 connection). */
    int laddr;
    int lport;
    int raddr;
    int rport;
    /** IPv6 addresses, high and low 64 bits (0 on an IPv4 connection). */
    long laddrHi;
    long laddrLo;
    long raddrHi;
    long raddrLo;
    /**
     * An IPv4 connection made through an IPv6 socket (accepted by a dual-stack listener, or connected to a
     * v4-mapped address): it runs over IPv4, and its addresses read as ::ffff:a.b.c.d, as such a Linux socket's do.
     */
    boolean v4Mapped;
    long key;
    /** The next IPv6 connection whose lookup key is the same (the IPv6 table chains them; see {@link Tcp}). */
    TcpSock hashNext;
    /** The route (sk_dst_cache): a {@code Route} over IPv4, a {@code Route6} over IPv6. */
    Dst route;
    TcpState state = TcpState.CLOSED;
    TcpListener parent;
    /** Counted in the parent's SYN queue (a child made from a SYN; one made from a cookie never is). */
    boolean inSynQueue;
    /** Made from a SYN cookie's final ACK: no SYN-ACK of ours is outstanding, snd_una starts past it. */
    boolean fromCookie;
    Callbacks callbacks = NO_CALLBACKS;
    private TcpError error = TcpError.NONE;
    private boolean orphan;
    private boolean closedNotified;

    // Negotiated options.
    boolean tsOk;
    boolean sackOk;
    boolean wscaleOk;
    int sndWscale;
    int rcvWscale;
    private int peerMss = 536;
    int advMss;
    private long tsOffset;
    long tsRecent;
    boolean tsRecentValid;

    // Send side (byte sequence numbers as unsigned 32-bit values in longs).
    long iss;
    long sndUna;
    long sndNxt;
    long sndWnd;
    long sndWl1;
    long sndSml;
    long maxWindow;
    int mssCache = 536;
    int sizeGoal = 536;
    final SendBuffer sendBuf;
    boolean finQueued;
    boolean finSent;
    boolean writeBlocked;
    boolean nodelay;
    /** TCP_CORK: partial segments wait until it is cleared (or a full segment forms). */
    boolean cork;
    /** MSG_MORE: the write being sent holds its partial tail as TCP_CORK would, for this one push. */
    boolean moreComing;
    /** lsndtime: when data was last sent. */
    long lastSendNanos;

    // Receive side.
    long irs;
    long rcvNxt;
    /** sk_rcvbuf: receive buffer bytes (with autotuning, memory: the window is tcp_win_from_space of it). */
    int rcvbuf;
    /** SO_RCVBUF / SO_SNDBUF were set: autotuning leaves that buffer alone (SOCK_RCVBUF_LOCK, SOCK_SNDBUF_LOCK). */
    boolean rcvbufLocked;
    boolean sndbufLocked;
    int rcvMss = 536;
    boolean finReceived;
    /** rcv_tstamp and the last ACK's time. */
    long lastRcvNanos;
    long lastAckRcvNanos;

    // The parts, one concern each.
    final TcpStats stats = new TcpStats();
    final RttEstimator rtt;
    final Scoreboard sb;
    final ReceiveQueue rq;
    final ReceiveWindow rwnd;
    final BufferAutotune autotune;
    final DelayedAck delack;
    final KeepAlive keepalive;
    final TcpTimers timers;
    final TcpInput input;
    final TcpAck ack;
    final TcpOutput out;
    final Retransmit retransmit;
    final CwndValidation cwv;
    final Prr prr;
    final Undo undo;
    final TailLossProbe tlp;
    final TcpSmallQueues tsq;
    final TcpErr icmpErr;
    /** The congestion state machine and its loss detector (re-chosen when the handshake settles SACK). */
    final LossRecovery recovery;
    TcpTrace trace;

    /** What congestion control reads of this connection, read through at the moment of each call. */
    private final class CcView extends CcSock {
        CcView(CcSwitches sw, long cwnd) {
            super(sw, cwnd, 0x7fff_ffffL);
        }

        @Override
        public long nowNanos() {
            return stack.now();
        }

        @Override
        public int hz() {
            return (int) stack.knobs().get(NetCoreSysctl.HZ);
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
            return sb.packetsOut();
        }

        @Override
        public long srttUs() {
            return rtt.srttUs;
        }

        @Override
        public int mss() {
            return mssCache;
        }
    }

    TcpSock(Tcp tcp, TcpAfOps af, int sndbuf, int rcvbuf) {
        this.tcp = tcp;
        this.stack = tcp.stack();
        this.af = af;
        this.cc = new CcView(tcp.ccSwitches(), tcp.initCwnd());
        this.ops = tcp.newCongestionOps(null);
        this.sendBuf = new SendBuffer(sndbuf);
        this.rcvbuf = rcvbuf;
        var knobs = stack.knobs();
        this.rtt = new RttEstimator(tcp);
        this.sb = new Scoreboard(this);
        this.rq = new ReceiveQueue(this);
        this.rwnd = new ReceiveWindow(this);
        this.autotune = new BufferAutotune(this, sndbuf);
        this.delack = new DelayedAck(this);
        this.keepalive = new KeepAlive(this);
        this.timers = new TcpTimers(this);
        this.input = new TcpInput(this);
        this.ack = new TcpAck(this);
        this.out = new TcpOutput(this);
        this.retransmit = new Retransmit(this);
        this.cwv = new CwndValidation(this);
        this.prr = new Prr(this);
        this.undo = new Undo(this);
        this.tlp = new TailLossProbe(this);
        this.tsq = new TcpSmallQueues(this, knobs.get(TcpSysctl.TSQ));
        this.icmpErr = new TcpErr(this);
        this.recovery = new LossRecovery(this);
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

    /**
     * getsockopt(SO_ERROR): the pending error, else the soft one an ICMP error left (see {@link TcpErr}), cleared
     * by reading; {@link TcpError#NONE} when there is none.
     */
    public TcpError takeSoError() {
        return icmpErr.takeSoError();
    }

    /** IP_RECVERR: ICMP errors of an established connection become pending errors at once (off by default). */
    public void setRecvErr(boolean on) {
        icmpErr.setRecvErr(on);
    }

    public NetStack stack() {
        return stack;
    }

    /** The local IPv4 address; 0 on an IPv6 connection (see {@link #localAddr6()}). */
    public int localAddr() {
        return laddr;
    }

    public int localPort() {
        return lport;
    }

    /** The remote IPv4 address; 0 on an IPv6 connection (see {@link #remoteAddr6()}). */
    public int remoteAddr() {
        return raddr;
    }

    /** Whether the connection runs over IPv6 (a v4-mapped one runs over IPv4: {@link #v4Mapped()}). */
    public boolean ipv6() {
        return af instanceof TcpIpv6Ops;
    }

    /** An IPv4 connection of an IPv6 socket (its addresses read as ::ffff:a.b.c.d). */
    public boolean v4Mapped() {
        return v4Mapped;
    }

    /** The local address as an IPv6 socket reads it: the IPv6 address, or an IPv4 one v4-mapped. */
    public Ipv6Addr localAddr6() {
        return ipv6() ? new Ipv6Addr(laddrHi, laddrLo) : mapped(laddr);
    }

    /** The remote address as an IPv6 socket reads it: the IPv6 address, or an IPv4 one v4-mapped. */
    public Ipv6Addr remoteAddr6() {
        return ipv6() ? new Ipv6Addr(raddrHi, raddrLo) : mapped(raddr);
    }

    /** The local address as {@code ss} prints it: dotted IPv4, or IPv6 (v4-mapped for a v4-mapped socket). */
    public String localAddrText() {
        return ipv6() || v4Mapped ? localAddr6().toString() : Ipv4Addr.format(laddr);
    }

    /** The remote address as {@code ss} prints it (see {@link #localAddrText()}). */
    public String remoteAddrText() {
        return ipv6() || v4Mapped ? remoteAddr6().toString() : Ipv4Addr.format(raddr);
    }

    /** ADDR:PORT as {@code ss} prints an endpoint: an IPv6 address in brackets. */
    static String endpoint(boolean v6, String addr, int port) {
        return v6 ? "[" + addr + "]:" + port : addr + ":" + port;
    }

    private static Ipv6Addr mapped(int v4) {
        return new Ipv6Addr(0, 0xffff_0000_0000L | (v4 & 0xffff_ffffL));
    }

    public int remotePort() {
        return rport;
    }

    /** TCP_NODELAY: send small segments at once instead of holding them while data is unacknowledged. */
    public void setNoDelay(boolean on) {
        nodelay = on;
        if (on) {
            out.pushPending();
        }
    }

    public boolean noDelay() {
        return nodelay;
    }

    /**
     * TCP_CORK: while on, only full segments leave; turning it off sends what was held at once, Nagle permitting
     * (tcp_sock_set_cork).
     */
    public void setCork(boolean on) {
        cork = on;
        if (!on) {
            out.pushPending();
        }
    }

    public boolean corked() {
        return cork;
    }

    /**
     * TCP_QUICKACK: 1 leaves interactive (ping-pong) mode, so received data is acknowledged at once again while
     * quick ACKs last, and sends an ACK that is owed; 0 enters it, so ACKs wait for the delayed-ACK timer or data
     * to ride on (tcp_sock_set_quickack).
     */
    public void setQuickAck(boolean on) {
        delack.setQuickAck(on);
    }

    /** SO_KEEPALIVE with TCP_KEEPIDLE/TCP_KEEPINTVL/TCP_KEEPCNT; -1 takes the namespace's net.ipv4.tcp_keepalive_*. */
    public void setKeepAlive(boolean on, int idleS, int intvlS, int cnt) {
        keepalive.set(on, idleS, intvlS, cnt);
    }

    /** TCP_MAXSEG (rx_opt.user_mss): caps the MSS announced and used; 0: not set. Takes effect at the handshake. */
    int userMss;

    public void setUserMss(int mss) {
        if (mss != 0 && (mss < 88 || mss > 65_535)) {
            throw new IllegalArgumentException("TCP_MAXSEG " + mss + " is out of range 88..65535 (or 0)");
        }
        userMss = mss;
    }

    /** TCP_SYNCNT: SYN retransmissions before connect() fails (1..127); 0 takes net.ipv4.tcp_syn_retries. */
    int synRetries;
    /** TCP_USER_TIMEOUT in milliseconds: how long data may stay unacknowledged; 0 uses tcp_retries2's count. */
    long userTimeoutMs;

    public void setSynRetries(int n) {
        if (n < 0 || n > 127) {
            throw new IllegalArgumentException("TCP_SYNCNT " + n + " is out of range 0..127");
        }
        synRetries = n;
    }

    public int synRetries() {
        return synRetries;
    }

    public void setUserTimeoutMs(long ms) {
        if (ms < 0 || ms > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("TCP_USER_TIMEOUT " + ms + " is out of range 0.." + Integer.MAX_VALUE);
        }
        userTimeoutMs = ms;
    }

    public long userTimeoutMs() {
        return userTimeoutMs;
    }

    /** TCP_CONGESTION: switches this connection's congestion control ("reno", "cubic"). */
    public void setCongestionControl(String name) {
        ops = tcp.newCongestionOps(name);
        ops.init(cc);
    }

    public String congestionControl() {
        return ops.name();
    }

    /**
     * SO_SNDBUF, which turns send-buffer autotuning off (SOCK_SNDBUF_LOCK). With autotuning (usnet.tcp.buffers=
     * autotune) Linux's rule: sk_sndbuf = 2 * bytes, bounding what is written and not yet acknowledged; with
     * buffers=max, bytes the application may have written and TCP not yet sent.
     */
    public void setSendBufferSize(int bytes) {
        sndbufLocked = true;
        if (autotune.on) {
            autotune.sndbuf = Math.max(BufferAutotune.SOCK_MIN_BUF, 2 * Math.max(0, Math.min(bytes, Integer.MAX_VALUE / 2)));
            sendBuf.resize(autotune.sndbuf);
        } else {
            sendBuf.resize(Math.max(4096, bytes));
        }
    }

    /**
     * SO_RCVBUF, which turns receive-buffer autotuning off (SOCK_RCVBUF_LOCK). With autotuning Linux's rule:
     * sk_rcvbuf = 2 * bytes, of which tcp_adv_win_scale offers half as window (so about {@code bytes}); with
     * buffers=max, bytes of received data held for the application, all offered.
     */
    public void setReceiveBufferSize(int bytes) {
        rcvbuf = autotune.on ? Math.max(BufferAutotune.SOCK_MIN_BUF, 2 * Math.max(0, Math.min(bytes, Integer.MAX_VALUE / 2)))
                : Math.max(4096, bytes);
        rcvbufLocked = true;
    }

    /** sk_rcvbuf now: where receive autotuning has brought it, or what SO_RCVBUF set ({@code ss -m}'s rb). */
    public int receiveBufferBytes() {
        return rcvbuf;
    }

    /** sk_sndbuf now: where send autotuning has brought it, or what SO_SNDBUF set ({@code ss -m}'s tb). */
    public int sendBufferBytes() {
        return autotune.on ? autotune.sndbuf : sendBuf.capacity();
    }

    /** window_clamp: the largest window this receiver will offer (unbounded with usnet.tcp.buffers=max). */
    public long windowClamp() {
        return autotune.windowClamp;
    }

    /** rcv_ssthresh: the limit the offered window grows to now (unbounded with usnet.tcp.buffers=max). */
    public long rcvSsthresh() {
        return autotune.rcvSsthresh;
    }

    /** Records cwnd, ssthresh, snd_cwnd_cnt and RTT on every ACK and congestion event into {@code t}. */
    public void setTrace(TcpTrace t) {
        this.trace = t;
        if (t != null) {
            t.record(stack.now(), cc, rtt.srttUs, sb.inFlight(), "start");
        }
    }

    /** Bytes the peer acknowledged so far (tcpi_bytes_acked), without building a {@link TcpInfo}. */
    public long bytesAcked() {
        return stats.bytesAcked;
    }

    /** The initial send sequence number (ISS) this connection chose. */
    long initialSendSequence() {
        return iss;
    }

    /** Segments retransmitted so far (tcpi_total_retrans). */
    public long totalRetrans() {
        return stats.totalRetrans;
    }

    /** Retransmission timeouts so far. */
    public long timeouts() {
        return stats.rtoCount;
    }

    /** snd_cwnd in segments. */
    public long cwnd() {
        return cc.sndCwnd;
    }

    /** Bytes that {@link #write} would take now. */
    public int writableBytes() {
        return canSend() ? autotune.sndRoom() : 0;
    }

    /** Bytes waiting to be read. */
    public int readableBytes() {
        return rq.queuedBytes();
    }

    /**
     * send(): copies up to {@code len} bytes into the send buffer and sends what cwnd and the peer's window
     * allow. Returns the bytes taken (less than {@code len} when the buffer is full: wait for
     * {@link Callbacks#writable}), or -1 when the connection can no longer send.
     */
    public int write(ByteBuf src, int off, int len) {
        return write(src, off, len, false);
    }

    /**
     * As {@link #write(ByteBuf, int, int)}; {@code more} is send()'s MSG_MORE: more data follows at once, so a
     * partial segment at the end is held as TCP_CORK would hold it, until a write without it or an ACK sends it.
     */
    public int write(ByteBuf src, int off, int len, boolean more) {
        if (!canSend()) {
            return state == TcpState.SYN_SENT || state == TcpState.SYN_RECV ? 0 : -1;
        }
        int n = sendBuf.write(src, off, Math.min(len, autotune.sndRoom()));
        if (n < len) {
            writeBlocked = true;
        }
        if (n > 0 && (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT)) {
            moreComing = more;
            try {
                out.writeXmit();
            } finally {
                moreComing = false;
            }
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

    private int consume(ByteBuf dst, int max) {
        int done = rq.consume(dst, max);
        if (done > 0) {
            autotune.copied(done);
            rwnd.afterRead();
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
        out.writeXmit();
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
            rq.release();
            tcp.holdUnread(this, false);
            return;
        }
        if (rq.queuedBytes() > 0 && state != TcpState.TIME_WAIT) {
            stack.mib().inc(Mib.TcpExtTCPAbortOnData);
            out.sendActiveReset();
            finish(TcpError.ECONNABORTED);
            return;
        }
        if (state == TcpState.LISTEN || state == TcpState.SYN_SENT) {
            finish(TcpError.NONE);
            return;
        }
        shutdownOutput();
        if (state == TcpState.FIN_WAIT2) {
            timers.timewait.arm(finTimeoutNanos());
        }
    }

    /** Sends a reset and drops the connection at once (SO_LINGER with zero timeout). */
    public void abort() {
        if (state == TcpState.CLOSED || state == TcpState.TIME_WAIT) {
            finish(TcpError.NONE);
            return;
        }
        if (state != TcpState.SYN_SENT) {
            out.sendActiveReset();
        }
        finish(TcpError.ECONNABORTED);
    }

    long rcvNxtForTimeWait() {
        return rcvNxt;
    }

    /** A snapshot of the connection as {@code ss -ti} shows it. */
    public TcpInfo info() {
        boolean v6 = ipv6() || v4Mapped;
        return new TcpInfo(state, cc.caState, ops.name(), endpoint(v6, localAddrText(), lport),
                endpoint(v6, remoteAddrText(), rport), sendBuf.size(), rq.queuedBytes(),
                tsOk, sackOk, wscaleOk ? sndWscale : -1, wscaleOk ? rcvWscale : -1,
                rtt.rtoNanos / 1000, timers.backoff, rtt.srttUs, rtt.rttvarUs,
                rtt.minRttUs == Long.MAX_VALUE ? -1 : rtt.minRttUs, delack.atoNanos / 1000, mssCache, rcvMss, advMss,
                cc.sndCwnd, cc.sndSsthresh, cc.sndCwndCnt, stats.bytesSent, stats.bytesRetrans, stats.bytesAcked,
                stats.bytesReceived, stats.segsOut, stats.segsIn, stats.dataSegsOut, stats.dataSegsIn,
                sb.packetsOut(), sb.retransOut(), stats.totalRetrans, sb.lostOut(), sb.sackedOut(), stats.rtoCount,
                recovery.reordering(), sndWnd, rwnd.rcvWnd, cwv.isCwndLimited, lastSendNanos, lastRcvNanos, lastAckRcvNanos,
                timers.retransmits, route != null ? icmpErr.pathMtu() : 0, autotune.rcvSsthresh, autotune.rcvRttUs(),
                autotune.rcvSpace(), sendBuf.size(), delack.lrcvNanos, stack.now());
    }

    @Override
    public String toString() {
        boolean v6 = ipv6() || v4Mapped;
        return "tcp " + state.ssName() + " " + endpoint(v6, localAddrText(), lport) + " -> "
                + endpoint(v6, remoteAddrText(), rport);
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

    /** The IPv6 connection's 4-tuple, set before it is hashed. */
    void setAddresses6(long localHi, long localLo, int localPort, long remoteHi, long remoteLo, int remotePort) {
        this.laddrHi = localHi;
        this.laddrLo = localLo;
        this.lport = localPort;
        this.raddrHi = remoteHi;
        this.raddrLo = remoteLo;
        this.rport = remotePort;
    }

    /** Whether this IPv6 connection has these remote and local addresses and ports. */
    boolean matches6(long rh, long rl, int rp, int lp, long lh, long ll) {
        return raddrLo == rl && raddrHi == rh && rport == rp && lport == lp && laddrLo == ll && laddrHi == lh;
    }

    /** Active open (tcp_v4_connect, tcp_v6_connect, then tcp_connect): sends the SYN. */
    void connect(Dst rt) {
        open(rt);
        setState(TcpState.SYN_SENT);
        stack.mib().inc(Mib.TcpActiveOpens);
        out.queueControl(TcpSkbCb.SEG_SYN);
    }

    /** Passive open: a SYN reached a listener; this child answers with a SYN-ACK (tcp_conn_request). */
    void acceptSyn(TcpListener l, Dst rt, TcpSegment seg, TcpOptions o) {
        this.parent = l;
        open(rt);
        adoptPeerSyn(seg, o);
        computeMss();
        setState(TcpState.SYN_RECV);
        stack.mib().inc(Mib.TcpPassiveOpens);
        out.queueControl(TcpSkbCb.SEG_SYN);
    }

    /**
     * A connection made from a SYN cookie (cookie_v4_check, tcp_get_cookie_sock): the final ACK {@code seg}
     * gives back the cookie as our ISN (its ACK less one), the peer's ISN (its sequence less one), the MSS the
     * cookie encodes and the options its timestamp echo carried ({@code opts}, {@link SynCookies}); the timestamp
     * offset is the one the SYN-ACK used. It starts in SYN-RECV with nothing outstanding and the window the
     * SYN-ACK offered, then takes the ACK as any child does.
     */
    void acceptCookie(TcpListener l, Dst rt, TcpSegment seg, TcpOptions o, int mss, int opts, long tsOff) {
        this.parent = l;
        this.fromCookie = true;
        this.route = rt;
        initLocalOptions(rt);
        tsOffset = tsOff;
        tsOk = (opts & SynCookies.OPT_TS) != 0;
        sackOk = (opts & SynCookies.OPT_SACK) != 0;
        wscaleOk = (opts & SynCookies.OPT_WSCALE) != 0;
        chooseRecovery();
        sndWscale = wscaleOk ? opts & SynCookies.TS_WSCALE_MASK : 0;
        if (!wscaleOk) {
            rcvWscale = 0;
        }
        peerMss = mss;
        iss = Seq.add(seg.ack(), -1);
        sndUna = seg.ack();
        sndNxt = sndUna;
        sb.start(sndUna);
        sndSml = sndUna;
        irs = Seq.add(seg.seq(), -1);
        rcvNxt = seg.seq();
        if (tsOk) {
            tsRecent = o.tsVal;
            tsRecentValid = true;
        }
        sndWnd = (long) seg.window() << sndWscale;
        sndWl1 = seg.seq();
        computeMss();
        setState(TcpState.SYN_RECV);
        rwnd.selectSynWindow();
        stack.mib().inc(Mib.TcpPassiveOpens);
    }

    /** What both opens share: the route, our own options and what we offer, a random initial sequence number. */
    private void open(Dst rt) {
        this.route = rt;
        initLocalOptions(rt);
        var knobs = stack.knobs();
        tsOk = knobs.get(TcpSysctl.TIMESTAMPS) != 0;
        sackOk = knobs.get(TcpSysctl.SACK) != 0;
        wscaleOk = knobs.get(TcpSysctl.WINDOW_SCALING) != 0;
        chooseRecovery();
        iss = stack.random().nextLong(1L << 32);
        sndUna = iss;
        sndNxt = iss;
        sb.start(iss);
        sndSml = iss;
    }

    /**
     * What the peer's SYN (or SYN-ACK) settles: an option is used only when both sides offered it (our offer is
     * in tsOk/sackOk/wscaleOk); the peer's MSS (without the option the family's default, 536 over IPv4 as RFC 9293, 1220 over IPv6), its first timestamp, its
     * initial sequence number and its window, which a SYN never scales.
     */
    void adoptPeerSyn(TcpSegment seg, TcpOptions o) {
        tsOk = tsOk && o.hasTimestamp;
        sackOk = sackOk && o.sackPermitted;
        wscaleOk = wscaleOk && o.hasWscale;
        chooseRecovery();
        sndWscale = wscaleOk ? o.wscale : 0;
        if (!wscaleOk) {
            rcvWscale = 0;
            // tcp_rcv_synsent_state_process: without scaling no window beyond 64 KiB can ever be offered.
            autotune.windowClamp = Math.min(autotune.windowClamp, 65_535L);
        }
        peerMss = o.hasMss ? o.mss : af.defaultPeerMss();
        if (userMss > 0 && userMss < peerMss) {
            // rx_opt.mss_clamp: TCP_MAXSEG caps what we send, whatever the peer offers.
            peerMss = userMss;
        }
        if (tsOk) {
            tsRecent = o.tsVal;
            tsRecentValid = true;
        }
        irs = seg.seq();
        rcvNxt = Seq.add(irs, 1);
        rwnd.rcvWup = rcvNxt;
        sndWnd = seg.window();
        sndWl1 = irs;
    }

    private void chooseRecovery() {
        recovery.chooseDetector();
    }

    private void initLocalOptions(Dst rt) {
        advMss = af.advMss(rt);
        if (userMss > 0 && userMss < advMss) {
            // tcp_advertise_mss: TCP_MAXSEG lowers the MSS the SYN announces.
            advMss = userMss;
        }
        rcvMss = Math.min(advMss, 536);
        // Linux picks the smallest shift that lets the largest receive buffer fit the 16-bit window.
        // SO_RCVBUF set before connect() fixes the buffer (SOCK_RCVBUF_LOCK); otherwise tcp_rmem's maximum.
        int ws;
        if (autotune.on) {
            ws = autotune.windowScale();
        } else {
            long space = rcvbufLocked ? rcvbuf : Math.max(rcvbuf, stack.knobs().get(TcpSysctl.RMEM).max());
            ws = windowScaleFor(space);
        }
        rcvWscale = stack.knobs().get(TcpSysctl.WINDOW_SCALING) != 0 ? ws : 0;
        tsOffset = stack.random().nextLong(1L << 32);
        lastRcvNanos = stack.now();
        lastAckRcvNanos = lastRcvNanos;
    }

    /** The smallest shift that lets a receive buffer of {@code space} bytes fit the 16-bit window (at most 14). */
    static int windowScaleFor(long space) {
        int ws = 0;
        while (space > 65_535L << ws && ws < 14) {
            ws++;
        }
        return ws;
    }

    /** The send MSS from the peer's and the path MTU's, less timestamps; the TSO size goal from it. */
    void computeMss() {
        int mtu = icmpErr.pathMtu();
        int mss = Math.min(peerMss, af.mtuToMss(mtu));
        if (tsOk) {
            mss -= 12;
        }
        mssCache = Math.max(mss, 48);
        boolean tso = route.dev().gsoOffload() && stack.knobs().get(TcpSysctl.TSO) != 0;
        if (tso) {
            int max = GSO_MAX_SIZE - af.netHeaderLen() - dataHeaderLen();
            sizeGoal = Math.max(mssCache, max / mssCache * mssCache);
        } else {
            sizeGoal = mssCache;
        }
    }

    /** The MSS the peer announced (rx_opt.mss_clamp). */
    int peerMss() {
        return peerMss;
    }

    int dataHeaderLen() {
        return TcpSegment.MIN_HEADER_LEN + (tsOk ? 12 : 0);
    }

    void established() {
        setState(TcpState.ESTABLISHED);
        ops.init(cc);
        autotune.initBufferSpace();
        delack.established();
        lastSendNanos = stack.now();
        keepalive.established();
    }

    // ------------------------------------------------------------------------------------------------------
    // What the parts share

    /** A segment for this connection; {@code seg} and {@code o} are parsed views valid for this call. Owns p. */
    void rcv(Packet p, TcpSegment seg, TcpOptions o) {
        input.rcv(p, seg, o);
    }

    boolean canSend() {
        return !finQueued && (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT
                || state == TcpState.SYN_SENT || state == TcpState.SYN_RECV);
    }

    /** An acceptable ACK arrived at {@code now} (rcv_tstamp of the last ACK). */
    void ackReceived(long now) {
        lastAckRcvNanos = now;
    }

    /** The peer acknowledged up to {@code ack}: snd_una moves there, and snd_sml never lags it. */
    void unaAdvanced(long ack) {
        sndUna = ack;
        if (Seq.before(sndSml, ack)) {
            sndSml = ack;
        }
    }

    /** tcp_ack_update_window accepted a window: {@code wnd} bytes from the segment {@code seq} (SND.WL1). */
    void updateSendWindow(long seq, long wnd) {
        sndWl1 = seq;
        sndWnd = wnd;
        if (wnd > maxWindow) {
            maxWindow = wnd;
        }
    }

    /**
     * tcp_check_space: a writer waits for room (SOCK_NOSPACE), so the send buffer may grow with cwnd, and the
     * writer hears once there is room again.
     */
    void checkSpace() {
        if (writeBlocked) {
            autotune.newSpace();
        }
        if (writeBlocked && autotune.writeable() && canSend()) {
            writeBlocked = false;
            callbacks.writable(this);
        }
    }

    /** What the peer's window still takes beyond snd_nxt (may be negative when it shrank). */
    long sendWindowLeft() {
        return Seq.sub(Seq.add(sndUna, sndWnd), sndNxt);
    }

    /** packets_out - (sacked_out + lost_out) + retrans_out. */
    long packetsInFlight() {
        return sb.inFlight();
    }

    /** The TCP timestamp clock: milliseconds, offset randomly per connection (RFC 7323). */
    long tsNow() {
        return stack.now() / 1_000_000L + tsOffset & 0xffff_ffffL;
    }

    void notifyReadable() {
        if (!orphan) {
            callbacks.readable(this);
        }
    }

    private long finTimeoutNanos() {
        return stack.knobs().get(TcpSysctl.FIN_TIMEOUT) * 1_000_000_000L;
    }

    // ------------------------------------------------------------------------------------------------------
    // State

    void setState(TcpState s) {
        if (s == TcpState.ESTABLISHED && state != TcpState.ESTABLISHED) {
            tcp.currEstab(+1);
        } else if (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT) {
            if (s != TcpState.CLOSE_WAIT && s != TcpState.ESTABLISHED) {
                tcp.currEstab(-1);
            }
        }
        state = s;
    }

    void setCaState(CaState s) {
        if (cc.caState != s) {
            ops.setState(cc, s);
            cc.caState = s;
            traceEvent(CA_EVENT_NAMES[s.ordinal()]);
        }
    }

    // Trace event names per CA state, built once rather than concatenated on every state change.
    private static final String[] CA_EVENT_NAMES = java.util.Arrays.stream(CaState.values())
            .map(st -> "ca-" + st.ssName()).toArray(String[]::new);

    void traceEvent(String what) {
        if (trace != null) {
            trace.record(stack.now(), cc, rtt.srttUs, sb.inFlight(), what);
        }
    }

    /** Our FIN was acknowledged: FIN-WAIT-1 → FIN-WAIT-2, CLOSING → TIME-WAIT, LAST-ACK → closed. */
    void finAckedTransitions() {
        if (!finSent || Seq.after(sndNxt, sndUna)) {
            return;
        }
        switch (state) {
            case FIN_WAIT1 -> {
                setState(TcpState.FIN_WAIT2);
                if (orphan) {
                    timers.timewait.arm(finTimeoutNanos());
                }
            }
            case CLOSING -> enterTimeWait();
            case LAST_ACK -> finish(TcpError.NONE);
            default -> { }
        }
    }

    void enterTimeWait() {
        setState(TcpState.TIME_WAIT);
        stack.mib().inc(Mib.TcpExtTW);
        timers.enterTimeWait();
        releaseSendSide();
    }

    void resetByPeer() {
        if (state == TcpState.SYN_RECV) {
            // An embryonic connection reset by the peer just disappears (the listener never saw it).
            finish(TcpError.NONE);
            return;
        }
        // tcp_reset: after the peer's FIN only sending can fail, so the error is a broken pipe.
        TcpError why = state == TcpState.CLOSE_WAIT ? TcpError.EPIPE : TcpError.ECONNRESET;
        if (state == TcpState.ESTABLISHED || state == TcpState.CLOSE_WAIT) {
            stack.mib().inc(Mib.TcpEstabResets);
        }
        finish(why);
    }

    /** The connection is over: timers stop, buffers go back to the pool, the application hears why. */
    void finish(TcpError why) {
        if (state == TcpState.CLOSED && closedNotified) {
            return;
        }
        boolean wasSynRecv = state == TcpState.SYN_RECV;
        setState(TcpState.CLOSED);
        // tcp_write_err: a timeout reports the last ICMP error heard, if any.
        error = why == TcpError.ETIMEDOUT ? icmpErr.timeoutError() : why;
        why = error;
        timers.stopAll();
        releaseSendSide();
        rq.clearOutOfOrder();
        if (orphan || wasSynRecv) {
            rq.release();
        }
        tcp.unhash(this);
        if (parent != null) {
            parent.childGone(this);
        }
        closedNotified = true;
        Callbacks cb = callbacks;
        cb.closed(this, why);
        if (orphan) {
            rq.release();
        } else {
            // What it received stays readable until its application closes it; the namespace's close releases it
            // if the application never does.
            tcp.holdUnread(this, true);
        }
    }

    private void releaseSendSide() {
        sb.release();
        sendBuf.release();
    }

    /** Releases everything a closed connection still holds (unread data); called when the namespace goes. */
    void destroy() {
        orphan = true;
        callbacks = NO_CALLBACKS;
        if (state != TcpState.CLOSED) {
            finish(TcpError.ECONNABORTED);
        }
        rq.release();
        tcp.holdUnread(this, false);
    }
}
