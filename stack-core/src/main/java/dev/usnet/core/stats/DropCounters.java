package dev.usnet.core.stats;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/** Per-reason drop counters of one namespace (like {@code nstat} plus the kernel's drop reasons). */
public final class DropCounters {
    private static final DropReason[] REASONS = DropReason.values();
    private final AtomicLongArray counts = new AtomicLongArray(REASONS.length);

    public void count(DropReason reason) {
        counts.incrementAndGet(reason.ordinal());
    }

    public long get(DropReason reason) {
        return counts.get(reason.ordinal());
    }

    public long total() {
        long t = 0;
        for (int i = 0; i < REASONS.length; i++) {
            t += counts.get(i);
        }
        return t;
    }

    /** Non-zero counters only, in declaration order. */
    public Map<DropReason, Long> snapshot() {
        Map<DropReason, Long> m = new EnumMap<>(DropReason.class);
        for (DropReason r : REASONS) {
            long v = counts.get(r.ordinal());
            if (v != 0) {
                m.put(r, v);
            }
        }
        return m;
    }
}
