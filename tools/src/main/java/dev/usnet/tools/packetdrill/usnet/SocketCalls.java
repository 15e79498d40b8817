package dev.usnet.tools.packetdrill.usnet;

import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.*;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tools.packetdrill.IpVersion;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.TargetException;
import dev.usnet.tools.packetdrill.Value;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Map;

/**
 * The system calls of a packetdrill script against usnet's TCP, with Linux's semantics at the socket layer: which
 * call blocks, which fails with which errno, in which order the checks come (inet_stream_connect, tcp_sendmsg,
 * tcp_recvmsg, tcp_poll). Each call becomes an {@link BlockedCall.Attempt}: tried at once, and again after each
 * instant of virtual time while it would block.
 *
 * <p>Addresses a script leaves as {@code ...} are packetdrill's: bind() takes the local address and port 8080,
 * connect() the remote address and port 8080. Data buffers are never looked at: a write sends that many zero bytes,
 * a read discards what it takes.
 */
final class SocketCalls {
    /** The target's clock as the calls need it. */
    interface Clock {
        long nowNanos();

        /** Makes sure virtual time stops at {@code nanos} (a poll or epoll_wait timeout). */
        void wakeAt(long nanos);
    }

    // send/recv flags
    private static final int MSG_OOB = 0x1;
    private static final int MSG_PEEK = 0x2;
    private static final int MSG_TRUNC = 0x20;
    private static final int MSG_DONTWAIT = 0x40;
    private static final int MSG_WAITALL = 0x100;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int MSG_MORE = 0x8000;
    private static final int SEND_FLAGS = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE;
    private static final int RECV_FLAGS = MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT | MSG_WAITALL;

    private static final int CHUNK = 1 << 16;

    private final Tcp tcp;
    private final FdTable fds;
    private final SocketOptions options;
    private final int localIp;
    private final int remoteIp;
    /** What the script runs over; over {@code ipv6} the addresses are {@link #local6} and {@link #remote6}. */
    private final IpVersion version;
    private final Ipv6Addr local6;
    private final Ipv6Addr remote6;
    /** Zeros: what every write sends (scripts write {@code ...}). */
    private final ByteBuf zeros = Unpooled.wrappedBuffer(new byte[CHUNK]);
    private final PollCalls polls;

    SocketCalls(Tcp tcp, FdTable fds, SocketOptions options, Clock clock, int localIp, int remoteIp) {
        this(tcp, fds, options, clock, localIp, remoteIp, IpVersion.IPV4, null, null);
    }

    /**
     * Over {@code ipv4-mapped-ipv6} the sockets are AF_INET6 and everything else is IPv4's: an AF_INET6 socket
     * bound or connected to a v4-mapped address is an IPv4 connection in Linux too (ipv4_specific). Over
     * {@code ipv6} {@code local6} and {@code remote6} stand for {@code ...} in bind and connect.
     */
    SocketCalls(Tcp tcp, FdTable fds, SocketOptions options, Clock clock, int localIp, int remoteIp,
                IpVersion version, Ipv6Addr local6, Ipv6Addr remote6) {
        this.tcp = tcp;
        this.fds = fds;
        this.options = options;
        this.localIp = localIp;
        this.remoteIp = remoteIp;
        this.version = version;
        this.local6 = local6;
        this.remote6 = remote6;
        this.polls = new PollCalls(fds, clock);
    }

    void close() {
        zeros.release();
    }

