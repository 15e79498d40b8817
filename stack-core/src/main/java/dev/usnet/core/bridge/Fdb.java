package dev.usnet.core.bridge;

import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;

/**
 * A bridge's forwarding database: learned entries age out after ageing_time; local and static entries do
 * not. The number of learned entries is capped (fdb_max_learned) so a MAC flood cannot grow memory without
 * bound; what is not learned is counted. Mutated only on the bridge's namespace thread.
 */
public final class Fdb {
    private final LongObjectHashMap<FdbEntry> entries = new LongObjectHashMap<>();
    private int learned;
    private volatile long learnFailures;

    /** The entry for {@code mac} if it exists and, when learned, has not aged out by {@code now}. */
    FdbEntry find(long mac, long now, long ageingNanos) {
        FdbEntry e = entries.get(mac);
        if (e != null && !e.local && !e.isStatic && (ageingNanos == 0 || now - e.updated > ageingNanos)) {
            remove(e);
            return null;
        }
        return e;
    }

    /**
     * br_fdb_update: learn or refresh {@code mac} behind {@code port}; a known address seen on another port
     * moves there. Returns false when the cap stopped a new entry.
     */
    boolean learn(long mac, BridgePort port, long now, int maxLearned) {
        FdbEntry e = entries.get(mac);
        if (e != null) {
            if (e.local) {
                return true;
            }
            if (!e.isStatic) {
                e.updated = now;
                if (e.port != port) {
                    synchronized (this) {
                        count(e.port, -1);
                        e.port = port;
                        count(port, 1);
                    }
                }
            }
            return true;
        }
        if (maxLearned > 0 && learned >= maxLearned) {
            learnFailures++;
            return false;
        }
        synchronized (this) {
            put(new FdbEntry(mac, port, now, false, false));
        }
        learned++;
        return true;
    }

    synchronized void addLocal(long mac, BridgePort port, long now) {
        FdbEntry old = entries.get(mac);
        if (old != null && !old.local && !old.isStatic) {
            learned--;
        }
        put(new FdbEntry(mac, port, now, true, true));
    }

    /** {@code bridge fdb add MAC dev PORT master static}. */
    public synchronized void addStatic(long mac, BridgePort port, long now) {
        FdbEntry old = entries.get(mac);
        if (old != null && !old.local && !old.isStatic) {
            learned--;
        }
        put(new FdbEntry(mac, port, now, false, true));
    }

    /** Puts {@code e} in place of any entry for its MAC, keeping the ports' entry counts. Holds the lock. */
    private void put(FdbEntry e) {
        FdbEntry old = entries.put(e.mac, e);
        if (old != null) {
            count(old.port, -1);
        }
        count(e.port, 1);
    }

    private static void count(BridgePort port, int delta) {
        if (port != null) {
            port.fdbEntries += delta;
        }
    }

    synchronized void remove(FdbEntry e) {
        if (entries.get(e.mac) == e) {
            entries.remove(e.mac);
            count(e.port, -1);
            if (!e.local && !e.isStatic) {
                learned--;
            }
        }
    }

    /** Forgets every entry behind {@code port} (the port left or went down). */
    synchronized void flushPort(BridgePort port) {
        // The port's own local entry is found by its MAC; only ports that learned or hold static entries are
        // searched for (br_fdb_delete_by_port walks the whole table; usnet skips that walk for the
        // thousands of idle ports of a container host, which would make deleting N of them O(N^2)).
        FdbEntry own = entries.get(port.dev().mac());
        if (own != null && own.port == port) {
            remove(own);
        }
        if (port.fdbEntries == 0) {
            return;
        }
        for (FdbEntry e : new ArrayList<>(entries.values())) {
            if (e.port == port) {
                remove(e);
            }
        }
    }

    /**
     * Removes learned entries older than the ageing time (br_fdb_cleanup); an ageing time of 0 removes every
     * learned entry. Returns how many went.
     */
    synchronized int expire(long now, long ageingNanos) {
        if (learned == 0) {
            return 0;
        }
        int n = 0;
        for (FdbEntry e : new ArrayList<>(entries.values())) {
            if (!e.local && !e.isStatic && (ageingNanos == 0 || now - e.updated > ageingNanos)) {
                remove(e);
                n++;
            }
        }
        return n;
    }

    public synchronized List<FdbEntry> list() {
        return new ArrayList<>(entries.values());
    }

    public synchronized int size() {
        return entries.size();
    }

    public int learnedCount() {
        return learned;
    }

    /** New addresses not learned because the table was at fdb_max_learned. */
    public long learnFailures() {
        return learnFailures;
    }
}
