package dev.usnet.tcp.app;

import dev.usnet.core.stats.LatencyPaths;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * A latency histogram's summary in microseconds (the histograms hold nanoseconds; each percentile is the
 * highest value equivalent to the recorded ones at three significant digits, as HdrHistogram reports them).
 */
public record Percentiles(long count, double minUs, double meanUs, double p50Us, double p90Us, double p99Us,
        double p999Us, double maxUs) {

    /** The summary of {@code h} (values in nanoseconds); all zero when it is empty. */
    public static Percentiles of(Histogram h) {
        if (h.getTotalCount() == 0) {
            return new Percentiles(0, 0, 0, 0, 0, 0, 0, 0);
        }
        return new Percentiles(h.getTotalCount(), us(h.getMinValue()), h.getMean() / 1000.0,
                us(h.getValueAtPercentile(50)), us(h.getValueAtPercentile(90)), us(h.getValueAtPercentile(99)),
                us(h.getValueAtPercentile(99.9)), us(h.getMaxValue()));
    }

    /** The summary of a forwarding path's latencies (nanoseconds), the same numbers as of its histogram. */
    public static Percentiles of(LatencyPaths.Summary s) {
        if (s.totalCount() == 0) {
            return new Percentiles(0, 0, 0, 0, 0, 0, 0, 0);
        }
        return new Percentiles(s.totalCount(), us(s.minValue()), s.mean() / 1000.0, us(s.valueAtPercentile(50)),
                us(s.valueAtPercentile(90)), us(s.valueAtPercentile(99)), us(s.valueAtPercentile(99.9)),
                us(s.maxValue()));
    }

    private static double us(long nanos) {
        return nanos / 1000.0;
    }

    /** {@code p50 100.0 p90 100.0 p99 100.1 p99.9 100.1 max 100.1 us (n=1000)}. */
    public String format() {
        return String.format(Locale.ROOT, "p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f us (n=%d)", p50Us, p90Us,
                p99Us, p999Us, maxUs, count);
    }
}