    BlockedCall.Attempt start(Syscall c) {
        return switch (c.name()) {
            case "socket" -> now(socket(c));
            case "bind" -> now(onSocket(c, s -> bind(c, s)));
            case "listen" -> now(onSocket(c, s -> listen(c, s)));
            case "accept", "accept4" -> socketAttempt(c, s -> accept(c, s));
            case "connect" -> socketAttempt(c, s -> connect(c, s));
            case "write", "send", "sendto" -> socketAttempt(c, s -> write(c, s, c.intArg(2),
                    c.name().equals("write") ? 0 : (int) c.intArg(3)));
            case "writev" -> socketAttempt(c, s -> write(c, s, iovLength(c, c.arg(1)), 0));
            case "sendmsg" -> socketAttempt(c, s -> write(c, s, msgLength(c), (int) c.intArg(2)));
            case "read", "recv", "recvfrom" -> socketAttempt(c, s -> read(c, s, c.intArg(2),
                    c.name().equals("read") ? 0 : (int) c.intArg(3)));
            case "readv" -> socketAttempt(c, s -> read(c, s, iovLength(c, c.arg(1)), 0));
            case "recvmsg" -> socketAttempt(c, s -> read(c, s, msgLength(c), (int) c.intArg(2)));
            case "close" -> now(close(c));
            case "shutdown" -> now(onSocket(c, s -> shutdown(c, s)));
            case "fcntl" -> now(fcntl(c));
            case "ioctl" -> now(onSocket(c, s -> ioctl(c, s)));
            case "setsockopt" -> now(onSocket(c, s -> options.set(s, c)));
            case "getsockopt" -> now(onSocket(c, s -> options.get(s, c)));
            case "poll" -> polls.poll(c);
            case "epoll_create", "epoll_create1" -> now(polls.epollCreate(c));
            case "epoll_ctl" -> now(polls.epollCtl(c));
            case "epoll_wait" -> polls.epollWait(c);
            default -> throw new TargetException("line " + c.line() + ": the usnet target does not implement the system "
                    + "call " + c.name());
        };
    }

    static BlockedCall.Attempt now(SyscallResult r) {
        return () -> r;
    }

    private interface OnSocket<T> {
        T apply(SocketFile s);
    }

    /** The socket behind argument 0, or EBADF / ENOTSOCK. */
    private SyscallResult onSocket(Syscall c, OnSocket<SyscallResult> f) {
        OpenFile file = fds.get(c.intArg(0));
        if (file == null) {
            return SyscallResult.error(EBADF);
        }
        if (!(file instanceof SocketFile s)) {
            return SyscallResult.error(ENOTSOCK);
        }
        return f.apply(s);
    }

    /** A call on a socket that may block: {@code f} makes the attempt once the descriptor checked out. */
    private BlockedCall.Attempt socketAttempt(Syscall c, OnSocket<BlockedCall.Attempt> f) {
        OpenFile file = fds.get(c.intArg(0));
        if (file == null) {
            return now(SyscallResult.error(EBADF));
        }
        if (!(file instanceof SocketFile s)) {
            return now(SyscallResult.error(ENOTSOCK));
        }
        return f.apply(s);
    }

    // ---- socket, bind, listen ----

