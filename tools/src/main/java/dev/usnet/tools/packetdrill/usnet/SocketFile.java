package dev.usnet.tools.packetdrill.usnet;

import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLERR;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLHUP;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLIN;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLOUT;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLRDHUP;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLRDNORM;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLWRNORM;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;

/**
 * A TCP socket of the script's process (struct socket with its struct sock): the usnet listener or connection
 * behind it once there is one, and what Linux keeps at the socket layer and usnet's TCP does not — the socket's
 * connect state (SS_UNCONNECTED / SS_CONNECTING / SS_CONNECTED), O_NONBLOCK, the pending error sk_err that SO_ERROR
 * and the next call report once, the shutdown bits, and the options set before a connection exists.
 */
final class SocketFile implements OpenFile, TcpSock.Callbacks {
    /** inet_stream_connect's view of the socket (socket.state). */
    enum ConnectState { UNCONNECTED, CONNECTING, CONNECTED }

    boolean nonBlocking;
    int boundAddr;
    /** The IPv6 address bound over {@code ipv6} (null: none, or an IPv4 socket). */
    dev.usnet.core.wire.Ipv6Addr boundAddr6;
    int boundPort;
    boolean bound;
    TcpListener listener;
    /** The backlog listen() was called with. */
    int listenBacklog;
    TcpSock sock;
    ConnectState connectState = ConnectState.UNCONNECTED;
    /** sk_err: the errno a failed or reset connection left, reported (and cleared) once. */
    int skErr;
    /** shutdown(2) by the application: RCV_SHUTDOWN, SEND_SHUTDOWN. */
    boolean userShutRd;
    boolean userShutWr;
    private long wakeups;

    // Options, kept so they reach a connection made later (connect, accept).
    boolean reuseAddr;
    boolean reusePort;
    boolean noDelay;
    boolean keepAlive;
    int keepIdleS = -1;
    int keepIntvlS = -1;
    int keepCnt = -1;
    String congestion;
    /** SO_RCVBUF / SO_SNDBUF as the application asked (before Linux doubles it); -1: not set. */
    int rcvbufRequest = -1;
    int sndbufRequest = -1;
    boolean lingerOn;
    int lingerSeconds;
    /** TCP_MAXSEG; 0: not set. */
    int userMss;
    /** TCP_SYNCNT; 0: not set (net.ipv4.tcp_syn_retries). */
    int synCnt;
    /** TCP_USER_TIMEOUT in milliseconds; 0: not set. */
    int userTimeoutMs;

    SocketFile(boolean nonBlocking) {
        this.nonBlocking = nonBlocking;
    }

    /** Takes {@code s} as this socket's connection; its events count as wake-ups from now on. */
    void attach(TcpSock s) {
        sock = s;
        s.setCallbacks(this);
        if (s.state() == TcpState.CLOSED) {
            noteError(s.error());
        }
    }

    /**
     * Applies the options a connection takes from its socket (before its SYN, or to an accepted child); buffer sizes
     * were clamped to rmem_max / wmem_max when set.
     */
    /** TCP_SYNCNT and TCP_USER_TIMEOUT. */
    void applyTimeoutOptions(TcpSock s) {
        s.setSynRetries(synCnt);
        s.setUserTimeoutMs(userTimeoutMs);
    }

    void applyOptions(TcpSock s) {
        if (noDelay) {
            s.setNoDelay(true);
        }
        if (keepAlive || keepIdleS >= 0 || keepIntvlS >= 0 || keepCnt >= 0) {
            s.setKeepAlive(keepAlive, keepIdleS, keepIntvlS, keepCnt);
        }
        if (congestion != null && !congestion.equals(s.congestionControl())) {
            s.setCongestionControl(congestion);
        }
        applyTimeoutOptions(s);
        if (userMss > 0) {
            s.setUserMss(userMss);
        }
        if (rcvbufRequest >= 0) {
            s.setReceiveBufferSize(rcvbufRequest);
        }
        if (sndbufRequest >= 0) {
            s.setSendBufferSize(sndbufRequest);
        }
    }

    private void noteError(TcpError e) {
        int errno = errnoOf(e);
        if (errno != 0) {
            skErr = errno;
        }
    }

