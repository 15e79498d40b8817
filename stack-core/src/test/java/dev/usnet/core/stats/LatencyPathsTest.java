package dev.usnet.core.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

/**
 * A path's latencies read the same whatever its storage: sparse (a count per bucket), flat once busy or once the
 * sparse table is full. Each is checked against a plain histogram fed the same values, down to the text of
 * the percentile distribution an {@code .hgrm} file holds.
 */
class LatencyPathsTest {
    @Test
    void aFewPacketsStaySparseAndReadAsAPlainHistogram() {
        LatencyPaths lp = new LatencyPaths();
        LatencyPaths.Path p = lp.path(3, 7, "h1", "h2");
        Histogram ref = new Histogram(3);
        SplittableRandom r = new SplittableRandom(1);
        long now = 0;
        for (int i = 0; i < 300; i++) {
            long v = i % 10 == 0 ? 0 : 1_000 + r.nextLong(50_000_000L);
            now += 1_000_000_000L;       // one a second: never busy
            p.record(now, v, 64, 0);
            ref.recordValue(v);
        }
        assertSame(p, lp.path(3, 7, "h1", "h2"));
        assertEquals(300, p.packets());
        assertEquals(300 * 64, p.bytes());
        assertEquals("h1->h2", p.name());
        assertSameDistribution(ref, p.snapshot());
    }

    @Test
    void aBusyPathTurnsFlatAndKeepsWhatItCountedBefore() {
        LatencyPaths.Path p = new LatencyPaths().path(1, 2, "a", "b");
        Histogram ref = new Histogram(3);
        SplittableRandom r = new SplittableRandom(2);
        for (int i = 0; i < 10_000; i++) {
            long v = 200 + r.nextLong(2_000_000L);
            p.record(5_000_000_000L + i * 1_000L, v, 1500, i % 3 == 0 ? 54 : 0);   // 1 µs apart: busy
            ref.recordValue(v);
            if (i == 500) {
                assertSameDistribution(ref, p.snapshot());
            }
        }
        assertSameDistribution(ref, p.snapshot());
        assertEquals(3334, p.cowCopies());
        assertEquals(3334L * 54, p.cowBytes());
    }

    @Test
    void aQuietPathWithTooManyBucketsTurnsFlat() {
        LatencyPaths.Path p = new LatencyPaths().path(1, 2, "a", "b");
        Histogram ref = new Histogram(3);
        long now = 0;
        for (int i = 0; i < 3 * LatencyPaths.Path.SPARSE_MAX_BUCKETS; i++) {
            long v = 10_000L * (i + 1);    // a bucket of its own each
            now += 10_000_000_000L;
            p.record(now, v, 60, 0);
            ref.recordValue(v);
        }
        assertSameDistribution(ref, p.snapshot());
        // Then it gets busy: the table's and the flat histogram's counts add up.
        for (int i = 0; i < 5000; i++) {
            long v = 777 + i % 300;
            now += 100_000;
            p.record(now, v, 60, 0);
            ref.recordValue(v);
        }
        assertSameDistribution(ref, p.snapshot());
        assertEquals(ref.getValueAtPercentile(99), p.summary().valueAtPercentile(99));
    }

    @Test
    void anEmptyPathReadsEmpty() {
        LatencyPaths.Path p = new LatencyPaths().path(1, 2, "a", "b");
        assertEquals(0, p.snapshot().getTotalCount());
        LatencyPaths.Summary s = p.summary();
        assertEquals(0, s.totalCount());
        assertEquals(0, s.maxValue());
        assertEquals(0, s.valueAtPercentile(99));
    }

    /** The summary a results file is made of gives HdrHistogram's numbers, sparse or flat, for many shapes. */
    @Test
    void theSummaryGivesTheHistogramsNumbers() {
        SplittableRandom r = new SplittableRandom(3);
        for (int trial = 0; trial < 300; trial++) {
            LatencyPaths.Path p = new LatencyPaths().path(1, 2, "a", "b");
            Histogram ref = new Histogram(3);
            int n = 1 + r.nextInt(trial % 3 == 0 ? 3 : 2000);
            long scale = 1L << r.nextInt(40);
            boolean busy = trial % 4 == 0;
            long now = 0;
            for (int i = 0; i < n; i++) {
                long v = r.nextInt(8) == 0 ? 0 : r.nextLong(scale) + (r.nextBoolean() ? 0 : scale);
                now += busy ? 1_000 : 2_000_000_000L;
                p.record(now, v, 100, 0);
                ref.recordValue(v);
            }
            LatencyPaths.Summary s = p.summary();
            String what = "trial " + trial + " (" + n + " values up to " + 2 * scale + ")";
            assertEquals(ref.getTotalCount(), s.totalCount(), what);
            assertEquals(ref.getMinValue(), s.minValue(), what);
            assertEquals(ref.getMaxValue(), s.maxValue(), what);
            assertEquals(ref.getMean(), s.mean(), 1e-9 * Math.max(1, ref.getMean()), what);
            for (double q : new double[] {0, 1, 25, 50, 90, 99, 99.9, 99.99, 100}) {
                assertEquals(ref.getValueAtPercentile(q), s.valueAtPercentile(q), what + " p" + q);
            }
        }
    }

    private static void assertSameDistribution(Histogram expected, Histogram actual) {
        assertEquals(expected.getTotalCount(), actual.getTotalCount());
        assertEquals(expected.getMaxValue(), actual.getMaxValue());
        assertEquals(expected.getMinValue(), actual.getMinValue());
        for (double q : new double[] {50, 90, 99, 99.9, 100}) {
            assertEquals(expected.getValueAtPercentile(q), actual.getValueAtPercentile(q), "p" + q);
        }
        assertEquals(hgrm(expected), hgrm(actual));
    }

    private static String hgrm(Histogram h) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        h.outputPercentileDistribution(new PrintStream(b, true, StandardCharsets.UTF_8), 1000.0);
        return b.toString(StandardCharsets.UTF_8);
    }
}
