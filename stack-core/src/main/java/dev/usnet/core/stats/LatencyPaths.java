package dev.usnet.core.stats;

import static dev.usnet.core.util.SpreadKeys.spread;

import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Forwarding latency per path (ingress device → egress device within one namespace), from the rx stamp to
 * the moment of transmit, in HdrHistograms. Recording allocates nothing once a path has settled into its size.
 */
public final class LatencyPaths {
    /**
     * One path's histogram and counters: recorded by the namespace thread, read by anyone. Its storage grows with
     * use, since a bridge of N ports has a path from a flooding port to each of the others, most of which carry a
     * frame now and then: a path starts sparse, a count per histogram bucket seen in a small hash table (about
     * a hundred bytes for the first few values, 32 bytes a bucket at most). A path that carries
     * {@value #DENSE_PACKETS} packets within {@value #DENSE_WINDOW_NANOS} ns of its clock is busy, or one that has
     * seen {@value #SPARSE_MAX_BUCKETS} different buckets (its table as large as a flat histogram of a narrow
     * range), gets a flat histogram (16 KB and more, the fastest to record into) for what follows. Percentiles are
     * the same whatever the storage: both count by the same buckets (3 significant digits).
     */
    public static final class Path {
        static final int DENSE_PACKETS = 1024;
        static final long DENSE_WINDOW_NANOS = 1_000_000_000L;
        /** Buckets the sparse table holds at most: a table of 1024 (at most half full) takes 32 KB. */
        static final int SPARSE_MAX_BUCKETS = 1024;
        private static final int DIGITS = 3;
        /** Only for the bucket arithmetic (immutable once built): never recorded into. */
        private static final Histogram SHAPE = new Histogram(DIGITS);

        private final String inName;
        private final String outName;
        private final int inIfindex;
        private final boolean flood;
        // The sparse table, open addressing: keys are a bucket's lowest value + 1 (0: empty), guarded by this.
        private long[] keys = new long[4];
        private long[] counts = new long[4];
        private int buckets;
        // Published once; from then on the writer records there and the sparse table no longer changes.
        private volatile SingleWriterRecorder dense;
        private Histogram denseTotal;
        private long windowStart;
        private int windowPackets;
        private volatile long packets;
        private volatile long bytes;
        private volatile long cowCopies;
        private volatile long cowBytes;

        Path(int inIfindex, String inName, String outName, boolean flood) {
            this.inIfindex = inIfindex;
            this.inName = inName;
            this.outName = outName;
            this.flood = flood;
        }

        /** {@code in->out}, by the devices' names when the path was first used. */
        public String name() {
            return inName + "->" + outName;
        }

        /** Whether this is an ingress port's flood path ({@code in->flood}): the copies a bridge flooded from it. */
        public boolean isFlood() {
            return flood;
        }

        /** The ifindex of the ingress device. */
        public int inIfindex() {
            return inIfindex;
        }

        /**
         * One packet took this path at {@code now} (the namespace's clock): its latency, its size, and what
         * copy-on-write copied of it here.
         */
        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        public void record(long now, long nanos, int len, int copied) {
            long v = Math.max(0, nanos);
            SingleWriterRecorder d = dense;
            if (d != null) {
                d.recordValue(v);
            } else {
                recordSparse(now, v);
            }
            packets++;
            bytes += len;
            if (copied > 0) {
                cowCopies++;
                cowBytes += copied;
            }
        }

        private void recordSparse(long now, long v) {
            boolean busy = false;
            if (windowPackets == 0) {
                windowStart = now;
            }
            if (++windowPackets >= DENSE_PACKETS) {
                busy = now - windowStart < DENSE_WINDOW_NANOS;
                windowPackets = 0;
            }
            synchronized (this) {
                if (!busy && count(SHAPE.lowestEquivalentValue(v) + 1)) {
                    return;
                }
            }
            SingleWriterRecorder d = new SingleWriterRecorder(DIGITS);
            d.recordValue(v);
            dense = d;
        }

        /**
         * Counts one more in bucket {@code key}; false when the bucket is new and the table is full (nothing
         * counted). Guarded by this.
         */
        private boolean count(long key) {
            int mask = keys.length - 1;
            int i = (int) mix(key) & mask;
            while (keys[i] != 0) {
                if (keys[i] == key) {
                    counts[i]++;
                    return true;
                }
                i = (i + 1) & mask;
            }
            if (buckets >= SPARSE_MAX_BUCKETS) {
                return false;
            }
            keys[i] = key;
            counts[i] = 1;
            if (++buckets * 2 > keys.length) {
                rehash(keys.length * 2);
            }
            return true;
        }

        private void rehash(int capacity) {
            long[] ok = keys;
            long[] oc = counts;
            keys = new long[capacity];
            counts = new long[capacity];
            int mask = capacity - 1;
            for (int j = 0; j < ok.length; j++) {
                if (ok[j] != 0) {
                    int i = (int) mix(ok[j]) & mask;
                    while (keys[i] != 0) {
                        i = (i + 1) & mask;
                    }
                    keys[i] = ok[j];
                    counts[i] = oc[j];
                }
            }
        }

        private static long mix(long k) {
            long h = k * 0x9E3779B97F4A7C15L;
            return h ^ (h >>> 29);
        }

        public long packets() {
            return packets;
        }

        public long bytes() {
            return bytes;
        }

        public long cowCopies() {
            return cowCopies;
        }

        public long cowBytes() {
            return cowBytes;
        }

