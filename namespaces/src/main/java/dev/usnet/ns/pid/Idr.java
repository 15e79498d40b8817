package dev.usnet.ns.pid;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The id space of one pid namespace, as Linux's {@code struct idr} serves alloc_pid: ids mapped to objects, allocated
 * cyclically from a cursor ({@code idr_alloc_cyclic}), reserved first and filled in once the whole allocation succeeded
 * ({@code idr_replace}), found without a lock ({@code idr_find} under RCU), walked in order ({@code idr_get_next}).
 * A two-level radix table: 64-slot leaves, each with a bitmap of its used slots, a directory of leaves grown as ids go
 * higher, and a bitmap of full leaves so that a search skips them a word at a time. Memory follows the highest id in use,
 * not pid_max. Writers hold the owner's lock (pidmap_lock); readers may run on any thread and see an entry only once it
 * is filled in.
 */
final class Idr<T> {
    private static final int SHIFT = 6;
    private static final int LEAF = 1 << SHIFT;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Object[].class);
    private static final VarHandle LEAVES = MethodHandles.arrayElementVarHandle(Leaf[].class);
    /** What a reserved id holds until {@link #replace}: readers take it for absent. */
    private static final Object RESERVED = new Object();

    private static final class Leaf {
        final Object[] slots = new Object[LEAF];
        /** Bit i: slot i is taken (reserved or filled). Written under the owner's lock. */
        volatile long used;
    }

    private volatile Leaf[] dir = new Leaf[1];
    /** Bit j: leaf j has all 64 slots taken. Writers only. */
    private long[] full = new long[1];
    /** idr_next: where the next cyclic search starts. Writers only. */
    private int cursor;
    private int count;

    /** idr_get_cursor: the id after the last one allocated. */
    int cursor() {
        return cursor;
    }

    /** Ids taken (reserved or filled). */
    int size() {
        return count;
    }

    /**
     * idr_alloc_cyclic(start, end): reserves the lowest free id in [max(cursor, start), end), else (the space above the
     * cursor is full) the lowest in [start, end); returns it, or -1 when none is free (ENOSPC). The id reads as absent
     * until {@link #replace} fills it in.
     */
    int allocCyclic(int start, int end) {
        int from = Math.max(cursor, start);
        int id = findFree(from, end);
        if (id < 0 && from > start) {
            id = findFree(start, end);
        }
        if (id < 0) {
            return -1;
        }
        take(id);
        cursor = id + 1;
        return id;
    }

    /** idr_replace: fills a reserved (or filled) id in; readers see {@code value} from now on. */
    void replace(int id, T value) {
        Leaf l = leaf(id);
        if (l == null || (l.used >>> (id & (LEAF - 1)) & 1) == 0) {
            throw new IllegalStateException("id " + id + " is not allocated");
        }
        SLOTS.setRelease(l.slots, id & (LEAF - 1), value);
    }

    /** idr_remove: frees {@code id}; returns what it held (null when it was only reserved or free). */
    @SuppressWarnings("unchecked")
    T remove(int id) {
        Leaf l = leaf(id);
        int i = id & (LEAF - 1);
        if (l == null || (l.used >>> i & 1) == 0) {
            return null;
        }
        Object old = SLOTS.getAcquire(l.slots, i);
        SLOTS.setRelease(l.slots, i, null);
        l.used = l.used & ~(1L << i);
        int j = id >>> SHIFT;
        full[j >>> 6] &= ~(1L << j);
        count--;
        return old == RESERVED ? null : (T) old;
    }

    /** idr_find: what {@code id} holds, or null (free, or reserved and not yet filled in). Any thread. */
    @SuppressWarnings("unchecked")
    T find(int id) {
        if (id < 0) {
            return null;
        }
        Leaf[] d = dir;
        int j = id >>> SHIFT;
        if (j >= d.length) {
            return null;
        }
        Leaf l = (Leaf) LEAVES.getAcquire(d, j);
        if (l == null) {
            return null;
        }
        Object v = SLOTS.getAcquire(l.slots, id & (LEAF - 1));
        return v == RESERVED ? null : (T) v;
    }

    /** idr_get_next: the lowest filled-in id at or above {@code from}, or -1. Any thread. */
    int nextFilled(int from) {
        Leaf[] d = dir;
        for (int j = Math.max(0, from) >>> SHIFT; j < d.length; j++) {
            Leaf l = (Leaf) LEAVES.getAcquire(d, j);
            if (l == null) {
                continue;
            }
            long bits = l.used;
            if (j == from >>> SHIFT && from > 0) {
                bits &= -1L << (from & (LEAF - 1));
            }
            while (bits != 0) {
                int i = Long.numberOfTrailingZeros(bits);
                Object v = SLOTS.getAcquire(l.slots, i);
                if (v != null && v != RESERVED) {
                    return (j << SHIFT) | i;
                }
                bits &= bits - 1;
            }
        }
        return -1;
    }

    private Leaf leaf(int id) {
        Leaf[] d = dir;
        int j = id >>> SHIFT;
        return id < 0 || j >= d.length ? null : d[j];
    }

    /** The lowest id in [from, end) that is not taken, or -1. */
    private int findFree(int from, int end) {
        if (from >= end) {
            return -1;
        }
        Leaf[] d = dir;
        int j = from >>> SHIFT;
        int lastLeaf = (end - 1) >>> SHIFT;
        while (j <= lastLeaf) {
            // Skip full leaves a 64-leaf word at a time.
            int w = j >>> 6;
            if (w < full.length) {
                long notFull = ~full[w] & (-1L << (j & 63));
                if (notFull == 0) {
                    j = (w + 1) << 6;
                    continue;
                }
                j = (w << 6) | Long.numberOfTrailingZeros(notFull);
                if (j > lastLeaf) {
                    return -1;
                }
            }
            long used = j < d.length && d[j] != null ? d[j].used : 0;
            long free = ~used;
            int base = j << SHIFT;
            if (from > base) {
                free &= -1L << (from - base);
            }
            if (free != 0) {
                int id = base | Long.numberOfTrailingZeros(free);
                return id < end ? id : -1;
            }
            j++;
        }
        return -1;
    }

    private void take(int id) {
        int j = id >>> SHIFT;
        Leaf[] d = dir;
        if (j >= d.length) {
            d = java.util.Arrays.copyOf(d, Math.max(j + 1, d.length * 2));
            dir = d;
        }
        if (full.length <= j >>> 6) {
            full = java.util.Arrays.copyOf(full, Math.max((j >>> 6) + 1, full.length * 2));
        }
        Leaf l = d[j];
        if (l == null) {
            l = new Leaf();
            LEAVES.setRelease(d, j, l);
        }
        int i = id & (LEAF - 1);
        SLOTS.setRelease(l.slots, i, RESERVED);
        long u = l.used | 1L << i;
        l.used = u;
        if (u == -1L) {
            full[j >>> 6] |= 1L << j;
        }
        count++;
    }
}
