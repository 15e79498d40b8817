package dev.usnet.core.stats;

import io.netty.util.collection.LongObjectHashMap;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Forwarding latency per path (ingress device → egress device within one namespace), from the rx stamp to
 * the moment of transmit, in HdrHistograms. Recording allocates nothing once a path exists.
 */
public final class LatencyPaths {
    /** One path's histogram and counters: recorded by the namespace thread, read by anyone. */
    public static final class Path {
        private final String name;
        private final SingleWriterRecorder recorder = new SingleWriterRecorder(3);
        private final Histogram total = new Histogram(3);
        private volatile long packets;
        private volatile long bytes;
        private volatile long cowCopies;
        private volatile long cowBytes;

        Path(String name) {
            this.name = name;
        }

        public String name() {
            return name;
        }

        /** One packet took this path: its latency, its size, and what copy-on-write copied of it here. */
        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        public void record(long nanos, int len, int copied) {
            recorder.recordValue(Math.max(0, nanos));
            packets++;
            bytes += len;
            if (copied > 0) {
                cowCopies++;
                cowBytes += copied;
            }
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

        /** Everything recorded so far. */
        public synchronized Histogram snapshot() {
            total.add(recorder.getIntervalHistogram());
            return total.copy();
        }
    }

    private final LongObjectHashMap<Path> paths = new LongObjectHashMap<>();
    // Copied on the rare write (a path's first packet), so readers on other threads (a scrape) take no lock.
    private final java.util.concurrent.CopyOnWriteArrayList<Path> ordered = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** The path from {@code inIfindex} to {@code outIfindex}, created on first use with a readable name. */
    public Path path(int inIfindex, int outIfindex, String inName, String outName) {
        long key = ((long) inIfindex << 32) | (outIfindex & 0xffff_ffffL);
        Path p = paths.get(key);
        if (p == null) {
            p = new Path(inName + "->" + outName);
            paths.put(key, p);
            ordered.add(p);
        }
        return p;
    }

    public List<Path> all() {
        return List.copyOf(ordered);
    }
}
