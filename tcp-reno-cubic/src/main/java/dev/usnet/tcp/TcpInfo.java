package dev.usnet.tcp;

import dev.usnet.tcp.cc.CaState;
import java.util.Locale;

/**
 * A connection's state as {@code ss -ti} (struct tcp_info) shows it. Times are in microseconds unless named
 * otherwise; counts of segments are MSS-sized packets as Linux counts them.
 *
 * @param wscaleSnd the peer's window scale (-1 when not negotiated)
 * @param wscaleRcv ours
 */
public record TcpInfo(TcpState state, CaState caState, String congestionControl, String local, String peer,
        int sendQueued, int recvQueued, boolean timestamps, boolean sack, int wscaleSnd, int wscaleRcv,
        long rtoUs, int backoff, long rttUs, long rttvarUs, long minRttUs, long atoUs, int sndMss, int rcvMss,
        int advMss, long cwnd, long ssthresh, long sndCwndCnt, long bytesSent, long bytesRetrans,
        long bytesAcked, long bytesReceived, long segsOut, long segsIn, long dataSegsOut, long dataSegsIn,
        long unacked, long retrans, long totalRetrans, long lost, long sacked, long timeouts, long reordering,
        long sndWnd, long rcvWnd, boolean cwndLimited, long lastSendNanos, long lastRcvNanos,
        long lastAckNanos) {

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
