package dev.usnet.tcp;

/** Why a connection ended, as the errno a Linux socket would report. */
public enum TcpError {
    /** Closed in order (both FINs exchanged, or closed before connecting). */
    NONE,
    /** The peer answered the SYN with a reset (nothing listening). */
    ECONNREFUSED,
    /** The peer reset an established connection. */
    ECONNRESET,
    /** Retransmissions or keep-alive probes went unanswered (tcp_retries2, tcp_syn_retries, keep-alive). */
    ETIMEDOUT,
    /** The local application aborted the connection (close with unread data, or abort()). */
    ECONNABORTED
}
