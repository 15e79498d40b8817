package dev.usnet.tcp.app;

import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * What an MPI job measured. Every field is deterministic in virtual time.
 *
 * @param pattern the pattern's name ({@code cg}, {@code alltoall}, {@code ring})
 * @param ranks the number of ranks
 * @param iterations the iterations asked for
 * @param connections TCP connections (one per communicating pair not on shared memory)
 * @param completionNanos from the moment every connection was up (the first iteration starts) to the last
 *     rank's last step; -1 when the job did not complete
 * @param bytesSent payload bytes all ranks sent (TCP and shared memory), up to the end (all planned bytes when
 *     the job completed)
 * @param shmBytes of those, the bytes between ranks of one host over shared memory
 * @param iteration per-iteration completion times: every rank's time for each of its iterations, pooled
 * @param histogram the nanosecond histogram behind {@code iteration}
 * @param retransmits retransmitted segments summed over both ends of every connection (tcpi_total_retrans)
 * @param timeouts retransmission timeouts summed likewise
 * @param perConnection each connection, in order of its lower then its higher rank
 * @param failure why the job did not complete; empty when it did
 */
public record MpiResult(String pattern, int ranks, int iterations, int connections, long completionNanos,
        long bytesSent, long shmBytes, Percentiles iteration, Histogram histogram, long retransmits, long timeouts,
        List<Connection> perConnection, String failure) {

    /**
     * One connection's losses.
     *
     * @param a the lower rank (it connected)
     * @param b the higher rank
     * @param retransmits both ends' retransmitted segments
     * @param timeouts both ends' RTOs
     * @param recoveryCwnds snd_cwnd at each fast-recovery entry (either end, time order per end)
     * @param rtoCwnds snd_cwnd just before each retransmission timeout (prior_cwnd of the episode)
     */
    public record Connection(int a, int b, long retransmits, long timeouts, long[] recoveryCwnds, long[] rtoCwnds) {}

    public boolean completed() {
        return completionNanos >= 0;
    }

    /** Application bandwidth, MB/s (10^6 bytes): bytes all ranks sent over the completion time; 0 if unfinished. */
    public double mbPerSecond() {
        return completionNanos > 0 ? bytesSent / (completionNanos / 1e9) / 1e6 : 0;
    }

    public Outcome outcome() {
        return failure.isEmpty() ? Outcome.OK : Outcome.failed(failure);
    }

    /**
     * {@code mpi cg 128 ranks (8 x 16), 42 iterations: 1.234567 s, 1008503808 bytes (118400000 over TCP), 817.23 MB/s,
     * iteration p50 ... us, 224 connections, retrans 12, rto 0}.
     */
    public String format(String grid) {
        StringBuilder b = new StringBuilder(200);
        b.append("mpi ").append(pattern).append(' ').append(ranks).append(" ranks");
        if (grid != null) {
            b.append(" (").append(grid).append(')');
        }
        b.append(", ").append(iterations).append(" iterations: ");
        if (completed()) {
            b.append(String.format(Locale.ROOT, "%.6f s", completionNanos / 1e9));
        } else {
            b.append("not completed");
        }
        b.append(String.format(Locale.ROOT, ", %d bytes (%d over TCP), %.2f MB/s", bytesSent, bytesSent - shmBytes,
                mbPerSecond()));
        b.append(", iteration ").append(iteration.format());
        b.append(", ").append(connections).append(" connections, retrans ").append(retransmits).append(", rto ")
                .append(timeouts);
        return b.toString();
    }
}
