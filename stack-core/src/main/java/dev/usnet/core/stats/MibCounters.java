package dev.usnet.core.stats;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/** One namespace's {@link Mib} counters. */
public final class MibCounters {
    private static final Mib[] ALL = Mib.values();
    private final AtomicLongArray v = new AtomicLongArray(ALL.length);

    public void inc(Mib m) {
        v.incrementAndGet(m.ordinal());
    }

    public void add(Mib m, long n) {
        v.addAndGet(m.ordinal(), n);
    }

    public long get(Mib m) {
        return v.get(m.ordinal());
    }

    /** Non-zero counters, as {@code nstat} shows them. */
    public Map<Mib, Long> snapshot() {
        Map<Mib, Long> m = new EnumMap<>(Mib.class);
        for (Mib k : ALL) {
            long x = v.get(k.ordinal());
            if (x != 0) {
                m.put(k, x);
            }
        }
        return m;
    }
}