    /**
     * The errno a connection's end leaves in sk_err, by the error's name (Linux's): the application's own abort
     * (close with unread data, SO_LINGER 0) and an orderly end leave none.
     */
    static int errnoOf(TcpError e) {
        return switch (e.name()) {
            case "NONE", "ECONNABORTED" -> 0;
            case "ECONNREFUSED" -> LinuxAbi.ECONNREFUSED;
            case "ECONNRESET" -> LinuxAbi.ECONNRESET;
            case "EPIPE" -> LinuxAbi.EPIPE;
            case "ETIMEDOUT" -> LinuxAbi.ETIMEDOUT;
            case "ENETUNREACH" -> LinuxAbi.ENETUNREACH;
            case "EHOSTUNREACH" -> 113;
            case "ENOPROTOOPT" -> LinuxAbi.ENOPROTOOPT;
            case "EMSGSIZE" -> 90;
            case "EOPNOTSUPP" -> LinuxAbi.EOPNOTSUPP;
            case "EHOSTDOWN" -> 112;
            case "ENONET" -> 64;
            case "EPROTO" -> 71;
            default -> throw new IllegalStateException("no errno known for TCP error " + e);
        };
    }

    /** sock_error: the pending error, cleared as it is reported; 0 when none. */
    int takeError() {
        int e = skErr;
        skErr = 0;
        if (e == 0 && sock != null && sock.state() != TcpState.CLOSED) {
            // SO_ERROR falls back to the soft error (sk_err_soft) an ICMP error left on a live connection.
            e = sock.takeSoError().errno();
        }
        return e;
    }

    // ---- TcpSock.Callbacks: usnet's TCP tells the socket layer ----

    @Override
    public void connected(TcpSock s) {
        wakeups++;
    }

    @Override
    public void readable(TcpSock s) {
        wakeups++;
    }

    @Override
    public void writable(TcpSock s) {
        wakeups++;
    }

    @Override
    public void closed(TcpSock s, TcpError error) {
        wakeups++;
        noteError(error);
    }

    @Override
    public long wakeups() {
        return wakeups;
    }

    // ---- state as Linux's socket layer sees it ----

    /**
     * The state Linux would show for this socket (tcpi_state, sk_state): a connection that reached TIME-WAIT has
     * left its socket in CLOSE (the time-wait mini socket lives on without it).
     */
    TcpState linuxState() {
        if (listener != null) {
            return TcpState.LISTEN;
        }
        if (sock == null) {
            return TcpState.CLOSED;
        }
        TcpState st = sock.state();
        return st == TcpState.TIME_WAIT ? TcpState.CLOSED : st;
    }

    /** The peer's FIN arrived, or the connection ended (tcp_done sets both shutdown bits). */
    boolean rcvShutdown() {
        if (userShutRd) {
            return true;
        }
        if (sock == null) {
            return false;
        }
        return switch (sock.state()) {
            case CLOSE_WAIT, LAST_ACK, CLOSING, TIME_WAIT, CLOSED -> true;
            default -> false;
        };
    }

    boolean sendShutdown() {
        return userShutWr || sock != null && (sock.state() == TcpState.CLOSED || sock.state() == TcpState.TIME_WAIT);
    }

    /** sk_stream_is_writeable: the free send buffer is at least half of what is queued. */
    boolean streamWritable() {
        int free = sock.writableBytes();
        int queued = Math.max(0, sock.sendBufferBytes() - free);
        return free > 0 && free >= queued / 2;
    }

    /** tcp_poll (inet_csk_listen_poll for a listener). */
    @Override
    public int readyEvents() {
        if (listener != null) {
            return listener.acceptQueueLength() > 0 ? POLLIN | POLLRDNORM : 0;
        }
        TcpState st = linuxState();
        boolean rcvShut = rcvShutdown();
        boolean sndShut = sendShutdown();
        int mask = 0;
        if (rcvShut && sndShut || st == TcpState.CLOSED) {
            mask |= POLLHUP;
        }
        if (rcvShut) {
            mask |= POLLIN | POLLRDNORM | POLLRDHUP;
        }
        if (st != TcpState.SYN_SENT && st != TcpState.SYN_RECV) {
            if (sock != null && sock.readableBytes() > 0) {
                mask |= POLLIN | POLLRDNORM;
            }
            if (sndShut || sock == null || streamWritable()) {
                // A socket that never connected is writable as far as poll goes (its write fails with EPIPE).
                mask |= POLLOUT | POLLWRNORM;
            }
        }
        if (skErr != 0) {
            mask |= POLLERR;
        }
        return mask;
    }
}
