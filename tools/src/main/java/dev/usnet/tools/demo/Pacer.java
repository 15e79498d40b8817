package dev.usnet.tools.demo;

/**
 * A constant-rate sender's clock: how many datagrams are due at a given time for {@code ratePps} since
 * {@link #start}. The demo's UDP streams ask it once per tick.
 */
final class Pacer {
    private final long ratePps;
    private long startNanos;
    private long sent;

    Pacer(long ratePps) {
        this.ratePps = ratePps;
    }

    void start(long nowNanos) {
        startNanos = nowNanos;
        sent = 0;
    }

    /** Datagrams to send now; the caller sends exactly this many. */
    long due(long nowNanos) {
        long target = (nowNanos - startNanos) * ratePps / 1_000_000_000L;
        long n = Math.max(0, target - sent);
        sent += n;
        return n;
    }

    /** Datagrams handed out so far. */
    long sent() {
        return sent;
    }
}
