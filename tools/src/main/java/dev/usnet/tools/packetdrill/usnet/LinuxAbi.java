package dev.usnet.tools.packetdrill.usnet;

/**
 * The numbers of Linux's x86_64 socket ABI the usnet target speaks: errno values, address and protocol families,
 * socket option levels and names, poll/epoll event bits, fcntl commands. The script runner has already turned
 * symbols into these numbers ({@link dev.usnet.tools.packetdrill.Value}); the target compares against them.
 */
final class LinuxAbi {
    private LinuxAbi() {}

    // errno (asm-generic/errno-base.h, errno.h)
    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int EBADF = 9;
    static final int EAGAIN = 11;
    static final int EFAULT = 14;
    static final int EEXIST = 17;
    static final int EINVAL = 22;
    static final int EPIPE = 32;
    static final int ENOTSOCK = 88;
    static final int EDESTADDRREQ = 89;
    static final int EPROTOTYPE = 91;
    static final int ENOPROTOOPT = 92;
    static final int EPROTONOSUPPORT = 93;
    static final int EOPNOTSUPP = 95;
    static final int EAFNOSUPPORT = 97;
    static final int EADDRINUSE = 98;
    static final int EADDRNOTAVAIL = 99;
    static final int ENETUNREACH = 101;
    static final int ECONNABORTED = 103;
    static final int ECONNRESET = 104;
    static final int EISCONN = 106;
    static final int ENOTCONN = 107;
    static final int ETIMEDOUT = 110;
    static final int ECONNREFUSED = 111;
    static final int EALREADY = 114;
    static final int EINPROGRESS = 115;

    // socket(2)
    static final int AF_INET = 2;
    static final int SOCK_STREAM = 1;
    static final int SOCK_NONBLOCK = 0x800;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int IPPROTO_IP = 0;
    static final int IPPROTO_TCP = 6;

    // fcntl(2)
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_RDWR = 2;
    static final int O_NONBLOCK = 0x800;

    // shutdown(2)
    static final int SHUT_RD = 0;
    static final int SHUT_WR = 1;
    static final int SHUT_RDWR = 2;

    // setsockopt levels and names
    static final int SOL_SOCKET = 1;
    static final int SO_REUSEADDR = 2;
    static final int SO_TYPE = 3;
    static final int SO_ERROR = 4;
    static final int SO_SNDBUF = 7;
    static final int SO_RCVBUF = 8;
    static final int SO_KEEPALIVE = 9;
    static final int SO_LINGER = 13;
    static final int SO_REUSEPORT = 15;
    static final int SO_RCVLOWAT = 18;
    static final int SO_SNDBUFFORCE = 32;
    static final int SO_RCVBUFFORCE = 33;

    static final int TCP_NODELAY = 1;
    static final int TCP_MAXSEG = 2;
    static final int TCP_CORK = 3;
    static final int TCP_KEEPIDLE = 4;
    static final int TCP_KEEPINTVL = 5;
    static final int TCP_KEEPCNT = 6;
    static final int TCP_SYNCNT = 7;
    static final int TCP_LINGER2 = 8;
    static final int TCP_DEFER_ACCEPT = 9;
    static final int TCP_WINDOW_CLAMP = 10;
    static final int TCP_INFO = 11;
    static final int TCP_QUICKACK = 12;
    static final int TCP_CONGESTION = 13;
    static final int TCP_USER_TIMEOUT = 18;
    static final int TCP_FASTOPEN = 23;
    static final int TCP_NOTSENT_LOWAT = 25;
    static final int TCP_FASTOPEN_CONNECT = 30;

    /** sizeof(struct tcp_info) in Linux 6.x (up to tcpi_total_rto_time). */
    static final int TCP_INFO_SIZE = 248;

    // poll(2) and epoll(7) event bits (the same numbers for both)
    static final int POLLIN = 0x1;
    static final int POLLPRI = 0x2;
    static final int POLLOUT = 0x4;
    static final int POLLERR = 0x8;
    static final int POLLHUP = 0x10;
    static final int POLLNVAL = 0x20;
    static final int POLLRDNORM = 0x40;
    static final int POLLWRNORM = 0x100;
    static final int POLLRDHUP = 0x2000;
    static final int EPOLLONESHOT = 1 << 30;
    static final int EPOLLET = 1 << 31;

    static final int EPOLL_CTL_ADD = 1;
    static final int EPOLL_CTL_DEL = 2;
    static final int EPOLL_CTL_MOD = 3;

    // Linux's TCP states (include/net/tcp_states.h), as tcpi_state reports them
    static final int TCP_ESTABLISHED = 1;
    static final int TCP_SYN_SENT = 2;
    static final int TCP_SYN_RECV = 3;
    static final int TCP_FIN_WAIT1 = 4;
    static final int TCP_FIN_WAIT2 = 5;
    static final int TCP_TIME_WAIT = 6;
    static final int TCP_CLOSE = 7;
    static final int TCP_CLOSE_WAIT = 8;
    static final int TCP_LAST_ACK = 9;
    static final int TCP_LISTEN = 10;
    static final int TCP_CLOSING = 11;

    /** The port packetdrill binds and connects to when a script leaves the address as {@code ...}. */
    static final int SCRIPT_PORT = 8080;
}
