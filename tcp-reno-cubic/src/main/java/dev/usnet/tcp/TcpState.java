package dev.usnet.tcp;

/** Connection states (RFC 9293 section 3.3.2), named as {@code ss} prints them. */
public enum TcpState {
    CLOSED("UNCONN"),
    LISTEN("LISTEN"),
    SYN_SENT("SYN-SENT"),
    SYN_RECV("SYN-RECV"),
    ESTABLISHED("ESTAB"),
    FIN_WAIT1("FIN-WAIT-1"),
    FIN_WAIT2("FIN-WAIT-2"),
    CLOSE_WAIT("CLOSE-WAIT"),
    CLOSING("CLOSING"),
    LAST_ACK("LAST-ACK"),
    TIME_WAIT("TIME-WAIT");

    private final String ssName;

    TcpState(String ssName) {
        this.ssName = ssName;
    }

    public String ssName() {
        return ssName;
    }

    /** States in which the peer may still send us data. */
    boolean receivesData() {
        return this == ESTABLISHED || this == FIN_WAIT1 || this == FIN_WAIT2;
    }
}
