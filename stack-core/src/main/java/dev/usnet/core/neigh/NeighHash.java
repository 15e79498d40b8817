package dev.usnet.core.neigh;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.device.Device;
import java.util.ArrayList;
import java.util.List;

/**
 * The entries of one neighbour table, found by (ifindex, protocol address): an open-addressing table of entries with
 * linear probing and backward-shift removal, so a lookup compares fields and allocates nothing whatever the
 * address length. An address is two longs, {@code hi} and {@code lo}, as the table's key length fills them: a
 * 4-byte address is {@code lo}'s low 32 bits with {@code hi} zero; a 16-byte one is {@code hi} then {@code lo}.
 *
 * <p>The slot order is the iteration order of flushes and dumps, so it is kept what the table gave when it was a
 * Netty {@code LongObjectHashMap} keyed by {@code spread(ifindex << 32 | ipv4)}: the same 64-bit key for 4-byte
 * addresses ({@code hi} contributes nothing when zero), folded to {@code key ^ key >>> 32} and masked for the home
 * slot, 8 slots to start, doubled when more than half are used and refilled in old slot order, never shrunk.
 * NeighHashTest checks the order against that map on random insertions and removals.
 */
final class NeighHash {
    private static final int INITIAL_CAPACITY = 8;

    // Null until the first entry: most namespaces never resolve anyone.
    private Neighbour[] slots;
    private int mask;
    private int size;
    private int maxSize;

    /** The 64-bit key of an address on a device; for 4-byte addresses the one the table has always used. */
    static long key(int ifindex, long hi, long lo) {
        return spread(((long) ifindex << 32) ^ lo ^ Long.rotateLeft(spread(hi), 32));
    }

    private int home(int ifindex, long hi, long lo) {
        long k = key(ifindex, hi, lo);
        return (int) (k ^ k >>> 32) & mask;
    }

    private int home(Neighbour n) {
        return home(n.ifindex, n.hi, n.lo);
    }

    int size() {
        return size;
    }

    Neighbour get(int ifindex, long hi, long lo) {
        Neighbour[] s = slots;
        if (s == null) {
            return null;
        }
        int i = home(ifindex, hi, lo);
        Neighbour n;
        while ((n = s[i]) != null) {
            if (n.lo == lo && n.hi == hi && n.ifindex == ifindex) {
                return n;
            }
            i = (i + 1) & mask;
        }
        return null;
    }

    /** Adds {@code n}, whose key must not be in the table yet. */
    void add(Neighbour n) {
        if (slots == null) {
            resize(INITIAL_CAPACITY);
        }
        place(slots, n);
        if (++size > maxSize) {
            resize(slots.length << 1);
        }
    }

    private void place(Neighbour[] s, Neighbour n) {
        int i = home(n);
        while (s[i] != null) {
            i = (i + 1) & mask;
        }
        s[i] = n;
    }

    private void resize(int capacity) {
        Neighbour[] old = slots;
        slots = new Neighbour[capacity];
        mask = capacity - 1;
        maxSize = Math.min(capacity - 1, capacity / 2);
        if (old != null) {
            for (Neighbour n : old) {
                if (n != null) {
                    place(slots, n);
                }
            }
        }
    }

    /** Removes {@code n} itself (not another entry with its key); false when it is not in the table. */
    boolean remove(Neighbour n) {
        Neighbour[] s = slots;
        if (s == null) {
            return false;
        }
        int i = home(n);
        while (s[i] != n) {
            if (s[i] == null) {
                return false;
            }
            i = (i + 1) & mask;
        }
        s[i] = null;
        size--;
        // Backward shift: every entry after the hole up to the next empty slot moves into the hole unless its home
        // lies cyclically after the hole and at or before where it sits, so each stays reachable from its home.
        int hole = i;
        for (int j = (i + 1) & mask; s[j] != null; j = (j + 1) & mask) {
            int h = home(s[j]);
            boolean reachable = hole <= j ? hole < h && h <= j : hole < h || h <= j;
            if (!reachable) {
                s[hole] = s[j];
                s[j] = null;
                hole = j;
            }
        }
        return true;
    }

    /** The entries of {@code dev} (every entry when null), in slot order; a copy the caller may remove from. */
    List<Neighbour> entries(Device dev) {
        List<Neighbour> l = new ArrayList<>(dev == null ? size : 2);
        if (slots != null) {
            for (Neighbour n : slots) {
                if (n != null && (dev == null || n.dev == dev)) {
                    l.add(n);
                }
            }
        }
        return l;
    }

    /** Packets queued in every entry, in bytes as unres_qlen_bytes counts them. */
    long queuedBytes() {
        long b = 0;
        if (slots != null) {
            for (Neighbour n : slots) {
                if (n != null) {
                    b += n.arpQueueBytes;
                }
            }
        }
        return b;
    }
}
