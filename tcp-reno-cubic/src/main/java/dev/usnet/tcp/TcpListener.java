package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.route.Route;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.TcpSegment;
import java.util.ArrayDeque;

/**
 * A listening socket: SYNs become connections in SYN-RECV (the SYN queue, bounded by
 * net.ipv4.tcp_max_syn_backlog), completed handshakes wait in the accept queue (bounded by the listen
 * backlog). A full queue drops the SYN and counts ListenOverflows/ListenDrops, as Linux does without
 * SYN cookies.
 */
public final class TcpListener {
    /** Called on the namespace thread for each connection whose handshake completed. */
    public interface Acceptor {
        void accepted(TcpSock child);
    }

    private final Tcp tcp;
    private final int addr;
    private final int port;
    private final int backlog;
    private final Acceptor acceptor;
    private final ArrayDeque<TcpSock> acceptQueue = new ArrayDeque<>();
    private int synQueueLen;
    private long overflows;
    private long drops;
    private boolean closed;

    TcpListener(Tcp tcp, int addr, int port, int backlog, Acceptor acceptor) {
        this.tcp = tcp;
        this.addr = addr;
        this.port = port;
        this.backlog = backlog;
        this.acceptor = acceptor;
    }

    public int addr() {
        return addr;
    }

    public int port() {
        return port;
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

    void countOverflow() {
        overflows++;
        drops++;
        tcp.stack().mib().inc(Mib.TcpExtListenOverflows);
        tcp.stack().mib().inc(Mib.TcpExtListenDrops);
    }

    /** A segment for the listening port with no connection of its own. Owns {@code p}. */
    void rcv(Packet p, int src, int dst, TcpSegment seg, TcpOptions o) {
        int flags = seg.flags();
        if ((flags & TcpSegment.RST) != 0) {
            p.release();
            return;
        }
        if ((flags & TcpSegment.ACK_FLAG) != 0) {
            // An ACK for a connection we do not know (e.g. a SYN-RECV that timed out): reset it.
            tcp.replyReset(src, dst, seg, seg.payloadLength() + seg.headerLength());
            tcp.stack().drop(p, DropReason.TCP_NO_SOCKET);
            return;
        }
        if ((flags & TcpSegment.SYN) == 0) {
            tcp.stack().drop(p, DropReason.TCP_NO_SOCKET);
            return;
        }
        rcvSyn(p, src, dst, seg, o);
    }

    /** tcp_conn_request: queue limits, then a child in SYN-RECV that answers with a SYN-ACK. Owns {@code p}. */
    void rcvSyn(Packet p, int src, int dst, TcpSegment seg, TcpOptions o) {
        var stack = tcp.stack();
        if (closed) {
            p.release();
            return;
        }
        if (acceptQueueFull()) {
            countOverflow();
            stack.drop(p, DropReason.TCP_LISTEN_OVERFLOW);
            return;
        }
        if (synQueueLen >= stack.knobs().get(TcpSysctl.MAX_SYN_BACKLOG)) {
            drops++;
            stack.mib().inc(Mib.TcpExtListenDrops);
            stack.drop(p, DropReason.TCP_LISTEN_OVERFLOW);
            return;
        }
        Route rt = stack.ipOutput().routeOutput(src);
        if (rt == null) {
            stack.drop(p, DropReason.IP_NOROUTE);
            return;
        }
        TcpSock child = tcp.newSock();
        child.setAddresses(dst, port, src, seg.srcPort());
        tcp.hash(child);
        synQueueLen++;
        child.acceptSyn(this, rt, seg, o);
        p.release();
    }

    /** The child's handshake completed: into the accept queue, or straight to the acceptor. */
    void childEstablished(TcpSock child) {
        synQueueLen--;
        if (acceptor != null) {
            child.parent = null;
            acceptor.accepted(child);
        } else {
            acceptQueue.addLast(child);
        }
    }

    /** A child went away before it was accepted. */
    void childGone(TcpSock child, boolean wasSynRecv) {
        if (wasSynRecv) {
            synQueueLen--;
        }
        acceptQueue.remove(child);
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
