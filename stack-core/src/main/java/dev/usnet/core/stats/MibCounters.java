package dev.usnet.core.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumMap;
import java.util.Map;

/**
 * One namespace's {@link Mib} counters. The array behind them is made by the first count: an idle namespace
 * holds none. Counted only on the namespace's thread, as Linux counts SNMP MIBs per CPU without atomic
 * instructions: a read-modify-write by plain (opaque) loads and stores, where an atomic add cost a locked
 * instruction per counter and frame (five to ten per frame on a TCP path). Read from any thread.
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

    public void inc(Mib m) {
        add(m, 1L);
    }

    public void add(Mib m, long n) {
        long[] c = array();
        int i = m.ordinal();
        ELEMENT.setOpaque(c, i, (long) ELEMENT.getOpaque(c, i) + n);
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
