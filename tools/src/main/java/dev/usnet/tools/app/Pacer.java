package dev.usnet.tools.app;

/**
 * A constant-rate sender's clock: how many datagrams are due at a given time for {@code ratePps} since
 * {@link #start}. A {@code udp-send} app with {@code max_burst:} asks it once per tick ({@code usnet demo}'s
 * streams do).
 *
 * <p>A sender whose thread was held up (class loading and JIT at start, a collection, a core shared with other
 * work) owes many datagrams at once. Sending them in one tick turned each stall into a burst of thousands: more
 * than an unresolved neighbour queues (unres_qlen_bytes, so TCP's SYN queued behind them was evicted) and more
 * than the next namespace's receive backlog holds (netdev_max_backlog). A live source skips what it missed
 * instead: at most {@code maxBurstNanos} worth goes out at once, the rest is counted in {@link #skipped}.
 */
public final class Pacer {
    /** The demo's limit: the most a late tick catches up on, as time at the rate. */
    public static final long MAX_BURST_NANOS = 10_000_000L;

    private final long ratePps;
    private final long maxBurst;
    private long startNanos;
    private long sent;
    private long skipped;

    public Pacer(long ratePps) {
        this(ratePps, MAX_BURST_NANOS);
    }

    /** A pacer that sends at most {@code maxBurstNanos} worth of datagrams at once (at least one). */
    public Pacer(long ratePps, long maxBurstNanos) {
        this.ratePps = ratePps;
        this.maxBurst = Math.max(1, ratePps * maxBurstNanos / 1_000_000_000L);
    }

    public void start(long nowNanos) {
        startNanos = nowNanos;
        sent = 0;
        skipped = 0;
    }

    /** Datagrams to send now; the caller sends exactly this many. */
    public long due(long nowNanos) {
        long target = (nowNanos - startNanos) * ratePps / 1_000_000_000L - skipped;
        long n = Math.max(0, target - sent);
        if (n > maxBurst) {
            skipped += n - maxBurst;
            n = maxBurst;
        }
        sent += n;
        return n;
    }

    /** Datagrams handed out so far. */
    public long sent() {
        return sent;
    }

    /** Datagrams not sent because the sender was late by more than its maximum burst. */
    public long skipped() {
        return skipped;
    }
}
