package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.route.Dst;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.TcpSegment;
import java.util.ArrayDeque;

/**
 * A listening socket (tcp_conn_request, cookie_v4_check): SYNs become connections in SYN-RECV (the SYN queue),
 * completed handshakes wait in the accept queue; both are bounded by the listen backlog as in Linux. When the SYN
 * queue overflows, SYNs are answered with SYN cookies ({@link SynCookies}, net.ipv4.tcp_syncookies = 1; 2
 * answers every SYN so, 0 drops instead), which keep no state: a final ACK carrying a valid cookie makes the
 * connection. Counters as Linux's: ListenOverflows (accept queue full), ListenDrops (every SYN or ACK dropped
 * for the listener), SyncookiesSent/Recv/Failed, TCPReqQFullDoCookies/TCPReqQFullDrop.
 *
 * <p>An IPv4 listener has an IPv4 address; an IPv6 one an IPv6 address and IPV6_V6ONLY: on the any address without
 * it, the listener takes IPv4 connections too, and their children run over IPv4 with v4-mapped addresses.
 */
public final class TcpListener {
    /** Called on the namespace thread for each connection whose handshake completed. */
    public interface Acceptor {
        void accepted(TcpSock child);
    }

    private final Tcp tcp;
    private final int addr;
    /** The IPv6 address of an IPv6 listener (ANY: every local address); null for an IPv4 listener. */
    private final Ipv6Addr addr6;
    /** IPV6_V6ONLY of an IPv6 listener: IPv4 connections are not its. */
    private final boolean v6only;
    private final int port;
    private final int backlog;
    private final Acceptor acceptor;
    private final ArrayDeque<TcpSock> acceptQueue = new ArrayDeque<>();
    private int synQueueLen;
    private long overflows;
    private long drops;
    private long cookiesSent;
    /** When the last SYN cookie was sent (tcp_synq_overflow's stamp), or never. */
    private long lastOverflowNanos;
    private boolean overflowed;
    private boolean closed;

    TcpListener(Tcp tcp, int addr, int port, int backlog, Acceptor acceptor) {
        this(tcp, addr, null, false, port, backlog, acceptor);
    }

    TcpListener(Tcp tcp, Ipv6Addr addr6, boolean v6only, int port, int backlog, Acceptor acceptor) {
        this(tcp, 0, addr6, v6only, port, backlog, acceptor);
    }

    private TcpListener(Tcp tcp, int addr, Ipv6Addr addr6, boolean v6only, int port, int backlog, Acceptor acceptor) {
        this.tcp = tcp;
        this.addr = addr;
        this.addr6 = addr6;
        this.v6only = v6only;
        this.port = port;
        this.backlog = backlog;
        this.acceptor = acceptor;
    }

    /** The IPv4 address listened on (0: any); 0 for an IPv6 listener. */
    public int addr() {
        return addr;
    }

    /** Whether this is an IPv6 listener. */
    public boolean ipv6() {
        return addr6 != null;
    }

    /** The IPv6 address listened on (ANY: any); null for an IPv4 listener. */
    public Ipv6Addr addr6() {
        return addr6;
    }

    /** IPV6_V6ONLY of an IPv6 listener. */
    public boolean v6only() {
        return v6only;
    }

    /** Whether IPv4 connections to the port are this listener's: an IPv4 one, or IPv6 on any without V6ONLY. */
    boolean acceptsIpv4() {
        return addr6 == null || !v6only && addr6.isUnspecified();
    }

    /** Whether an IPv6 segment to {@code dh}/{@code dl} is this IPv6 listener's. */
    boolean accepts6(long dh, long dl) {
        return addr6 != null && (addr6.isUnspecified() || addr6.hi() == dh && addr6.lo() == dl);
    }

    /** The local endpoint as {@code ss} prints it: {@code 0.0.0.0:80}, {@code [::]:80}. */
    public String localText() {
        return addr6 != null ? "[" + addr6 + "]:" + port : dev.usnet.core.wire.Ipv4Addr.format(addr) + ":" + port;
    }

    public int port() {
        return port;
    }

    /** The listen backlog (sk_max_ack_backlog): bounds both queues. */
    public int backlog() {
        return backlog;
    }

    /** Connections waiting in the accept queue (Recv-Q of a listener in ss). */
    public int acceptQueueLength() {
        return acceptQueue.size();
    }

    /** Connections in SYN-RECV. */
    public int synQueueLength() {
        return synQueueLen;
    }

    public long listenOverflows() {
        return overflows;
    }

    public long listenDrops() {
        return drops;
    }

    /** SYN-ACKs this listener answered with a cookie. */
    public long cookiesSent() {
        return cookiesSent;
    }

    /** accept(): the next completed connection, or null (only used when no {@link Acceptor} was given). */
    public TcpSock accept() {
        TcpSock s = acceptQueue.pollFirst();
        if (s != null) {
            s.parent = null;
        }
        return s;
    }

