package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code getsockopt(TCP_INFO)} as packetdrill scripts read it: usnet's {@link TcpInfo} under Linux's
 * {@code tcpi_*} names and in Linux's units (tcpi_rto, tcpi_rtt, tcpi_ato in µs; tcpi_last_* in ms; tcpi_state
 * as include/net/tcp_states.h numbers it; tcpi_ca_state 0..4 as enum tcp_ca_state). Fields usnet does not keep
 * are absent, so a script asserting one fails with its name rather than comparing against a made-up zero.
 *
 * <p>{@link #connection} takes TCP's own {@code tcpi_*} map and adds only what the socket layer knows.
 */
final class TcpInfoMap {
    private TcpInfoMap() {}

    static int linuxState(TcpState s) {
        return switch (s) {
            case ESTABLISHED -> LinuxAbi.TCP_ESTABLISHED;
            case SYN_SENT -> LinuxAbi.TCP_SYN_SENT;
            case SYN_RECV -> LinuxAbi.TCP_SYN_RECV;
            case FIN_WAIT1 -> LinuxAbi.TCP_FIN_WAIT1;
            case FIN_WAIT2 -> LinuxAbi.TCP_FIN_WAIT2;
            case TIME_WAIT -> LinuxAbi.TCP_TIME_WAIT;
            case CLOSED -> LinuxAbi.TCP_CLOSE;
            case CLOSE_WAIT -> LinuxAbi.TCP_CLOSE_WAIT;
            case LAST_ACK -> LinuxAbi.TCP_LAST_ACK;
            case LISTEN -> LinuxAbi.TCP_LISTEN;
            case CLOSING -> LinuxAbi.TCP_CLOSING;
        };
    }

    /**
     * A connection's tcp_info: {@link TcpInfo#asMap()} (the fields TCP keeps, in Linux's units), with the state the
     * socket shows (a connection in TIME-WAIT is a closed socket to its owner) and the path MTU the target's
     * device gives it.
     */
    static Map<String, Long> connection(TcpSock sock, TcpState socketState, long nowNanos, int pmtu) {
        Map<String, Long> m = new LinkedHashMap<>(sock.info().asMap());
        m.put("tcpi_state", (long) linuxState(socketState));
        m.putIfAbsent("tcpi_pmtu", (long) pmtu);
        return m;
    }

    /** A listener's tcp_info: Linux reports the accept queue in tcpi_unacked and the backlog in tcpi_sacked. */
    static Map<String, Long> listener(TcpListener l) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("tcpi_state", (long) LinuxAbi.TCP_LISTEN);
        m.put("tcpi_unacked", (long) l.acceptQueueLength());
        m.put("tcpi_sacked", (long) l.backlog());
        return m;
    }

    /** A socket with no connection yet (or any more): only its state. */
    static Map<String, Long> unconnected() {
        return Map.of("tcpi_state", (long) LinuxAbi.TCP_CLOSE);
    }
}
