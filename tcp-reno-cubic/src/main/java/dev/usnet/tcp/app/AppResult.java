package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * What one app (one end of one connection) measured, like netperf's result line. Times are on the namespace's
 * clock (virtual or real). Every field but {@link #cpuNanos} is deterministic in virtual time: two runs with
 * the same seed give equal results after {@link #withCpuNanos withCpuNanos(0)}.
 *
 * @param app "stream", "rr" or "burst"
 * @param role client or server
 * @param local local address:port
 * @param peer remote address:port
 * @param startNanos start of the measurement: the client's handshake completing, the server's accept
 * @param durationNanos length of the measurement: stream client in count mode — until the peer closed after
 *     the last byte (netperf's elapsed time); with a duration — the duration; rr/burst clients — until the last
 *     transaction/burst completed; servers — until the client's end of stream
 * @param bytes the payload bytes the throughput counts: stream client — bytes written (count mode) or bytes
 *     the peer acknowledged within the duration; stream server — bytes received; rr/burst — sent plus received
 * @param throughputBps {@code bytes} × 8 per second of {@code durationNanos}
 * @param bytesSent bytes the app handed to TCP up to the end of the measurement
 * @param bytesReceived bytes the app took from TCP up to the end of the measurement
 * @param operations rr — transactions; burst — bursts completed; stream — 0
 * @param operationsPerSecond {@code operations} per second of {@code durationNanos}
 * @param latency rr client — transaction latency; burst client — burst completion time; null otherwise
 * @param histogram the nanosecond histogram behind {@code latency} (a copy), or null
 * @param cpuNanos the thread CPU time spent in the app's callbacks and timers, summed
 *     (ThreadMXBean.getCurrentThreadCpuTime around each in real time; in virtual time the wall clock around each,
 *     which on the simulation thread is its CPU time bar preemption, and costs no system call); it includes the TCP work done synchronously inside
 *     the app's write/read calls (as a process's system time in send/recv) but not the stack's work outside
 *     them. In virtual time it is the simulator's own CPU for this app, not an emulated CPU cost of the
 *     modelled host; -1 when not measured
 * @param retransmits the socket's total retransmitted segments at the end of the measurement (tcpi_total_retrans)
 * @param timeouts the socket's retransmission timeouts at the end of the measurement (ss's "timeouts")
 * @param info the socket's {@code ss -ti} state at the end of the measurement (null if it never opened)
 * @param error how the connection ended ({@link TcpError#NONE}: in order)
 */
public record AppResult(String app, App.Role role, String local, String peer, long startNanos, long durationNanos,
        long bytes, double throughputBps, long bytesSent, long bytesReceived, long operations,
        double operationsPerSecond, Percentiles latency, Histogram histogram, long cpuNanos, long retransmits,
        long timeouts, TcpInfo info, TcpError error) {

    /** The same result with another CPU time (0 to compare runs: CPU time is the one non-deterministic field). */
    public AppResult withCpuNanos(long nanos) {
        return new AppResult(app, role, local, peer, startNanos, durationNanos, bytes, throughputBps, bytesSent,
                bytesReceived, operations, operationsPerSecond, latency, histogram, nanos, retransmits, timeouts,
                info, error);
    }

    /**
     * Whether this end did its job. Failed: the client never connected (the cause from {@link #error}: SYN
     * retries exhausted, refused by a reset, or still connecting when stopped), the server never got a
     * connection, the peer reset the connection or retransmissions timed out, nothing was moved, or an rr/burst
     * completed no transaction. A connection reset by a local abort ({@code ECONNABORTED}: the grace at the
     * end ran out) after a measurement that moved data is ok: the numbers stand, the line shows the error.
     */
    public Outcome outcome() {
        boolean connected = startNanos >= 0;
        if (!connected) {
            if (role == App.Role.SERVER) {
                return Outcome.failed("no connection: the client never reached " + local);
            }
            return Outcome.failed("never connected: " + switch (error) {
                case ETIMEDOUT -> "SYN retries exhausted (net.ipv4.tcp_syn_retries), ETIMEDOUT";
                case ECONNREFUSED -> "refused by a reset from " + peer + " (nothing listening), ECONNREFUSED";
                case ECONNRESET -> "reset by " + peer + " during the handshake, ECONNRESET";
                case NONE, ECONNABORTED -> "still connecting (SYN unanswered) when stopped";
                default -> "the path answered the SYN with an ICMP error, " + error;
            });
        }
        long moved = bytesSent + bytesReceived;
        switch (error) {
            case ECONNRESET -> {
                return Outcome.failed("reset by peer after " + moved + " bytes, ECONNRESET");
            }
            case ETIMEDOUT -> {
                return Outcome.failed("connection timed out after " + moved + " bytes: retransmissions"
                        + " unanswered (net.ipv4.tcp_retries2), ETIMEDOUT");
            }
            case NONE, ECONNABORTED -> { }
            default -> {
                // A timeout after the path reported an ICMP error carries that error (tcp_write_err).
                return Outcome.failed("connection timed out after " + moved + " bytes: retransmissions"
                        + " unanswered, the path reporting " + error);
            }
        }
        if (bytes == 0) {
            return Outcome.failed(moved == 0 ? "connected but moved 0 bytes"
                    : "connected but none of the " + moved + " bytes written was acknowledged");
        }
        if (operations == 0 && !app.equals("stream")) {
            return Outcome.failed("connected but completed 0 " + (app.equals("burst") ? "bursts" : "transactions")
                    + " (" + bytesSent + " bytes sent, " + bytesReceived + " received)");
        }
        return Outcome.OK;
    }

    /** Throughput in Mbit/s. */
    public double mbps() {
        return throughputBps / 1e6;
    }

    /**
     * One line: {@code rr client 198.18.0.1:40000->198.18.0.2:5001: 1.000 s, 9.60 Mbit/s, 10000 ops (10000.0/s),
     * latency p50 100.0 ... us (n=10000), cpu 12.3 ms, retrans 0, rto 0}.
     */
    public String format() {
        StringBuilder b = new StringBuilder(160);
        b.append(app).append(' ').append(role.label()).append(' ').append(local).append("->").append(peer)
                .append(": ");
        b.append(String.format(Locale.ROOT, "%.6f s, %d bytes, %.2f Mbit/s", durationNanos / 1e9, bytes, mbps()));
        if (operations > 0 || !app.equals("stream")) {
            b.append(String.format(Locale.ROOT, ", %d ops (%.1f/s)", operations, operationsPerSecond));
        }
        if (latency != null) {
            b.append(", ").append(app.equals("burst") ? "completion " : "latency ").append(latency.format());
        }
        if (cpuNanos >= 0) {
            b.append(String.format(Locale.ROOT, ", cpu %.3f ms", cpuNanos / 1e6));
        }
        b.append(", retrans ").append(retransmits).append(", rto ").append(timeouts);
        if (error != TcpError.NONE) {
            b.append(", ").append(error);
        }
        return b.toString();
    }

    private static final String ROW =
            "%-6s %-6s %12s %14s %10s %10s %12s %10s %10s %10s %10s %10s %10s %7s %5s %s%n";

    /** A fixed-width table of {@code results}, one row each, with a header (netperf's columns plus latency). */
    public static String table(List<AppResult> results) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, ROW, "app", "role", "duration_s", "bytes", "Mbit/s", "ops", "ops/s",
                "p50_us", "p90_us", "p99_us", "p99.9_us", "max_us", "cpu_ms", "retrans", "rto", "error"));
        for (AppResult r : results) {
            Percentiles l = r.latency;
            b.append(String.format(Locale.ROOT, ROW, r.app, r.role.label(),
                    String.format(Locale.ROOT, "%.6f", r.durationNanos / 1e9), r.bytes,
                    String.format(Locale.ROOT, "%.2f", r.mbps()), r.operations,
                    String.format(Locale.ROOT, "%.1f", r.operationsPerSecond), us(l, l == null ? 0 : l.p50Us()),
                    us(l, l == null ? 0 : l.p90Us()), us(l, l == null ? 0 : l.p99Us()),
                    us(l, l == null ? 0 : l.p999Us()), us(l, l == null ? 0 : l.maxUs()),
                    r.cpuNanos < 0 ? "-" : String.format(Locale.ROOT, "%.3f", r.cpuNanos / 1e6), r.retransmits,
                    r.timeouts, r.error == TcpError.NONE ? "" : r.error.name()));
        }
        return b.toString();
    }

    private static String us(Percentiles l, double v) {
        return l == null ? "-" : String.format(Locale.ROOT, "%.1f", v);
    }

    /** Writes the histogram's percentile distribution in microseconds (HdrHistogram's .hgrm text), if there is one. */
    public void writePercentiles(PrintStream out) {
        if (histogram != null) {
            histogram.outputPercentileDistribution(out, 1000.0);
        }
    }
}
