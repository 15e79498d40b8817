package dev.usnet.tcp.cc;

/** The congestion-avoidance state machine of a sender (enum tcp_ca_state). */
public enum CaState {
    /** Nothing suspicious. */
    OPEN,
    /** Duplicate ACKs or SACKs seen, not yet enough to call a loss. */
    DISORDER,
    /** cwnd being reduced after an ECN echo or local congestion. */
    CWR,
    /** Fast retransmit and recovery after a loss signalled by duplicate ACKs or SACK. */
    RECOVERY,
    /** After a retransmission timeout (RTO). */
    LOSS;

    /** The name {@code ss -ti} prints ("open", "disorder", ...). */
    public String ssName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