    private SyscallResult socket(Syscall c) {
        // packetdrill fills a domain or protocol written ... from the script's IP version, and TCP.
        long family = version.socketFamily();
        long domain = c.arg(0) instanceof Value.Ellipsis ? family : c.intArg(0);
        long type = c.intArg(1);
        long protocol = c.arg(2) instanceof Value.Ellipsis ? IPPROTO_TCP : c.intArg(2);
        if (domain != family) {
            throw new TargetException("line " + c.line() + ": socket domain " + domain + ": the script runs over "
                    + version + ", whose sockets are " + (family == AF_INET ? "AF_INET" : "AF_INET6")
                    + " (write ... to get the version's family)");
        }
        if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_STREAM) {
            throw new TargetException("line " + c.line() + ": socket type " + type + " is not supported by the usnet "
                    + "target (only SOCK_STREAM)");
        }
        if (protocol != IPPROTO_IP && protocol != IPPROTO_TCP) {
            throw new TargetException("line " + c.line() + ": socket protocol " + protocol + " is not supported by the "
                    + "usnet target (only TCP)");
        }
        return SyscallResult.ok(fds.allocate(new SocketFile((type & SOCK_NONBLOCK) != 0)));
    }

    /** An address argument: {@code ...} is the default, else {sin_addr=..., sin_port=...}. */
    private static int[] address(Syscall c, Value v, int defaultIp, int defaultPort) {
        if (v instanceof Value.Ellipsis) {
            return new int[] {defaultIp, defaultPort};
        }
        if (v instanceof Value.Struct st) {
            int ip = defaultIp;
            int port = defaultPort;
            Value a = st.fields().get("sin_addr");
            if (a instanceof Value.Int i) {
                ip = (int) i.value();
            } else if (a instanceof Value.Str s) {
                try {
                    ip = Ipv4Addr.parse(s.value());
                } catch (IllegalArgumentException e) {
                    throw new TargetException("line " + c.line() + ": " + c.name() + ": bad sin_addr " + s, e);
                }
            }
            Value p = st.fields().get("sin_port");
            if (p instanceof Value.Int i) {
                port = (int) i.value();
            }
            Value fam = st.fields().get("sin_family");
            if (fam instanceof Value.Int f && f.value() != AF_INET) {
                throw new TargetException("line " + c.line() + ": " + c.name() + ": address family " + f.value()
                        + " is not supported by the usnet target (only AF_INET)");
            }
            return new int[] {ip, port};
        }
        throw new TargetException("line " + c.line() + ": " + c.name() + ": the address must be ... or "
                + "{sin_family=AF_INET, sin_port=..., sin_addr=...}, got " + v);
    }

    private boolean portInUse(int port, SocketFile asking) {
        for (TcpListener l : tcp.listeners()) {
            if (l.port() == port) {
                return true;
            }
        }
        for (var e : fds.entries()) {
            if (e.getValue() instanceof SocketFile s && s != asking && s.bound && s.boundPort == port
                    && (!asking.reuseAddr || s.listener != null)) {
                return true;
            }
        }
        if (!asking.reuseAddr) {
            // A connection on the port, in TIME-WAIT too, keeps it from being bound without SO_REUSEADDR.
            for (TcpSock s : tcp.sockets()) {
                if (s.localPort() == port && s.state() != TcpState.CLOSED) {
                    return true;
                }
            }
        }
        return false;
    }

    private SyscallResult bind(Syscall c, SocketFile s) {
        if (version.ipv6Wire()) {
            return bind6(c, s);
        }
        int[] a = address(c, c.arg(1), localIp, SCRIPT_PORT);
        if (s.bound || s.sock != null) {
            return SyscallResult.error(EINVAL);
        }
        if (a[0] != 0 && !tcp.stack().devinet().isLocal(a[0])) {
            return SyscallResult.error(EADDRNOTAVAIL);
        }
        if (a[1] != 0 && portInUse(a[1], s)) {
            return SyscallResult.error(EADDRINUSE);
        }
        s.bound = true;
        s.boundAddr = a[0];
        s.boundPort = a[1] != 0 ? a[1] : ephemeralPort(s);
        return SyscallResult.ok(0);
    }

    /** bind over IPv6: {@code ...} is local_ip6:8080 (a spelled-out sockaddr_in6 is not supported). */
    private SyscallResult bind6(Syscall c, SocketFile s) {
        require6Ellipsis(c, c.arg(1), "local_ip");
        if (s.bound || s.sock != null) {
            return SyscallResult.error(EINVAL);
        }
        if (!tcp.stack().ipv6().addrconf().isLocal(local6.hi(), local6.lo())) {
            return SyscallResult.error(EADDRNOTAVAIL);
        }
        if (portInUse(SCRIPT_PORT, s)) {
            return SyscallResult.error(EADDRINUSE);
        }
        s.bound = true;
        s.boundAddr6 = local6;
        s.boundPort = SCRIPT_PORT;
        return SyscallResult.ok(0);
    }

    private static void require6Ellipsis(Syscall c, Value v, String which) {
        if (!(v instanceof Value.Ellipsis)) {
            throw new TargetException("line " + c.line() + ": " + c.name() + ": over ipv6 the usnet target takes the"
                    + " address as ... (" + which + ":" + SCRIPT_PORT + "), got " + v);
        }
    }

    private int ephemeralPort(SocketFile s) {
        for (int p = 32768; p <= 60999; p++) {
            if (!portInUse(p, s)) {
                return p;
            }
        }
        throw new TargetException("no free ephemeral port to bind");
    }

    private SyscallResult listen(Syscall c, SocketFile s) {
        int backlog = (int) c.intArg(1);
        if (s.listener != null) {
            if (backlog != s.listenBacklog) {
                throw new TargetException("line " + c.line() + ": listen() again with backlog " + backlog + " (was "
                        + s.listenBacklog + "): changing a listener's backlog is not supported by the usnet target");
            }
            return SyscallResult.ok(0);
        }
        if (s.sock != null) {
            return SyscallResult.error(EINVAL);
        }
        if (s.userMss > 0) {
            throw new TargetException("line " + c.line() + ": listen() on a socket with TCP_MAXSEG is not supported by "
                    + "the usnet target: its SYN-ACKs would not take the option");
        }
        if (!s.bound) {
            s.bound = true;
            s.boundPort = ephemeralPort(s);
        }
        try {
            int queue = backlog < 0 ? Integer.MAX_VALUE : backlog;
            s.listener = version.ipv6Wire()
                    ? tcp.listen(s.boundAddr6 == null ? Ipv6Addr.ANY : s.boundAddr6, s.boundPort, queue, null)
                    : tcp.listen(s.boundAddr, s.boundPort, queue, null);
            s.listenBacklog = backlog;
        } catch (IllegalStateException e) {
            return SyscallResult.error(EADDRINUSE);
        }
        return SyscallResult.ok(0);
    }

    // ---- accept, connect ----

    private BlockedCall.Attempt accept(Syscall c, SocketFile s) {
        int flags = c.name().equals("accept4") ? (int) c.intArg(3) : 0;
        boolean nonBlocking = s.nonBlocking;
        return () -> {
            if (s.listener == null) {
                return SyscallResult.error(EINVAL);
            }
            TcpSock child = s.listener.accept();
            if (child == null) {
                return nonBlocking ? SyscallResult.error(EAGAIN) : null;
            }
            SocketFile f = new SocketFile((flags & SOCK_NONBLOCK) != 0);
            f.bound = true;
            f.boundAddr = child.localAddr();
            f.boundAddr6 = child.ipv6() ? child.localAddr6() : null;
            f.boundPort = child.localPort();
            f.connectState = SocketFile.ConnectState.CONNECTED;
            // What an accepted socket inherits from its listener (sk_clone_lock copies the socket's settings).
            f.reuseAddr = s.reuseAddr;
            f.noDelay = s.noDelay;
            f.keepAlive = s.keepAlive;
            f.keepIdleS = s.keepIdleS;
            f.keepIntvlS = s.keepIntvlS;
            f.keepCnt = s.keepCnt;
            f.congestion = s.congestion;
            f.rcvbufRequest = s.rcvbufRequest;
            f.sndbufRequest = s.sndbufRequest;
            f.lingerOn = s.lingerOn;
            f.lingerSeconds = s.lingerSeconds;
            f.synCnt = s.synCnt;
            f.userTimeoutMs = s.userTimeoutMs;
            f.attach(child);
            f.applyOptions(child);
            return SyscallResult.ok(fds.allocate(f));
        };
    }

    private BlockedCall.Attempt connect(Syscall c, SocketFile s) {
        if (version.ipv6Wire()) {
            require6Ellipsis(c, c.arg(1), "remote_ip");
        }
        int[] a = version.ipv6Wire() ? new int[] {0, SCRIPT_PORT} : address(c, c.arg(1), remoteIp, SCRIPT_PORT);
        boolean nonBlocking = s.nonBlocking;
        switch (s.connectState) {
            case CONNECTED -> {
                return now(SyscallResult.error(EISCONN));
            }
            case CONNECTING -> {
                TcpState st = s.sock.state();
                if ((st == TcpState.SYN_SENT || st == TcpState.SYN_RECV) && nonBlocking) {
                    return now(SyscallResult.error(EALREADY));
                }
                return () -> connectOutcome(s);
            }
            case UNCONNECTED -> { }
        }
        if (s.listener != null) {
            return now(SyscallResult.error(EISCONN));
        }
        if (s.sock != null && s.sock.state() != TcpState.CLOSED) {
            return now(SyscallResult.error(EISCONN));
        }
        TcpSock sock;
        try {
            sock = version.ipv6Wire()
                    ? tcp.connect(s.bound && s.boundAddr6 != null ? s.boundAddr6 : Ipv6Addr.ANY,
                            s.bound ? s.boundPort : 0, remote6, a[1], s, s::applyOptions)
                    : tcp.connect(s.bound ? s.boundAddr : 0, s.bound ? s.boundPort : 0, a[0], a[1], s,
                            s::applyOptions);
        } catch (IllegalStateException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("ENETUNREACH")) {
                return now(SyscallResult.error(ENETUNREACH));
            }
            if (m.contains("EADDRNOTAVAIL")) {
                return now(SyscallResult.error(EADDRNOTAVAIL));
            }
            throw new TargetException("line " + c.line() + ": connect: " + m, e);
        } catch (IllegalArgumentException e) {
            return now(SyscallResult.error(EINVAL));
        }
        s.skErr = 0;
        s.attach(sock);
        s.connectState = SocketFile.ConnectState.CONNECTING;
        if (nonBlocking) {
            return now(SyscallResult.error(EINPROGRESS));
        }
        return () -> connectOutcome(s);
    }

    /** inet_wait_for_connect and after: null while the handshake runs. */
    private static SyscallResult connectOutcome(SocketFile s) {
        TcpState st = s.sock.state();
        if (st == TcpState.SYN_SENT || st == TcpState.SYN_RECV) {
            return null;
        }
        if (st == TcpState.CLOSED) {
            s.connectState = SocketFile.ConnectState.UNCONNECTED;
            int e = s.takeError();
            return SyscallResult.error(e != 0 ? e : ECONNABORTED);
        }
        s.connectState = SocketFile.ConnectState.CONNECTED;
        return SyscallResult.ok(0);
    }

    // ---- write, read ----

    private static long iovLength(Syscall c, Value iov) {
        if (!(iov instanceof Value.Array a)) {
            throw new TargetException("line " + c.line() + ": " + c.name() + " needs an iovec array "
                    + "[{iov_base=..., iov_len=N}], got " + iov);
        }
        long n = 0;
        for (Value e : a.elements()) {
            if (e instanceof Value.Struct st && st.fields().get("iov_len") instanceof Value.Int len) {
                n += len.value();
            } else {
                throw new TargetException("line " + c.line() + ": " + c.name() + ": an iovec needs an integer iov_len, "
                        + "got " + e);
            }
        }
        return n;
    }

    private static long msgLength(Syscall c) {
        if (c.arg(1) instanceof Value.Struct st && st.fields().containsKey("msg_iov")) {
            return iovLength(c, st.fields().get("msg_iov"));
        }
        throw new TargetException("line " + c.line() + ": " + c.name() + " needs a msghdr {msg_iov=[...], ...}, got "
                + c.arg(1));
    }

    private static void checkFlags(Syscall c, int flags, int allowed) {
        int unknown = flags & ~allowed;
        if (unknown != 0) {
            throw new TargetException("line " + c.line() + ": " + c.name() + " flags 0x" + Integer.toHexString(unknown)
                    + " are not supported by the usnet target" + ((unknown & MSG_OOB) != 0 ? " (MSG_OOB: usnet has no "
                    + "urgent data)" : ""));
        }
    }

    /** tcp_sendmsg: waits for the connection, then copies everything (blocking) or what fits (non-blocking). */
    private BlockedCall.Attempt write(Syscall c, SocketFile s, long len, int flags) {
        checkFlags(c, flags, SEND_FLAGS);
        if (len < 0) {
            return now(SyscallResult.error(EINVAL));
        }
        boolean nonBlocking = s.nonBlocking || (flags & MSG_DONTWAIT) != 0;
        long[] copied = {0};
        return () -> {
            if (s.listener != null || s.sock == null) {
                int e = s.takeError();
                return SyscallResult.error(e != 0 ? e : EPIPE);
            }
            TcpState st = s.sock.state();
            if (st == TcpState.SYN_SENT || st == TcpState.SYN_RECV) {
                return nonBlocking ? SyscallResult.error(EAGAIN) : null;
            }
            if (s.skErr != 0) {
                return copied[0] > 0 ? SyscallResult.ok(copied[0]) : SyscallResult.error(s.takeError());
            }
            if (s.sendShutdown() || st != TcpState.ESTABLISHED && st != TcpState.CLOSE_WAIT) {
                return copied[0] > 0 ? SyscallResult.ok(copied[0]) : SyscallResult.error(EPIPE);
            }
            while (copied[0] < len) {
                int chunk = (int) Math.min(CHUNK, len - copied[0]);
                // MSG_MORE holds the tail of this call; a chunk with more of the call behind it holds its own.
                boolean more = (flags & MSG_MORE) != 0 || copied[0] + chunk < len;
                int n = s.sock.write(zeros, 0, chunk, more);
                if (n <= 0) {
                    break;
                }
                copied[0] += n;
            }
            if (copied[0] == len) {
                return SyscallResult.ok(len);
            }
            if (nonBlocking) {
                return copied[0] > 0 ? SyscallResult.ok(copied[0]) : SyscallResult.error(EAGAIN);
            }
            return null;
        };
    }

    /** tcp_recvmsg: data first, then the pending error, then end of stream, then EAGAIN or waiting. */
    private BlockedCall.Attempt read(Syscall c, SocketFile s, long len, int flags) {
        checkFlags(c, flags, RECV_FLAGS);
        if (len < 0) {
            return now(SyscallResult.error(EINVAL));
        }
        boolean nonBlocking = s.nonBlocking || (flags & MSG_DONTWAIT) != 0;
        boolean peek = (flags & MSG_PEEK) != 0;
        boolean waitAll = (flags & MSG_WAITALL) != 0 && !peek;
        long[] copied = {0};
        return () -> {
            if (s.listener != null || s.sock == null) {
                return SyscallResult.error(ENOTCONN);
            }
            while (copied[0] < len) {
                int avail = s.sock.readableBytes();
                if (avail <= 0) {
                    break;
                }
                int want = (int) Math.min(Math.min(avail, len - copied[0]), Integer.MAX_VALUE);
                if (peek) {
                    return SyscallResult.ok(want);
                }
                int n = s.sock.skip(want);
                if (n <= 0) {
                    break;
                }
                copied[0] += n;
                if (!waitAll) {
                    return SyscallResult.ok(copied[0]);
                }
            }
            if (copied[0] == len || len == 0) {
                return SyscallResult.ok(copied[0]);
            }
            if (copied[0] > 0 && (s.skErr != 0 || s.rcvShutdown() || nonBlocking)) {
                return SyscallResult.ok(copied[0]);
            }
            if (s.skErr != 0) {
                return SyscallResult.error(s.takeError());
            }
            if (s.rcvShutdown()) {
                return SyscallResult.ok(0);
            }
            return nonBlocking ? SyscallResult.error(EAGAIN) : null;
        };
    }

    // ---- close, shutdown, fcntl ----

    private SyscallResult close(Syscall c) {
        long fd = c.intArg(0);
        OpenFile f = fds.get(fd);
        if (f == null) {
            return SyscallResult.error(EBADF);
        }
        fds.remove((int) fd);
        for (var e : fds.entries()) {
            if (e.getValue() instanceof EpollFile ep) {
                ep.forget((int) fd, f);
            }
        }
        if (f instanceof SocketFile s) {
            if (s.listener != null) {
                s.listener.close();
            } else if (s.sock != null) {
                if (s.lingerOn && s.lingerSeconds == 0) {
                    s.sock.abort();
                } else {
                    s.sock.close();
                }
            }
        }
        return SyscallResult.ok(0);
    }

    private SyscallResult shutdown(Syscall c, SocketFile s) {
        long how = c.intArg(1);
        if (how < SHUT_RD || how > SHUT_RDWR) {
            return SyscallResult.error(EINVAL);
        }
        boolean rd = how != SHUT_WR;
        boolean wr = how != SHUT_RD;
        if (s.listener != null) {
            if (rd) {
                // A listener shut for reading stops listening (tcp_disconnect); its queued connections are reset.
                s.listener.close();
                s.listener = null;
                return SyscallResult.ok(0);
            }
            return SyscallResult.error(ENOTCONN);
        }
        TcpState st = s.linuxState();
        if (s.sock == null || st == TcpState.CLOSED) {
            s.userShutRd |= rd;
            s.userShutWr |= wr;
            return SyscallResult.error(ENOTCONN);
        }
        if (st == TcpState.SYN_SENT) {
            s.sock.abort();
            s.connectState = SocketFile.ConnectState.UNCONNECTED;
            return SyscallResult.ok(0);
        }
        s.userShutRd |= rd;
        if (wr && !s.userShutWr) {
            s.userShutWr = true;
            s.sock.shutdownOutput();
        }
        return SyscallResult.ok(0);
    }

    private SyscallResult fcntl(Syscall c) {
        OpenFile f = fds.get(c.intArg(0));
        if (f == null) {
            return SyscallResult.error(EBADF);
        }
        long cmd = c.intArg(1);
        if (!(f instanceof SocketFile s)) {
            throw new TargetException("line " + c.line() + ": fcntl on an epoll descriptor is not supported by the usnet target");
        }
        if (cmd == F_GETFL) {
            return SyscallResult.ok(O_RDWR | (s.nonBlocking ? O_NONBLOCK : 0));
        }
        if (cmd == F_SETFL) {
            s.nonBlocking = (c.intArg(2) & O_NONBLOCK) != 0;
            return SyscallResult.ok(0);
        }
        throw new TargetException("line " + c.line() + ": fcntl command " + cmd + " is not supported by the usnet target "
                + "(only F_GETFL and F_SETFL)");
    }

    private static final long SIOCINQ = 0x541B;
    private static final long SIOCOUTQ = 0x5411;
    private static final long SIOCOUTQNSD = 0x894B;

    /** tcp_ioctl: bytes waiting to be read (SIOCINQ, FIONREAD), bytes written and not yet sent (SIOCOUTQNSD). */
    private SyscallResult ioctl(Syscall c, SocketFile s) {
        long req = c.intArg(1);
        if (req != SIOCINQ && req != SIOCOUTQNSD) {
            throw new TargetException("line " + c.line() + ": ioctl request 0x" + Long.toHexString(req) + " is not "
                    + "supported by the usnet target (SIOCINQ/FIONREAD and SIOCOUTQNSD are" + (req == SIOCOUTQ
                    ? "; usnet does not expose the bytes in flight SIOCOUTQ adds" : "") + ")");
        }
        if (s.listener != null) {
            return SyscallResult.error(EINVAL);
        }
        long n = 0;
        TcpState st = s.linuxState();
        if (s.sock != null && st != TcpState.SYN_SENT && st != TcpState.SYN_RECV) {
            n = req == SIOCINQ ? s.sock.readableBytes() : s.sock.info().sendQueued();
        }
        return new SyscallResult(0, 0, Map.of(2, new Value.Array(List.of(Value.of(n)))));
    }
}
