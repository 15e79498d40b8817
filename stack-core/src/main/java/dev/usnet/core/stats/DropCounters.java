package dev.usnet.core.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumMap;
import java.util.Map;

/**
 * Per-reason drop counters of one namespace (like {@code nstat} plus the kernel's drop reasons). The array behind
 * them is made by the first drop: an idle namespace holds none. Counted from any thread (atomically).
 */
public final class DropCounters {
    private static final DropReason[] REASONS = DropReason.values();
    private static final VarHandle ELEMENT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle COUNTS;

    static {
        try {
            COUNTS = MethodHandles.lookup().findVarHandle(DropCounters.class, "counts", long[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")
    private volatile long[] counts;

    public void count(DropReason reason) {
        long[] c = counts;
        if (c == null) {
            COUNTS.compareAndSet(this, (long[]) null, new long[REASONS.length]);
            c = counts;
        }
        ELEMENT.getAndAdd(c, reason.ordinal(), 1L);
    }

    public long get(DropReason reason) {
        long[] c = counts;
        return c == null ? 0 : (long) ELEMENT.getVolatile(c, reason.ordinal());
    }

    public long total() {
        long[] c = counts;
        long t = 0;
        for (int i = 0; c != null && i < c.length; i++) {
            t += (long) ELEMENT.getVolatile(c, i);
        }
        return t;
    }

    /** Non-zero counters only, in declaration order. */
    public Map<DropReason, Long> snapshot() {
        Map<DropReason, Long> m = new EnumMap<>(DropReason.class);
        for (DropReason r : REASONS) {
            long v = get(r);
            if (v != 0) {
                m.put(r, v);
            }
        }
        return m;
    }
}