    /** sk_acceptq_is_full: Linux admits one more than the backlog (the test is "greater than"). */
    boolean acceptQueueFull() {
        return acceptQueue.size() > backlog;
    }

    /**
     * inet_csk_reqsk_queue_is_full: the SYN queue is bounded by the listen backlog too, with the same "greater
     * than" (Linux 6.10 on; before, a backlog of 0 refused every SYN).
     */
    boolean synQueueFull() {
        return synQueueLen > backlog;
    }

    void countOverflow() {
        overflows++;
        tcp.stack().mib().inc(Mib.TcpExtListenOverflows);
        countDrop();
    }

    /** tcp_listendrop. */
    private void countDrop() {
        drops++;
        tcp.stack().mib().inc(Mib.TcpExtListenDrops);
    }

    /**
     * A segment for the listening port with no connection of its own, arrived over {@code af}. {@code src} and
     * {@code dst} are its addresses as the cookie hashes take them (IPv6's folded to 32 bits). Owns {@code p}.
     */
    void rcv(TcpAfOps af, Packet p, int src, int dst, TcpSegment seg, TcpOptions o) {
        int flags = seg.flags();
        if ((flags & TcpSegment.RST) != 0) {
            p.release();
            return;
        }
        if ((flags & TcpSegment.ACK_FLAG) != 0) {
            if ((flags & TcpSegment.SYN) == 0 && cookieAck(af, p, src, dst, seg, o)) {
                return;
            }
            // An ACK for a connection we do not know (a SYN-RECV that timed out, a forged or stale cookie).
            tcp.replyReset(af, p, seg, seg.payloadLength() + seg.headerLength());
            tcp.stack().drop(p, DropReason.TCP_NO_SOCKET);
            return;
        }
        if ((flags & TcpSegment.SYN) == 0) {
            tcp.stack().drop(p, DropReason.TCP_NO_SOCKET);
            return;
        }
        rcvSyn(af, p, src, dst, seg, o, false);
    }

    /**
     * tcp_conn_request: the SYN queue's and accept queue's limits, then either a child in SYN-RECV that answers
     * with a SYN-ACK, or a cookie SYN-ACK and no state. {@code reusesTimeWait}: the SYN took over a TIME-WAIT
     * pair, which Linux admits without the SYN queue's limit ("the peer is evidently real"). Owns {@code p}.
     */
    void rcvSyn(TcpAfOps af, Packet p, int src, int dst, TcpSegment seg, TcpOptions o, boolean reusesTimeWait) {
        var stack = tcp.stack();
        if (closed) {
            p.release();
            return;
        }
        long syncookies = stack.knobs().get(TcpSysctl.SYNCOOKIES);
        boolean wantCookie = false;
        if ((syncookies == 2 || synQueueFull()) && !reusesTimeWait) {
            // tcp_syn_flood_action
            if (syncookies != 0) {
                wantCookie = true;
                stack.mib().inc(Mib.TcpExtTCPReqQFullDoCookies);
            } else {
                stack.mib().inc(Mib.TcpExtTCPReqQFullDrop);
                countDrop();
                stack.drop(p, DropReason.TCP_SYN_QUEUE_FULL);
                return;
            }
        }
        if (acceptQueueFull()) {
            countOverflow();
            stack.drop(p, DropReason.TCP_LISTEN_OVERFLOW);
            return;
        }
        if (!wantCookie && !reusesTimeWait && syncookies == 0) {
            // Without cookies the last quarter of tcp_max_syn_backlog is kept for peers proven alive (a saved RTT in
            // tcp_metrics); usnet keeps no such metrics, so no peer is proven.
            long max = stack.knobs().get(TcpSysctl.MAX_SYN_BACKLOG);
            if (max - synQueueLen < max >> 2) {
                countDrop();
                stack.drop(p, DropReason.TCP_SYN_QUEUE_FULL);
                return;
            }
        }
        Dst rt = af.routeReply(p);
        if (rt == null) {
            stack.drop(p, DropReason.IP_NOROUTE);
            return;
        }
        if (wantCookie) {
            sendCookie(af, p, rt, src, dst, seg, o);
            p.release();
            return;
        }
        TcpSock child = newChild(af, p, seg);
        synQueueLen++;
        child.inSynQueue = true;
        child.acceptSyn(this, rt, seg, o);
        p.release();
    }

