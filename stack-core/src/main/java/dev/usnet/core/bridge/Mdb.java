package dev.usnet.core.bridge;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A snooping bridge's table of IPv6 groups (the mdb, net_bridge_mdb_htable) keyed by group address, at most
 * {@link #HASH_MAX} groups (Linux's hash_max). Lookups reuse one probe key and allocate nothing. Changed and read
 * on the namespace thread only.
 */
public final class Mdb {
    /** Linux's default hash_max: more groups than this turn snooping off on the bridge. */
    public static final int HASH_MAX = 4096;

    private static final class Key {
        long hi;
        long lo;

        Key(long hi, long lo) {
            this.hi = hi;
            this.lo = lo;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.hi == hi && k.lo == lo;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(hi * 31 + lo);
        }
    }

    private final Map<Key, MdbEntry> groups = new HashMap<>();
    private final Key probe = new Key(0, 0);

    /** The group's entry, or null. */
    public MdbEntry get(long hi, long lo) {
        probe.hi = hi;
        probe.lo = lo;
        return groups.get(probe);
    }

    /** The group's entry, made when missing; null when the table is full ({@link #HASH_MAX}). */
    MdbEntry getOrCreate(long hi, long lo) {
        MdbEntry e = get(hi, lo);
        if (e == null) {
            if (groups.size() >= HASH_MAX) {
                return null;
            }
            e = new MdbEntry(hi, lo);
            groups.put(new Key(hi, lo), e);
        }
        return e;
    }

    public int size() {
        return groups.size();
    }

    /** Every group, for display. */
    public List<MdbEntry> entries() {
        return new ArrayList<>(groups.values());
    }

    /** Forgets what {@code port} listened to (the port left the bridge or went down). */
    void forgetPort(BridgePort port, long now) {
        for (Iterator<MdbEntry> it = groups.values().iterator(); it.hasNext(); ) {
            MdbEntry e = it.next();
            e.remove(port);
            if (e.expire(now)) {
                it.remove();
            }
        }
    }

    /** Drops the memberships that ended and the groups left with none. */
    void expire(long now) {
        groups.values().removeIf(e -> e.expire(now));
    }

    void clear() {
        groups.clear();
    }
}
