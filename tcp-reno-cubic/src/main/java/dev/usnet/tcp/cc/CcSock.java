package dev.usnet.tcp.cc;

/**
 * What congestion control sees of a connection (the parts of tcp_sock and inet_connection_sock that
 * tcp_congestion_ops read and write). The cwnd fields and the congestion state are the algorithm's to read and
 * write; the connection's own values (clock, snd_nxt, lsndtime, ...) are read through to the connection at the
 * moment of the call, so nothing has to be copied before each call. {@link Standalone} holds them in fields, for
 * calculators and tests that drive an algorithm by hand.
 */
public abstract class CcSock extends CwndState {
    /** The kernel-version behaviours in force ({@code usnet.tcp.kernel} and its individual switches). */
    public CcSwitches sw;
    /** tcp_is_cwnd_limited as the connection computed it for this ACK. */
    public boolean cwndLimited = true;
    /** The congestion state (icsk_ca_state). */
    public CaState caState = CaState.OPEN;
    /** cwnd when the last reduction started (prior_cwnd), for undo. */
    public long priorCwnd;
    /** ssthresh before the last reduction (prior_ssthresh), for undo. */
    public long priorSsthresh;

    protected CcSock(CcSwitches sw, long cwnd, long ssthresh) {
        super(cwnd, 0, ssthresh);
        this.sw = sw;
    }

    /** Now on the namespace clock, in nanoseconds. */
    public abstract long nowNanos();

    /** CONFIG_HZ: the jiffy rate the old kernels' timestamps use ({@code usnet.hz}). */
    public abstract int hz();

    /** tp->snd_nxt: next sequence number to send. */
    public abstract long sndNxt();

    /** tp->lsndtime: when data was last sent, in nanoseconds. */
    public abstract long lastSendNanos();

    /** Segments sent and not yet acknowledged (packets_out). */
    public abstract long packetsOut();

    /** Smoothed RTT in microseconds (0 before the first sample). */
    public abstract long srttUs();

    /** mss_cache: the sender's segment size in bytes. */
    public abstract int mss();

    /** tcp_current_ssthresh: outside a reduction, at least three quarters of cwnd. */
    public long currentSsthresh() {
        if (caState == CaState.CWR || caState == CaState.RECOVERY) {
            return sndSsthresh;
        }
        return Math.max(sndSsthresh, (sndCwnd >> 1) + (sndCwnd >> 2));
    }

    /** Now in jiffies at {@link #hz()} (tcp_time_stamp / tcp_jiffies32). */
    public long jiffies() {
        return nanosToJiffies(nowNanos());
    }

    public long nanosToJiffies(long nanos) {
        return Math.floorDiv(nanos, 1_000_000_000L / hz());
    }

    /**
     * tcp_time_stamp of the 3.x/4.x kernels: jiffies as a wrapping u32 (Java int), starting where Linux's
     * jiffies start (INITIAL_JIFFIES, 300 s before wrapping to 0). The offset matters: CUBIC takes a zero
     * epoch_start to mean "no epoch", and a namespace clock starting at 0 would otherwise hit that at once.
     */
    public int tcpTimeStamp() {
        return tcpTimeStamp(nowNanos());
    }

    /** {@link #tcpTimeStamp()} of another instant on the namespace clock (e.g. lsndtime). */
    public int tcpTimeStamp(long nanos) {
        return (int) (nanosToJiffies(nanos) - 300L * hz());
    }

    /** msecs_to_jiffies: rounds up, as the kernel does for HZ below 1000. */
    public long msecsToJiffies(long ms) {
        return (ms * hz() + 999) / 1000;
    }

    /** usecs_to_jiffies: rounds up. */
    public long usecsToJiffies(long us) {
        return (us * hz() + 999_999) / 1_000_000;
    }

    /** A connection's view held in fields: set them before each call (calculators, tests). */
    public static final class Standalone extends CcSock {
        public long nowNanos;
        public int hz = 1000;
        public long sndNxt;
        public long lastSendNanos;
        public long packetsOut;
        public long srttUs;
        public int mss = 1448;

        public Standalone(CcSwitches sw, long cwnd, long ssthresh) {
            super(sw, cwnd, ssthresh);
        }

        @Override
        public long nowNanos() {
            return nowNanos;
        }

        @Override
        public int hz() {
            return hz;
        }

        @Override
        public long sndNxt() {
            return sndNxt;
        }

        @Override
        public long lastSendNanos() {
            return lastSendNanos;
        }

        @Override
        public long packetsOut() {
            return packetsOut;
        }

        @Override
        public long srttUs() {
            return srttUs;
        }

        @Override
        public int mss() {
            return mss;
        }
    }
}
