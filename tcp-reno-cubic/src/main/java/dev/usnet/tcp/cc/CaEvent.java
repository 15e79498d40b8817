package dev.usnet.tcp.cc;

/** Events a sender reports to its congestion control (enum tcp_ca_event). */
public enum CaEvent {
    /** First data sent with nothing in flight: the sender was idle or application-limited. */
    TX_START,
    /** RFC 2861 restart after idle: cwnd is being reduced for the idle time. */
    CWND_RESTART,
    /** A cwnd reduction (CWR state) finished. */
    COMPLETE_CWR,
    /** A retransmission timeout: entering the Loss state. */
    LOSS
}
