package dev.usnet.core.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.EnumMap;
import java.util.Map;

/**
 * One namespace's {@link Mib} counters, in groups of {@value #GROUP} made by the first count in them: an idle
 * namespace holds none, and one that only ever heard a broadcast ARP holds the ARP group, not every counter the
 * stack has. Counted from any thread (atomically).
 */
public final class MibCounters {
    private static final Mib[] ALL = Mib.values();
    static final int GROUP = 16;
    private static final VarHandle ELEMENT = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle GROUPS_ELEMENT = MethodHandles.arrayElementVarHandle(long[][].class);
    private static final VarHandle GROUPS;

    static {
        try {
            GROUPS = MethodHandles.lookup().findVarHandle(MibCounters.class, "groups", long[][].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused")
    private volatile long[][] groups;

    public void inc(Mib m) {
        int i = m.ordinal();
        ELEMENT.getAndAdd(group(i), i % GROUP, 1L);
    }

    public void add(Mib m, long n) {
        int i = m.ordinal();
        ELEMENT.getAndAdd(group(i), i % GROUP, n);
    }

    public long get(Mib m) {
        long[][] gs = groups;
        int i = m.ordinal();
        long[] g = gs == null ? null : (long[]) GROUPS_ELEMENT.getVolatile(gs, i / GROUP);
        return g == null ? 0 : (long) ELEMENT.getVolatile(g, i % GROUP);
    }

    /** The group of counter {@code i}, made now if this is its first count. */
    private long[] group(int i) {
        long[][] gs = groups;
        if (gs == null) {
            GROUPS.compareAndSet(this, (long[][]) null, new long[(ALL.length + GROUP - 1) / GROUP][]);
            gs = groups;
        }
        long[] g = (long[]) GROUPS_ELEMENT.getVolatile(gs, i / GROUP);
        if (g == null) {
            GROUPS_ELEMENT.compareAndSet(gs, i / GROUP, (long[]) null, new long[GROUP]);
            g = (long[]) GROUPS_ELEMENT.getVolatile(gs, i / GROUP);
        }
        return g;
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
