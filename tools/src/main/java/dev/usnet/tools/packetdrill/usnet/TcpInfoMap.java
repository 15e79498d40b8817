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
 * <p>When {@code TcpInfo} offers its own {@code tcpi_*} map, {@link #connection} can take that and add only the
 * socket-layer fields (state as the socket sees it, the last-event ages, pmtu).
 */
final class TcpInfoMap {
    private TcpInfoMap() {}

    /** tcpi_options bits. */
    private static final int TCPI_OPT_TIMESTAMPS = 1;
    private static final int TCPI_OPT_SACK = 2;
    private static final int TCPI_OPT_WSCALE = 4;

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

    /** A connection's tcp_info at {@code nowNanos}; {@code socketState} is the state its socket shows. */
    static Map<String, Long> connection(TcpSock sock, TcpState socketState, long nowNanos, int pmtu) {
        TcpInfo i = sock.info();
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("tcpi_state", (long) linuxState(socketState));
        // enum tcp_ca_state: Open 0, Disorder 1, CWR 2, Recovery 3, Loss 4 — the order of usnet's CaState.
        m.put("tcpi_ca_state", (long) i.caState().ordinal());
        m.put("tcpi_backoff", (long) i.backoff());
        long options = (i.timestamps() ? TCPI_OPT_TIMESTAMPS : 0) | (i.sack() ? TCPI_OPT_SACK : 0)
                | (i.wscaleSnd() >= 0 ? TCPI_OPT_WSCALE : 0);
        m.put("tcpi_options", options);
        m.put("tcpi_snd_wscale", (long) Math.max(0, i.wscaleSnd()));
        m.put("tcpi_rcv_wscale", (long) Math.max(0, i.wscaleRcv()));
        m.put("tcpi_rto", i.rtoUs());
        m.put("tcpi_ato", i.atoUs());
        m.put("tcpi_snd_mss", (long) i.sndMss());
        m.put("tcpi_rcv_mss", (long) i.rcvMss());
        m.put("tcpi_unacked", i.unacked());
        m.put("tcpi_sacked", i.sacked());
        m.put("tcpi_lost", i.lost());
        m.put("tcpi_retrans", i.retrans());
        m.put("tcpi_last_data_sent", (nowNanos - i.lastSendNanos()) / 1_000_000L);
        m.put("tcpi_last_data_recv", (nowNanos - i.lastRcvNanos()) / 1_000_000L);
        m.put("tcpi_last_ack_recv", (nowNanos - i.lastAckNanos()) / 1_000_000L);
        m.put("tcpi_pmtu", (long) pmtu);
        m.put("tcpi_rcv_ssthresh", sock.rcvSsthresh() == Long.MAX_VALUE ? 0xffff_ffffL : sock.rcvSsthresh());
        m.put("tcpi_rtt", i.rttUs());
        m.put("tcpi_rttvar", i.rttvarUs());
        m.put("tcpi_snd_ssthresh", i.ssthresh());
        m.put("tcpi_snd_cwnd", i.cwnd());
        m.put("tcpi_advmss", (long) i.advMss());
        m.put("tcpi_reordering", i.reordering());
        m.put("tcpi_total_retrans", i.totalRetrans());
        m.put("tcpi_bytes_acked", i.bytesAcked());
        m.put("tcpi_bytes_received", i.bytesReceived());
        m.put("tcpi_segs_out", i.segsOut());
        m.put("tcpi_segs_in", i.segsIn());
        m.put("tcpi_min_rtt", i.minRttUs() == 0 ? 0xffff_ffffL : i.minRttUs());
        m.put("tcpi_data_segs_in", i.dataSegsIn());
        m.put("tcpi_data_segs_out", i.dataSegsOut());
        m.put("tcpi_bytes_sent", i.bytesSent());
        m.put("tcpi_bytes_retrans", i.bytesRetrans());
        m.put("tcpi_snd_wnd", i.sndWnd());
        m.put("tcpi_rcv_wnd", i.rcvWnd());
        m.put("tcpi_total_rto", i.timeouts());
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
