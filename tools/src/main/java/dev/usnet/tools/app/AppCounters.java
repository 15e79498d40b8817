package dev.usnet.tools.app;

import dev.usnet.tcp.app.Percentiles;

/**
 * What an app counted, as results, {@code usnet ctl apps} and {@code /metrics} show it.
 *
 * @param bytes payload bytes it moved (sent, received, or its TCP client's)
 * @param mbitPerSecond its measured rate, null for a kind that measures none
 * @param operations echo replies, datagrams, transactions, bursts, children forked, iterations
 * @param latency its latency percentiles, null for a kind that measures none
 * @param retransmits TCP retransmissions
 * @param timeouts TCP retransmission timeouts
 */
public record AppCounters(long bytes, Double mbitPerSecond, long operations, Percentiles latency, long retransmits,
                          long timeouts) {
    /** Counts without rate, latency or TCP losses. */
    public static AppCounters of(long bytes, long operations) {
        return new AppCounters(bytes, null, operations, null, 0, 0);
    }
}