    /**
     * The want_cookie branch of tcp_conn_request: the options a normal SYN-ACK would settle, with the peer's MSS
     * rounded down to the cookie table and, without timestamps, no SACK or window scaling (nowhere to keep
     * them); the SYN-ACK goes out and nothing is remembered but the time (tcp_synq_overflow).
     */
    private void sendCookie(TcpAfOps af, Packet syn, Dst rt, int src, int dst, TcpSegment seg, TcpOptions o) {
        var stack = tcp.stack();
        var knobs = stack.knobs();
        long now = stack.now();
        boolean ts = o.hasTimestamp && knobs.get(TcpSysctl.TIMESTAMPS) != 0;
        boolean sack = ts && o.sackPermitted && knobs.get(TcpSysctl.SACK) != 0;
        boolean wscale = ts && o.hasWscale && knobs.get(TcpSysctl.WINDOW_SCALING) != 0;
        int mssIndex = SynCookies.mssIndex(o.hasMss ? o.mss : 536);
        SynCookies cookies = tcp.synCookies();
        long iss = cookies.initSequence(src, dst, seg.srcPort(), port, seg.seq(), mssIndex, now);
        long tsVal = 0;
        if (ts) {
            long clockMs = now / 1_000_000L;
            tsVal = SynCookies.initTimestamp(clockMs, wscale, o.wscale, sack) + cookies.tsOffset(dst, src) & 0xffff_ffffL;
        }
        lastOverflowNanos = now;
        overflowed = true;
        cookiesSent++;
        stack.mib().inc(Mib.TcpExtSyncookiesSent);
        TcpOutput.sendStatelessSynAck(tcp, af, syn, rt, port, seg.srcPort(), iss, Seq.add(seg.seq(), 1),
                sack, ts, tsVal, o.tsVal, wscale);
    }

    /**
     * cookie_v4_check: a final ACK for no connection, while cookies were sent in the last two minutes, is
     * checked as one; a good cookie makes the connection in SYN-RECV, which then takes the ACK (and any data)
     * as usual. Returns false when the ACK is not a cookie's (the caller answers with a reset).
     */
    private boolean cookieAck(TcpAfOps af, Packet p, int src, int dst, TcpSegment seg, TcpOptions o) {
        var stack = tcp.stack();
        var knobs = stack.knobs();
        long now = stack.now();
        if (knobs.get(TcpSysctl.SYNCOOKIES) == 0 || !overflowed || now - lastOverflowNanos > SynCookies.VALID_NANOS) {
            return false;
        }
        SynCookies cookies = tcp.synCookies();
        int mss = cookies.check(src, dst, seg.srcPort(), port, seg.ack(), seg.seq(), now);
        if (mss == 0) {
            stack.mib().inc(Mib.TcpExtSyncookiesFailed);
            return false;
        }
        stack.mib().inc(Mib.TcpExtSyncookiesRecv);
        long echo = 0;
        if (o.hasTimestamp && o.tsEcr != 0) {
            echo = o.tsEcr - cookies.tsOffset(dst, src) & 0xffff_ffffL;
        }
        int opts = SynCookies.decodeTimestamp(o.hasTimestamp, echo, knobs.get(TcpSysctl.TIMESTAMPS) != 0,
                knobs.get(TcpSysctl.SACK) != 0, knobs.get(TcpSysctl.WINDOW_SCALING) != 0);
        if (opts == SynCookies.REJECT) {
            return false;
        }
        if (closed) {
            p.release();
            return true;
        }
        if (acceptQueueFull()) {
            // tcp_v4_syn_recv_sock: no room for the child; the ACK is dropped without a reset.
            countOverflow();
            stack.drop(p, DropReason.TCP_LISTEN_OVERFLOW);
            return true;
        }
        Dst rt = af.routeReply(p);
        if (rt == null) {
            stack.drop(p, DropReason.IP_NOROUTE);
            return true;
        }
        TcpSock child = newChild(af, p, seg);
        child.acceptCookie(this, rt, seg, o, mss, opts, cookies.tsOffset(dst, src));
        child.rcv(p, seg, o);
        return true;
    }

    /**
     * A connection for the segment {@code p} over {@code af}, hashed; an IPv4 one made by an IPv6 listener reads
     * its addresses v4-mapped.
     */
    private TcpSock newChild(TcpAfOps af, Packet p, TcpSegment seg) {
        TcpSock child = tcp.newSock(af);
        af.initChild(child, p, port, seg.srcPort());
        child.v4Mapped = addr6 != null && !child.ipv6();
        tcp.hash(child);
        return child;
    }

    /** The child's handshake completed: into the accept queue, or straight to the acceptor. */
    void childEstablished(TcpSock child) {
        if (child.inSynQueue) {
            child.inSynQueue = false;
            synQueueLen--;
        }
        if (acceptor != null) {
            child.parent = null;
            acceptor.accepted(child);
        } else {
            acceptQueue.addLast(child);
        }
    }

    /**
     * A child went away before it was accepted. One still in SYN-RECV leaves the SYN queue; one already in the
     * accept queue stays there, closed, as in Linux: accept() hands it out and the application then reads why it
     * ended (ECONNRESET after a reset), and until then it takes its place in the queue.
     */
    void childGone(TcpSock child) {
        if (child.inSynQueue) {
            child.inSynQueue = false;
            synQueueLen--;
        }
    }

    /** Stops listening; connections not yet accepted are reset. */
    public void close() {
        closed = true;
        tcp.unlisten(this);
        for (TcpSock s : acceptQueue.toArray(new TcpSock[0])) {
            s.abort();
        }
        acceptQueue.clear();
    }
}
