package dev.usnet.perf.floods;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/**
 * Retained heap during a flood: the heap in use after full collections, relative to a baseline taken before the
 * flood, sampled at points the flood chooses; the peak and the samples go into the result.
 */
final class HeapProbe {
    private final long baseline;
    private long peak;
    private final StringBuilder samples = new StringBuilder();
    private int n;

    HeapProbe() {
        this.baseline = retained();
    }

    /** Takes a sample now (a few full GCs); returns the bytes retained above the baseline. */
    long sample() {
        long v = retained() - baseline;
        peak = Math.max(peak, v);
        if (n++ > 0) {
            samples.append(", ");
        }
        samples.append(v);
        return v;
    }

    long peak() {
        return peak;
    }

    /** The samples as a JSON array's body. */
    String samples() {
        return samples.toString();
    }

    static long retained() {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long prev = Long.MAX_VALUE;
        for (int k = 0; k < 6; k++) {
            System.gc();
            long used = mem.getHeapMemoryUsage().getUsed();
            if (Math.abs(prev - used) < Math.max(used / 200, 64 * 1024)) {
                return used;
            }
            prev = used;
        }
        return prev;
    }
}
