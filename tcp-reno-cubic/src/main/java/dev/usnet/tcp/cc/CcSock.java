package dev.usnet.tcp.cc;

/**
 * What congestion control sees of a connection (the parts of tcp_sock and inet_connection_sock that
 * tcp_congestion_ops read and write). The connection updates the read-only fields before each call; a
 * calculator can fill them by hand.
 */
public class CcSock extends CwndState {
    /** The kernel-version behaviours in force ({@code usnet.tcp.kernel} and its individual switches). */
    public CcSwitches sw;
    /** CONFIG_HZ: the jiffy rate the old kernels' timestamps use ({@code usnet.hz}). */
    public int hz = 1000;
    /** Now on the namespace clock, in nanoseconds. */
    public long nowNanos;
    /** tcp_is_cwnd_limited as the connection computed it for this ACK. */
    public boolean cwndLimited = true;
    /** tp->lsndtime: when data was last sent, in nanoseconds. */
    public long lastSendNanos;
    /** Smoothed RTT in microseconds (0 before the first sample). */
    public long srttUs;
    /** mss_cache: the sender's segment size in bytes. */
    public int mss = 1448;
    /** Segments sent and not yet acknowledged (packets_out). */
    public long packetsOut;
    /** tp->snd_nxt: next sequence number to send. */
    public long sndNxt;
    /** The congestion state (icsk_ca_state). */
    public CaState caState = CaState.OPEN;
    /** cwnd when the last reduction started (prior_cwnd), for undo. */
    public long priorCwnd;
    /** ssthresh before the last reduction (prior_ssthresh), for undo. */
    public long priorSsthresh;

    public CcSock(CcSwitches sw, long cwnd, long ssthresh) {
        super(cwnd, 0, ssthresh);
        this.sw = sw;
    }

    /** Now in jiffies at {@link #hz} (tcp_time_stamp / tcp_jiffies32). */
    public long jiffies() {
        return nanosToJiffies(nowNanos);
    }

    public long nanosToJiffies(long nanos) {
        return Math.floorDiv(nanos, 1_000_000_000L / hz);
    }

    /**
     * tcp_time_stamp of the 3.x/4.x kernels: jiffies as a wrapping u32 (Java int), starting where Linux's
     * jiffies start (INITIAL_JIFFIES, 300 s before wrapping to 0). The offset matters: CUBIC takes a zero
     * epoch_start to mean "no epoch", and a namespace clock starting at 0 would otherwise hit that at once.
     */
    public int tcpTimeStamp() {
        return tcpTimeStamp(nowNanos);
    }

    /** {@link #tcpTimeStamp()} of another instant on the namespace clock (e.g. lsndtime). */
    public int tcpTimeStamp(long nanos) {
        return (int) (nanosToJiffies(nanos) - 300L * hz);
    }

    /** msecs_to_jiffies: rounds up, as the kernel does for HZ below 1000. */
    public long msecsToJiffies(long ms) {
        return (ms * hz + 999) / 1000;
    }

    /** usecs_to_jiffies: rounds up. */
    public long usecsToJiffies(long us) {
        return (us * hz + 999_999) / 1_000_000;
    }
}
