package dev.usnet.core.bridge;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.device.DeviceHost;
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
    // Counts by kind, kept at every change so they can be read from any thread without the table's lock.
    private volatile int learned;
    private volatile int statics;
    private volatile int locals;
    private volatile long learnFailures;
    /** The bridge whose table this is, for telling its namespace's monitor; null for a table on its own. */
    private final Bridge owner;

    public Fdb() {
        this(null);
    }

    Fdb(Bridge owner) {
        this.owner = owner;
    }

    /**
     * Who watches the bridge's namespace, when it watches FDB changes too, or null. Asked on changes only (a new,
     * moved or aged entry), never for a frame of a known station.
     */
    private FdbListener listener() {
        if (owner == null) {
            return null;
        }
        DeviceHost s = owner.stack();
        return s != null && s.listener() instanceof FdbListener l ? l : null;
    }

    /** The entry for {@code mac} if it exists and, when learned, has not aged out by {@code now}. */
    FdbEntry find(long mac, long now, long ageingNanos) {
        FdbEntry e = entries.get(spread(mac));
        if (e != null && !e.local && !e.isStatic && (ageingNanos == 0 || now - e.updated > ageingNanos)) {
            remove(e);
            aged(e);
            return null;
        }
        return e;
    }

    private void aged(FdbEntry e) {
        FdbListener l = listener();
        if (l != null) {
            BridgePort p = e.port;
            l.fdbAged(owner, e.mac, p == null ? null : p.dev());
        }
    }

    /** The entry for {@code mac} as it is, aged or not ({@code bridge fdb show}), or null. */
    public synchronized FdbEntry entry(long mac) {
        return entries.get(spread(mac));
    }

    /**
     * br_fdb_update: learn or refresh {@code mac} behind {@code port}; a known address seen on another port
     * moves there. Returns false when the cap stopped a new entry.
     */
    boolean learn(long mac, BridgePort port, long now, int maxLearned) {
        FdbEntry e = entries.get(spread(mac));
        if (e != null) {
            if (e.local) {
                return true;
            }
            if (!e.isStatic) {
                e.updated = now;
                if (e.port != port) {
                    BridgePort from = e.port;
                    synchronized (this) {
                        count(e.port, -1);
                        e.port = port;
                        count(port, 1);
                    }
                    FdbListener l = listener();
                    if (l != null) {
                        l.fdbMoved(owner, mac, from.dev(), port.dev());
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
        FdbListener l = listener();
        if (l != null) {
            l.fdbLearned(owner, mac, port.dev());
        }
        return true;
    }

    synchronized void addLocal(long mac, BridgePort port, long now) {
        put(new FdbEntry(mac, port, now, true, true));
    }

    /** {@code bridge fdb add MAC dev PORT master static}. */
    public synchronized void addStatic(long mac, BridgePort port, long now) {
        put(new FdbEntry(mac, port, now, false, true));
    }

    /**
     * {@code bridge fdb del MAC}: removes a static or learned entry; false when there is none. The bridge's and
     * its ports' own (local) addresses cannot be removed this way.
     */
    public synchronized boolean delete(long mac) {
        FdbEntry e = entries.get(spread(mac));
        if (e == null) {
            return false;
        }
        if (e.local) {
            throw new IllegalArgumentException(dev.usnet.core.wire.MacAddr.format(mac) + " is a local address of the bridge"
                    + (e.port != null ? " (port " + e.port.dev().name() + ")" : "") + "; it goes only with its device");
        }
        remove(e);
        return true;
    }

    /** Puts {@code e} in place of any entry for its MAC, keeping the ports' entry counts. Holds the lock. */
    private void put(FdbEntry e) {
        FdbEntry old = entries.put(spread(e.mac), e);
        if (old != null) {
            count(old.port, -1);
            kind(old, -1);
        }
        count(e.port, 1);
        kind(e, 1);
    }

    private void kind(FdbEntry e, int delta) {
        if (e.local) {
            locals += delta;
        } else if (e.isStatic) {
            statics += delta;
        } else {
            learned += delta;
        }
    }

    private static void count(BridgePort port, int delta) {
        if (port != null) {
            port.fdbEntries += delta;
        }
    }

    synchronized void remove(FdbEntry e) {
        if (entries.get(spread(e.mac)) == e) {
            entries.remove(spread(e.mac));
            count(e.port, -1);
            kind(e, -1);
        }
    }

    /** Forgets every entry behind {@code port} (the port left or went down). */
    synchronized void flushPort(BridgePort port) {
        // The port's own local entry is found by its MAC; only ports that learned or hold static entries are
        // searched for (br_fdb_delete_by_port walks the whole table; usnet skips that walk for the
        // thousands of idle ports of a container host, which would make deleting N of them O(N^2)).
        FdbEntry own = entries.get(spread(port.dev().mac()));
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

    /** br_fdb_delete_by_port without static entries: forgets what was learned behind {@code port}. */
    synchronized int flushLearned(BridgePort port) {
        if (port.fdbEntries == 0) {
            return 0;
        }
        int n = 0;
        for (FdbEntry e : new ArrayList<>(entries.values())) {
            if (e.port == port && !e.local && !e.isStatic) {
                remove(e);
                n++;
            }
        }
        return n;
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
                aged(e);
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

    /** Learned entries (lock-free read). */
    public int learnedCount() {
        return learned;
    }

    /** Static entries ({@code bridge fdb add ... static}), lock-free. */
    public int staticCount() {
        return statics;
    }

    /** The bridge's and its ports' own addresses, lock-free. */
    public int localCount() {
        return locals;
    }

    /** New addresses not learned because the table was at fdb_max_learned. */
    public long learnFailures() {
        return learnFailures;
    }
}
