package dev.usnet.tcp;

import dev.usnet.tcp.cc.CaState;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A connection's state as {@code ss -ti} (struct tcp_info) shows it. Times are in microseconds unless named
 * otherwise; counts of segments are MSS-sized packets as Linux counts them. {@link #asMap} gives the fields under
 * their {@code tcpi_*} names in Linux's units, as a packetdrill {@code %{ assert tcpi_... }%} block reads them.
 *
 * <p>Left out of {@link #asMap}, because usnet does not keep what Linux computes them from (reporting 0 would be
 * a lie a test could believe): tcpi_probes (usnet's zero-window probes are not counted in icsk_probes_out),
 * tcpi_pacing_rate and tcpi_max_pacing_rate (nothing paces), tcpi_delivery_rate, tcpi_delivery_rate_app_limited,
 * tcpi_delivered and tcpi_delivered_ce (no delivery-rate sampling), tcpi_busy_time, tcpi_rwnd_limited and
 * tcpi_sndbuf_limited (no chrono accounting), tcpi_dsack_dups, tcpi_reord_seen and tcpi_rcv_ooopack (not counted
 * per connection), tcpi_last_ack_sent (never set by Linux either), tcpi_fastopen_client_fail (no Fast Open),
 * tcpi_total_rto_recoveries and tcpi_total_rto_time, tcpi_rehash; tcpi_rcv_ssthresh while it is unbounded
 * (usnet.tcp.buffers=max, which has no Linux counterpart).
 *
 * @param wscaleSnd the peer's window scale (-1 when not negotiated)
 * @param wscaleRcv ours
 * @param minRttUs the smallest RTT seen, -1 before the first sample
 * @param retransmits icsk_retransmits: timeouts in a row without progress
 * @param pmtu the path MTU the segments are sized for (icsk_pmtu_cookie)
 * @param rcvSsthresh rcv_ssthresh, {@link Long#MAX_VALUE} when unbounded
 * @param rcvRttUs the receiver's RTT estimate (rcv_rtt_est), 0 before the first sample; measured in jiffies
 * @param rcvSpace rcvq_space.space: bytes read per receiver RTT at the last autotuning step
 * @param notsentBytes written and not yet sent (write_seq - snd_nxt)
 * @param lastDataRecvNanos when data last arrived (icsk_ack.lrcvtime)
 * @param nowNanos when this snapshot was taken
 */
public record TcpInfo(TcpState state, CaState caState, String congestionControl, String local, String peer,
        int sendQueued, int recvQueued, boolean timestamps, boolean sack, int wscaleSnd, int wscaleRcv,
        long rtoUs, int backoff, long rttUs, long rttvarUs, long minRttUs, long atoUs, int sndMss, int rcvMss,
        int advMss, long cwnd, long ssthresh, long sndCwndCnt, long bytesSent, long bytesRetrans,
        long bytesAcked, long bytesReceived, long segsOut, long segsIn, long dataSegsOut, long dataSegsIn,
        long unacked, long retrans, long totalRetrans, long lost, long sacked, long timeouts, long reordering,
        long sndWnd, long rcvWnd, boolean cwndLimited, long lastSendNanos, long lastRcvNanos,
        long lastAckNanos, int retransmits, int pmtu, long rcvSsthresh, long rcvRttUs, long rcvSpace,
        long notsentBytes, long lastDataRecvNanos, long nowNanos) {

    /** tcpi_options bits (TCPI_OPT_TIMESTAMPS, TCPI_OPT_SACK, TCPI_OPT_WSCALE); usnet negotiates no ECN. */
    public static final int TCPI_OPT_TIMESTAMPS = 1;
    public static final int TCPI_OPT_SACK = 2;
    public static final int TCPI_OPT_WSCALE = 4;

    /** Linux's number of a TCP state (TCP_ESTABLISHED = 1 ... TCP_CLOSING = 11), as tcpi_state reports it. */
    public static int linuxState(TcpState s) {
        return switch (s) {
            case ESTABLISHED -> 1;
            case SYN_SENT -> 2;
            case SYN_RECV -> 3;
            case FIN_WAIT1 -> 4;
            case FIN_WAIT2 -> 5;
            case TIME_WAIT -> 6;
            case CLOSED -> 7;
            case CLOSE_WAIT -> 8;
            case LAST_ACK -> 9;
            case LISTEN -> 10;
            case CLOSING -> 11;
        };
    }

    /**
     * The fields as struct tcp_info names them, in its order and Linux's units: times in microseconds (tcpi_rto,
     * tcpi_ato, tcpi_rtt, tcpi_rttvar, tcpi_min_rtt, tcpi_rcv_rtt) except the tcpi_last_* ages in milliseconds;
     * tcpi_min_rtt is ~0U (4294967295) before the first sample, as Linux reports it; tcpi_advmss less the
     * timestamp option when timestamps were negotiated, as Linux lowers tp->advmss then. Fields usnet cannot know
     * are absent (see the class comment).
     */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("tcpi_state", (long) linuxState(state));
        m.put("tcpi_ca_state", (long) caState.ordinal());
        m.put("tcpi_retransmits", (long) retransmits);
        m.put("tcpi_backoff", (long) backoff);
        long options = (timestamps ? TCPI_OPT_TIMESTAMPS : 0) | (sack ? TCPI_OPT_SACK : 0)
                | (wscaleSnd >= 0 ? TCPI_OPT_WSCALE : 0);
        m.put("tcpi_options", options);
        m.put("tcpi_snd_wscale", (long) Math.max(wscaleSnd, 0));
        m.put("tcpi_rcv_wscale", wscaleSnd >= 0 ? (long) wscaleRcv : 0L);
        m.put("tcpi_rto", rtoUs);
        m.put("tcpi_ato", atoUs);
        m.put("tcpi_snd_mss", (long) sndMss);
        m.put("tcpi_rcv_mss", (long) rcvMss);
        m.put("tcpi_unacked", unacked);
        m.put("tcpi_sacked", sacked);
        m.put("tcpi_lost", lost);
        m.put("tcpi_retrans", retrans);
        // Linux has reported 0 here since it dropped FACK's counter (4.15).
        m.put("tcpi_fackets", 0L);
        m.put("tcpi_last_data_sent", ageMs(lastSendNanos));
        m.put("tcpi_last_data_recv", ageMs(lastDataRecvNanos));
        m.put("tcpi_last_ack_recv", ageMs(lastRcvNanos));
        m.put("tcpi_pmtu", (long) pmtu);
        if (rcvSsthresh != Long.MAX_VALUE) {
            m.put("tcpi_rcv_ssthresh", rcvSsthresh);
        }
        m.put("tcpi_rtt", rttUs);
        m.put("tcpi_rttvar", rttvarUs);
        m.put("tcpi_snd_ssthresh", ssthresh);
        m.put("tcpi_snd_cwnd", cwnd);
        m.put("tcpi_advmss", (long) (advMss - (timestamps ? 12 : 0)));
        m.put("tcpi_reordering", reordering);
        m.put("tcpi_rcv_rtt", rcvRttUs);
        m.put("tcpi_rcv_space", rcvSpace);
        m.put("tcpi_total_retrans", totalRetrans);
        m.put("tcpi_bytes_acked", bytesAcked);
        m.put("tcpi_bytes_received", bytesReceived);
        m.put("tcpi_segs_out", segsOut);
        m.put("tcpi_segs_in", segsIn);
        m.put("tcpi_notsent_bytes", notsentBytes);
        m.put("tcpi_min_rtt", minRttUs < 0 ? 0xffff_ffffL : minRttUs);
        m.put("tcpi_data_segs_in", dataSegsIn);
        m.put("tcpi_data_segs_out", dataSegsOut);
        m.put("tcpi_bytes_sent", bytesSent);
        m.put("tcpi_bytes_retrans", bytesRetrans);
        m.put("tcpi_snd_wnd", sndWnd);
        m.put("tcpi_rcv_wnd", rcvWnd);
        m.put("tcpi_total_rto", timeouts);
        return m;
    }

    private long ageMs(long atNanos) {
        return Math.max(0, nowNanos - atNanos) / 1_000_000L;
    }

    /** One line in the layout of {@code ss -tin}'s detail line (fields ss omits at zero are omitted too). */
    public String format() {
        StringBuilder b = new StringBuilder();
        b.append(congestionControl);
        if (timestamps) {
            b.append(" ts");
        }
        if (sack) {
            b.append(" sack");
        }
        if (wscaleSnd >= 0) {
            b.append(" wscale:").append(wscaleSnd).append(',').append(wscaleRcv);
        }
        b.append(" rto:").append(ms(rtoUs));
        if (backoff > 0) {
            b.append(" backoff:").append(backoff);
        }
        b.append(" rtt:").append(ms(rttUs)).append('/').append(ms(rttvarUs));
        if (atoUs > 0) {
            b.append(" ato:").append(ms(atoUs));
        }
        b.append(" mss:").append(sndMss).append(" advmss:").append(advMss).append(" rcvmss:").append(rcvMss);
        b.append(" cwnd:").append(cwnd);
        if (ssthresh < 0x7fff_ffffL) {
            b.append(" ssthresh:").append(ssthresh);
        }
        b.append(" snd_cwnd_cnt:").append(sndCwndCnt);
        b.append(" ca_state:").append(caState.ssName());
        b.append(" bytes_sent:").append(bytesSent);
        if (bytesRetrans > 0) {
            b.append(" bytes_retrans:").append(bytesRetrans);
        }
        b.append(" bytes_acked:").append(bytesAcked).append(" bytes_received:").append(bytesReceived);
        b.append(" segs_out:").append(segsOut).append(" segs_in:").append(segsIn);
        b.append(" data_segs_out:").append(dataSegsOut).append(" data_segs_in:").append(dataSegsIn);
        if (unacked > 0) {
            b.append(" unacked:").append(unacked);
        }
        if (retrans > 0 || totalRetrans > 0) {
            b.append(" retrans:").append(retrans).append('/').append(totalRetrans);
        }
        if (lost > 0) {
            b.append(" lost:").append(lost);
        }
        if (sacked > 0) {
            b.append(" sacked:").append(sacked);
        }
        if (timeouts > 0) {
            b.append(" timeouts:").append(timeouts);
        }
        b.append(" reordering:").append(reordering);
        b.append(" snd_wnd:").append(sndWnd).append(" rcv_wnd:").append(rcvWnd);
        if (minRttUs > 0) {
            b.append(" minrtt:").append(ms(minRttUs));
        }
        if (cwndLimited) {
            b.append(" cwnd_limited");
        }
        return b.toString();
    }

    /** The first line of {@code ss -tn}: state, queues, addresses. */
    public String summary() {
        return String.format(Locale.ROOT, "%-10s %-6d %-6d %-21s %-21s", state.ssName(), recvQueued, sendQueued, local, peer);
    }

    private static String ms(long us) {
        // ss prints milliseconds with up to three decimals.
        if (us % 1000 == 0) {
            return Long.toString(us / 1000);
        }
        return String.format(Locale.ROOT, "%.3f", us / 1000.0).replaceAll("0+$", "");
    }
}
