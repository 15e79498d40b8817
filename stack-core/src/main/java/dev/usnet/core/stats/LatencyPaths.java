package dev.usnet.core.stats;

import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * Forwarding latency per path (ingress device → egress device within one namespace), from the rx stamp to
 * the moment of transmit, in HdrHistograms. Recording allocates nothing once a path exists.
 */
public final class LatencyPaths {
    /** One path's histogram: recorded by the namespace thread, read by anyone. */
    public static final class Path {
        private final String name;
        private final SingleWriterRecorder recorder = new SingleWriterRecorder(3);
        private final Histogram total = new Histogram(3);

        Path(String name) {
            this.name = name;
        }

        public String name() {
            return name;
        }

        public void record(long nanos) {
            recorder.recordValue(Math.max(0, nanos));
        }

        /** Everything recorded so far. */
        public synchronized Histogram snapshot() {
            total.add(recorder.getIntervalHistogram());
            return total.copy();
        }
    }

    private final LongObjectHashMap<Path> paths = new LongObjectHashMap<>();
    private final List<Path> ordered = new ArrayList<>();

    /** The path from {@code inIfindex} to {@code outIfindex}, created on first use with a readable name. */
    public Path path(int inIfindex, int outIfindex, String inName, String outName) {
        long key = ((long) inIfindex << 32) | (outIfindex & 0xffff_ffffL);
        Path p = paths.get(key);
        if (p == null) {
            p = new Path(inName + "->" + outName);
            synchronized (ordered) {
                paths.put(key, p);
                ordered.add(p);
            }
        }
        return p;
    }

    public List<Path> all() {
        synchronized (ordered) {
            return List.copyOf(ordered);
        }
    }
}
