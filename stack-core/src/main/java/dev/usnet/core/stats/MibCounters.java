package dev.usnet.core.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumMap;
import java.util.Map;

/**
 * One namespace's {@link Mib} counters. The array behind them is made by the first count: an idle namespace
 * holds none. Counted from any thread, atomically; or, made {@link #MibCounters(boolean) for one thread} (every
 * namespace of a virtual-time run runs on its one thread), by plain (opaque) loads and stores, as Linux counts SNMP
 * MIBs per CPU without atomic instructions: an atomic add is a locked instruction per counter and frame, five to
 * ten per frame on a TCP path. Read from any thread.
 */
public final class MibCounters {
    private static final Mib[] ALL = Mib.values();
    private static final VarHandle ELEMENT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle COUNTS;

    static {
        try {
            COUNTS = MethodHandles.lookup().findVarHandle(MibCounters.class, "counts", long[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")
    private volatile long[] counts;
    private final boolean oneThread;

    /** Counters that any thread may count into. */
    public MibCounters() {
        this(false);
    }

    /** {@code oneThread}: only one thread ever counts (plain stores); else any thread may (atomic adds). */
    public MibCounters(boolean oneThread) {
        this.oneThread = oneThread;
    }

    public void inc(Mib m) {
        add(m, 1L);
    }

    public void add(Mib m, long n) {
        long[] c = array();
        int i = m.ordinal();
        if (oneThread) {
            ELEMENT.setOpaque(c, i, (long) ELEMENT.getOpaque(c, i) + n);
        } else {
            ELEMENT.getAndAdd(c, i, n);
        }
    }

    public long get(Mib m) {
        long[] c = counts;
        return c == null ? 0 : (long) ELEMENT.getVolatile(c, m.ordinal());
    }

    private long[] array() {
        long[] c = counts;
        if (c == null) {
            COUNTS.compareAndSet(this, (long[]) null, new long[ALL.length]);
            c = counts;
        }
        return c;
    }

    /** Non-zero counters, as {@code nstat} shows them. */
    public Map<Mib, Long> snapshot() {
        Map<Mib, Long> m = new EnumMap<>(Mib.class);
        for (Mib k : ALL) {
            long x = get(k);
            if (x != 0) {
                m.put(k, x);
            }
        }
        return m;
    }
}
