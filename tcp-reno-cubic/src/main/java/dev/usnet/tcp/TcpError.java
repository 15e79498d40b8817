package dev.usnet.tcp;

/**
 * Why a connection ended, as the errno a Linux socket would report, with Linux's number. What the application
 * sees afterwards: the {@link TcpSock.Callbacks#closed} callback carries it, {@link TcpSock#error()} keeps it,
 * {@link TcpSock#read} returns -1 (what is still queued first) and {@link TcpSock#write} -1, as a Linux socket's
 * connect/recv/send return -1 with this errno (recv returning 0 instead when the end was in order).
 *
 * <p>The ICMP errors ({@link #ENETUNREACH}, {@link #EHOSTUNREACH}, ...) end a connection only while it is being
 * opened (SYN-SENT): once established they are only remembered (sk_err_soft) and reported instead of
 * {@link #ETIMEDOUT} if the connection later times out, as tcp_v4_err and tcp_write_err do.
 */
public enum TcpError {
    /** Closed in order (both FINs exchanged, or closed before connecting). */
    NONE(0),
    /** The peer answered the SYN with a reset (nothing listening), or a port unreachable (ICMP type 3 code 3). */
    ECONNREFUSED(111),
    /** The peer reset an established connection. */
    ECONNRESET(104),
    /**
     * Retransmissions or keep-alive probes went unanswered (tcp_retries2, tcp_syn_retries, keep-alive) and no
     * ICMP error was heard meanwhile.
     */
    ETIMEDOUT(110),
    /** The peer reset the connection after its FIN (in CLOSE-WAIT): what this end would still send is lost. */
    EPIPE(32),
    /** The local application aborted the connection (close with unread data, or abort()). */
    ECONNABORTED(103),
    /** ICMP network unreachable (codes 0, 6, 9, 11): a router has no route to the destination's network. */
    ENETUNREACH(101),
    /**
     * ICMP host unreachable (codes 1, 10, 12), administratively prohibited or filtered (13, 14, 15), or time
     * exceeded (type 11).
     */
    EHOSTUNREACH(113),
    /** ICMP protocol unreachable (code 2): the destination does not speak TCP. */
    ENOPROTOOPT(92),
    /** ICMP fragmentation needed (code 4); only ever a soft error: the path MTU is lowered instead. */
    EMSGSIZE(90),
    /** ICMP source route failed (code 5). */
    EOPNOTSUPP(95),
    /** ICMP destination host unknown (code 7). */
    EHOSTDOWN(112),
    /** ICMP source host isolated (code 8). */
    ENONET(64),
    /** ICMP parameter problem (type 12), ICMPv6 parameter problem (type 4). */
    EPROTO(71),
    /**
     * ICMPv6 destination unreachable: administratively prohibited (code 1), failed ingress/egress policy (5) or
     * reject route (6), as icmpv6_err_convert gives them.
     */
    EACCES(13);

    private final int errno;

    TcpError(int errno) {
        this.errno = errno;
    }

    /** Linux's errno number (x86-64 and the other asm-generic architectures); 0 for {@link #NONE}. */
    public int errno() {
        return errno;
    }

    // Linux's icmp_err_convert, indexed by destination-unreachable code 0..15 (its "fatal" column matters to
    // UDP and raw sockets only: TCP treats every code the same way).
    private static final TcpError[] UNREACH = {
        ENETUNREACH, EHOSTUNREACH, ENOPROTOOPT, ECONNREFUSED, EMSGSIZE, EOPNOTSUPP, ENETUNREACH, EHOSTDOWN,
        ENONET, ENETUNREACH, EHOSTUNREACH, ENETUNREACH, EHOSTUNREACH, EHOSTUNREACH, EHOSTUNREACH, EHOSTUNREACH,
    };

    /** The errno of an ICMP destination unreachable with {@code code} (0..15), as icmp_err_convert maps it. */
    public static TcpError ofUnreachableCode(int code) {
        if (code < 0 || code >= UNREACH.length) {
            throw new IllegalArgumentException("ICMP destination unreachable code " + code + " out of range 0..15");
        }
        return UNREACH[code];
    }
}