        /**
         * What was recorded so far, read once: for a sparse path straight from its table (a flat histogram of a
         * path that carried a few packets is 16 KB or more, and a bridge of many ports has many such paths), else
         * from {@link #snapshot()}.
         */
        public synchronized Summary summary() {
            if (dense != null) {
                return new Summary(snapshot());
            }
            long[] values = new long[buckets];
            int n = 0;
            for (long k : keys) {
                if (k != 0) {
                    values[n++] = k - 1;
                }
            }
            java.util.Arrays.sort(values);
            long[] cs = new long[n];
            for (int i = 0; i < n; i++) {
                cs[i] = counts[slot(values[i] + 1)];
            }
            return new Summary(values, cs);
        }

        private int slot(long key) {
            int mask = keys.length - 1;
            int i = (int) mix(key) & mask;
            while (keys[i] != key) {
                i = (i + 1) & mask;
            }
            return i;
        }

        /** Everything recorded so far, as a fresh histogram of its own. */
        public synchronized Histogram snapshot() {
            Histogram out = new Histogram(DIGITS);
            for (int i = 0; i < keys.length; i++) {
                if (keys[i] != 0) {
                    out.recordValueWithCount(keys[i] - 1, counts[i]);
                }
            }
            SingleWriterRecorder d = dense;
            if (d != null) {
                if (denseTotal == null) {
                    denseTotal = new Histogram(DIGITS);
                }
                denseTotal.add(d.getIntervalHistogram());
                out.add(denseTotal);
            }
            return out;
        }
    }

    /**
     * A path's latencies as HdrHistogram reports them (its count, minimum, maximum, mean and value at a
     * percentile, each the same number a histogram of the same values gives), without building one for a path
     * that only counted a few buckets.
     */
    public static final class Summary {
        private final Histogram histogram;
        // Otherwise: each bucket's lowest value, ascending, and its count.
        private final long[] values;
        private final long[] counts;
        private final long total;

        Summary(Histogram h) {
            this.histogram = h;
            this.values = null;
            this.counts = null;
            this.total = h.getTotalCount();
        }

        Summary(long[] values, long[] counts) {
            this.histogram = null;
            this.values = values;
            this.counts = counts;
            long t = 0;
            for (long c : counts) {
                t += c;
            }
            this.total = t;
        }

        public long totalCount() {
            return total;
        }

        /** The lowest recorded value's bucket's lowest value (0 when a 0 was recorded or nothing was). */
        public long minValue() {
            if (histogram != null) {
                return histogram.getMinValue();
            }
            return total == 0 ? 0 : Path.SHAPE.lowestEquivalentValue(values[0]);
        }

        /** The highest recorded value's bucket's highest value (0 when nothing was recorded). */
        public long maxValue() {
            if (histogram != null) {
                return histogram.getMaxValue();
            }
            long max = total == 0 ? 0 : values[values.length - 1];
            return max == 0 ? 0 : Path.SHAPE.highestEquivalentValue(max);
        }

        /** The mean of the buckets' middle values, weighted by their counts. */
        public double mean() {
            if (histogram != null) {
                return histogram.getMean();
            }
            if (total == 0) {
                return 0;
            }
            double sum = 0;
            for (int i = 0; i < values.length; i++) {
                sum += Path.SHAPE.medianEquivalentValue(Path.SHAPE.highestEquivalentValue(values[i])) * (double) counts[i];
            }
            return sum / total;
        }

        /**
         * The value at {@code percentile} (0..100): the highest value of the bucket in which the running count
         * first reaches that share of all values (its lowest for 0), as {@link Histogram#getValueAtPercentile}.
         */
        public long valueAtPercentile(double percentile) {
            if (histogram != null) {
                return histogram.getValueAtPercentile(percentile);
            }
            double requested = Math.min(Math.max(Math.nextAfter(percentile, Double.NEGATIVE_INFINITY), 0.0), 100.0);
            long countAt = Math.max(1, (long) Math.ceil(requested / 100.0 * total));
            long running = 0;
            for (int i = 0; i < values.length; i++) {
                running += counts[i];
                if (running >= countAt) {
                    return percentile == 0.0 ? Path.SHAPE.lowestEquivalentValue(values[i])
                            : Path.SHAPE.highestEquivalentValue(values[i]);
                }
            }
            return 0;
        }
    }

    // The shared empty table until the first path (never changed: the first path replaces it). Written and read by
    // the namespace thread; the list in first-use order is what others read, under this.
    private static final LongObjectHashMap<Path> NONE = new LongObjectHashMap<>(1);
    private LongObjectHashMap<Path> paths = NONE;
    private List<Path> ordered = List.of();

    /** The path from {@code inIfindex} to {@code outIfindex}, created on first use with a readable name. */
    public Path path(int inIfindex, int outIfindex, String inName, String outName) {
        return path(inIfindex, outIfindex, inName, outName, false);
    }

    /**
     * The flood path of ingress {@code inIfindex} ({@code in->flood}): every copy a bridge flooded from that port,
     * whichever port it left by. Keyed by egress ifindex 0, which no device has.
     */
    public Path floodPath(int inIfindex, String inName) {
        return path(inIfindex, 0, inName, FLOOD, true);
    }

    /** The egress name of a flood path. */
    public static final String FLOOD = "flood";

    private Path path(int inIfindex, int outIfindex, String inName, String outName, boolean flood) {
        // Spread: the paths from two ports to N consecutive ifindexes would otherwise fill one run of slots.
        long key = spread(((long) inIfindex << 32) | (outIfindex & 0xffff_ffffL));
        Path p = paths.get(key);
        if (p == null) {
            p = new Path(inIfindex, inName, outName, flood);
            synchronized (this) {
                if (paths == NONE) {
                    paths = new LongObjectHashMap<>();
                    ordered = new ArrayList<>();
                }
                paths.put(key, p);
                ordered.add(p);
            }
        }
        return p;
    }


    public synchronized List<Path> all() {
        return List.copyOf(ordered);
    }
}
