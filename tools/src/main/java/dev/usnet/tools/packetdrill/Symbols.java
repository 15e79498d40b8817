package dev.usnet.tools.packetdrill;

import java.util.HashMap;
import java.util.Map;

/**
 * The names scripts use for numbers, with Linux's values (x86-64 uapi): address families, socket types, levels,
 * socket and TCP options, fcntl commands and file flags, poll and epoll events, message flags, shutdown modes,
 * errno names, and the TCP state and congestion-avoidance state names code blocks compare {@code tcpi_*} with.
 */
final class Symbols {
    private static final Map<String, Long> VALUES = new HashMap<>();
    private static final Map<Long, String> ERRNO_NAMES = new HashMap<>();
    private static final Map<String, Integer> ERRNOS = new HashMap<>();

    private static void put(String name, long v) {
        VALUES.put(name, v);
    }

    private static void errno(String name, long v) {
        VALUES.put(name, v);
        ERRNOS.put(name, (int) v);
        ERRNO_NAMES.putIfAbsent(v, name);
    }

    static {
        put("AF_UNSPEC", 0);
        put("AF_INET", 2);
        put("AF_INET6", 10);
        put("PF_INET", 2);
        put("PF_INET6", 10);
        put("INADDR_ANY", 0);
        put("NULL", 0);
        put("SOCK_STREAM", 1);
        put("SOCK_DGRAM", 2);
        put("SOCK_RAW", 3);
        put("SOCK_NONBLOCK", 04000);
        put("SOCK_CLOEXEC", 02000000);
        put("IPPROTO_IP", 0);
        put("IPPROTO_ICMP", 1);
        put("IPPROTO_TCP", 6);
        put("IPPROTO_UDP", 17);
        put("IPPROTO_IPV6", 41);
        put("SOL_IP", 0);
        put("SOL_SOCKET", 1);
        put("SOL_TCP", 6);
        put("SOL_UDP", 17);
        put("SOL_IPV6", 41);

        String[] so = {null, "SO_DEBUG", "SO_REUSEADDR", "SO_TYPE", "SO_ERROR", "SO_DONTROUTE", "SO_BROADCAST",
            "SO_SNDBUF", "SO_RCVBUF", "SO_KEEPALIVE", "SO_OOBINLINE", "SO_NO_CHECK", "SO_PRIORITY", "SO_LINGER",
            "SO_BSDCOMPAT", "SO_REUSEPORT", "SO_PASSCRED", "SO_PEERCRED", "SO_RCVLOWAT", "SO_SNDLOWAT",
            "SO_RCVTIMEO", "SO_SNDTIMEO"};
        for (int v = 1; v < so.length; v++) {
            put(so[v], v);
        }
        put("SO_BINDTODEVICE", 25);
        put("SO_TIMESTAMP", 29);
        put("SO_ACCEPTCONN", 30);
        put("SO_SNDBUFFORCE", 32);
        put("SO_RCVBUFFORCE", 33);
        put("SO_MARK", 36);
        put("SO_TIMESTAMPING", 37);
        put("SO_PROTOCOL", 38);
        put("SO_DOMAIN", 39);
        put("SO_RXQ_OVFL", 40);
        put("SO_BUSY_POLL", 46);
        put("SO_MAX_PACING_RATE", 47);
        put("SO_INCOMING_CPU", 49);
        put("SO_ZEROCOPY", 60);

        String[] tcp = {null, "TCP_NODELAY", "TCP_MAXSEG", "TCP_CORK", "TCP_KEEPIDLE", "TCP_KEEPINTVL",
            "TCP_KEEPCNT", "TCP_SYNCNT", "TCP_LINGER2", "TCP_DEFER_ACCEPT", "TCP_WINDOW_CLAMP", "TCP_INFO",
            "TCP_QUICKACK", "TCP_CONGESTION", "TCP_MD5SIG", null, "TCP_THIN_LINEAR_TIMEOUTS", "TCP_THIN_DUPACK",
            "TCP_USER_TIMEOUT", "TCP_REPAIR", "TCP_REPAIR_QUEUE", "TCP_QUEUE_SEQ", "TCP_REPAIR_OPTIONS",
            "TCP_FASTOPEN", "TCP_TIMESTAMP", "TCP_NOTSENT_LOWAT", "TCP_CC_INFO", "TCP_SAVE_SYN", "TCP_SAVED_SYN",
            "TCP_REPAIR_WINDOW", "TCP_FASTOPEN_CONNECT", "TCP_ULP", "TCP_MD5SIG_EXT", "TCP_FASTOPEN_KEY",
            "TCP_FASTOPEN_NO_COOKIE", "TCP_ZEROCOPY_RECEIVE", "TCP_INQ", "TCP_TX_DELAY"};
        for (int v = 1; v < tcp.length; v++) {
            if (tcp[v] != null) {
                put(tcp[v], v);
            }
        }
        put("IP_TOS", 1);
        put("IP_TTL", 2);
        put("IP_MTU_DISCOVER", 10);
        put("IP_RECVERR", 11);
        put("IP_MTU", 14);
        put("IP_FREEBIND", 15);
        put("TCP_CM_INQ", 36);
        put("IP_PMTUDISC_DONT", 0);
        put("IP_PMTUDISC_WANT", 1);
        put("IP_PMTUDISC_DO", 2);
        put("IP_PMTUDISC_PROBE", 3);

        put("O_RDONLY", 0);
        put("O_WRONLY", 1);
        put("O_RDWR", 2);
        put("O_NONBLOCK", 04000);
        put("O_NDELAY", 04000);
        put("O_CLOEXEC", 02000000);
        put("F_DUPFD", 0);
        put("F_GETFD", 1);
        put("F_SETFD", 2);
        put("F_GETFL", 3);
        put("F_SETFL", 4);
        put("FD_CLOEXEC", 1);

        put("POLLIN", 0x1);
        put("POLLPRI", 0x2);
        put("POLLOUT", 0x4);
        put("POLLERR", 0x8);
        put("POLLHUP", 0x10);
        put("POLLNVAL", 0x20);
        put("POLLRDNORM", 0x40);
        put("POLLRDBAND", 0x80);
        put("POLLWRNORM", 0x100);
        put("POLLWRBAND", 0x200);
        put("POLLMSG", 0x400);
        put("POLLRDHUP", 0x2000);
        put("EPOLLIN", 0x1);
        put("EPOLLPRI", 0x2);
        put("EPOLLOUT", 0x4);
        put("EPOLLERR", 0x8);
        put("EPOLLHUP", 0x10);
        put("EPOLLRDNORM", 0x40);
        put("EPOLLRDBAND", 0x80);
        put("EPOLLWRNORM", 0x100);
        put("EPOLLWRBAND", 0x200);
        put("EPOLLMSG", 0x400);
        put("EPOLLRDHUP", 0x2000);
        put("EPOLLEXCLUSIVE", 1L << 28);
        put("EPOLLWAKEUP", 1L << 29);
        put("EPOLLONESHOT", 1L << 30);
        put("EPOLLET", 1L << 31);
        put("EPOLL_CTL_ADD", 1);
        put("EPOLL_CTL_DEL", 2);
        put("EPOLL_CTL_MOD", 3);
        put("EPOLL_CLOEXEC", 02000000);

        put("MSG_OOB", 0x1);
        put("MSG_PEEK", 0x2);
        put("MSG_DONTROUTE", 0x4);
        put("MSG_CTRUNC", 0x8);
        put("MSG_PROXY", 0x10);
        put("MSG_TRUNC", 0x20);
        put("MSG_DONTWAIT", 0x40);
        put("MSG_EOR", 0x80);
        put("MSG_WAITALL", 0x100);
        put("MSG_FIN", 0x200);
        put("MSG_SYN", 0x400);
        put("MSG_CONFIRM", 0x800);
        put("MSG_RST", 0x1000);
        put("MSG_ERRQUEUE", 0x2000);
        put("MSG_NOSIGNAL", 0x4000);
        put("MSG_MORE", 0x8000);
        put("MSG_WAITFORONE", 0x10000);
        put("MSG_ZEROCOPY", 0x4000000);
        put("MSG_FASTOPEN", 0x20000000);
        put("MSG_CMSG_CLOEXEC", 0x40000000);
        put("SHUT_RD", 0);
        put("SHUT_WR", 1);
        put("SHUT_RDWR", 2);
        put("SIOCINQ", 0x541B);
        put("FIONREAD", 0x541B);
        put("SIOCOUTQ", 0x5411);
        put("TIOCOUTQ", 0x5411);
        put("SIOCOUTQNSD", 0x894B);

        String[] states = {null, "TCP_ESTABLISHED", "TCP_SYN_SENT", "TCP_SYN_RECV", "TCP_FIN_WAIT1",
            "TCP_FIN_WAIT2", "TCP_TIME_WAIT", "TCP_CLOSE", "TCP_CLOSE_WAIT", "TCP_LAST_ACK", "TCP_LISTEN",
            "TCP_CLOSING", "TCP_NEW_SYN_RECV"};
        for (int v = 1; v < states.length; v++) {
            put(states[v], v);
        }
        put("TCP_CA_Open", 0);
        put("TCP_CA_Disorder", 1);
        put("TCP_CA_CWR", 2);
        put("TCP_CA_Recovery", 3);
        put("TCP_CA_Loss", 4);

        errno("EPERM", 1);
        errno("ENOENT", 2);
        errno("ESRCH", 3);
        errno("EINTR", 4);
        errno("EIO", 5);
        errno("ENXIO", 6);
        errno("E2BIG", 7);
        errno("ENOEXEC", 8);
        errno("EBADF", 9);
        errno("ECHILD", 10);
        errno("EAGAIN", 11);
        errno("EWOULDBLOCK", 11);
        errno("ENOMEM", 12);
        errno("EACCES", 13);
        errno("EFAULT", 14);
        errno("EBUSY", 16);
        errno("EEXIST", 17);
        errno("EXDEV", 18);
        errno("ENODEV", 19);
        errno("ENOTDIR", 20);
        errno("EISDIR", 21);
        errno("EINVAL", 22);
        errno("ENFILE", 23);
        errno("EMFILE", 24);
        errno("ENOTTY", 25);
        errno("EFBIG", 27);
        errno("ENOSPC", 28);
        errno("ESPIPE", 29);
        errno("EROFS", 30);
        errno("EPIPE", 32);
        errno("ERANGE", 34);
        errno("EDEADLK", 35);
        errno("ENAMETOOLONG", 36);
        errno("ENOSYS", 38);
        errno("ENOTEMPTY", 39);
        errno("ELOOP", 40);
        errno("ENOMSG", 42);
        errno("EPROTO", 71);
        errno("EBADMSG", 74);
        errno("EOVERFLOW", 75);
        errno("EILSEQ", 84);
        errno("ENOTSOCK", 88);
        errno("EDESTADDRREQ", 89);
        errno("EMSGSIZE", 90);
        errno("EPROTOTYPE", 91);
        errno("ENOPROTOOPT", 92);
        errno("EPROTONOSUPPORT", 93);
        errno("ESOCKTNOSUPPORT", 94);
        errno("EOPNOTSUPP", 95);
        errno("ENOTSUP", 95);
        errno("EPFNOSUPPORT", 96);
        errno("EAFNOSUPPORT", 97);
        errno("EADDRINUSE", 98);
        errno("EADDRNOTAVAIL", 99);
        errno("ENETDOWN", 100);
        errno("ENETUNREACH", 101);
        errno("ENETRESET", 102);
        errno("ECONNABORTED", 103);
        errno("ECONNRESET", 104);
        errno("ENOBUFS", 105);
        errno("EISCONN", 106);
        errno("ENOTCONN", 107);
        errno("ESHUTDOWN", 108);
        errno("ETIMEDOUT", 110);
        errno("ECONNREFUSED", 111);
        errno("EHOSTDOWN", 112);
        errno("EHOSTUNREACH", 113);
        errno("EALREADY", 114);
        errno("EINPROGRESS", 115);
        errno("ECANCELED", 125);
    }

    private Symbols() {
    }

    /** The value of a name, or null when it is not one. */
    static Long value(String name) {
        return VALUES.get(name);
    }

    /** The errno number of a name ({@code EAGAIN} → 11), or null when it is not an errno name. */
    static Integer errno(String name) {
        return ERRNOS.get(name);
    }

    /** The name of an errno number, or {@code errno N}. */
    static String errnoName(int errno) {
        String n = ERRNO_NAMES.get((long) errno);
        return n != null ? n : "errno " + errno;
    }
}
