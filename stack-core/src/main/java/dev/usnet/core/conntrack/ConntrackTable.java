package dev.usnet.core.conntrack;

import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.time.Timeout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The connection-tracking table of one namespace (nf_conntrack_hash): every confirmed entry hashed by both of its
 * tuples into nf_conntrack_buckets chains, at most nf_conntrack_max entries. The bucket array is allocated when
 * the first entry is inserted, so a namespace that never tracks pays nothing. When the table is full a new
 * connection evicts unassured entries from its own bucket or the seven after it (early_drop); if there are none
 * it is refused. Entries expire by deadline: a lookup that meets an expired entry removes it, and a collector
 * (gc_worker) walks the table on the namespace's timer — between once a second and once a minute, sooner when the
 * next deadline is near — so no entry ever owns a timer. Runs on the namespace's thread only.
 */
public final class ConntrackTable {
    /** Buckets early_drop looks at, from the new tuple's on (NF_CT_EVICTION_RANGE). */
    static final int EVICTION_RANGE = 8;
    /** A chain is refused at confirm beyond MIN_CHAINLEN plus a random part below MAX_CHAINLEN_SPREAD entries. */
    static final int MIN_CHAINLEN = 50;
    static final int MAX_CHAINLEN_SPREAD = 30;
    static final long GC_INTERVAL_MIN = 1_000_000_000L;
    static final long GC_INTERVAL_MAX = 60_000_000_000L;

    /** Told when an entry leaves the table (NAT forgets its binding: nf_nat_cleanup_conntrack). */
    public interface DestroyListener {
        void destroyed(ConntrackEntry ct);
    }

    private final Netns ns;
    private final int seed;
    // Its own seeded source, so that tracking leaves the namespace's random sequence (ports, ISNs) as it was.
    private final java.util.SplittableRandom random;
    private final ConntrackStats stats = new ConntrackStats();
    private final ConntrackTuple scratch = new ConntrackTuple();
    private ConntrackTupleHash[] buckets;
    private ConntrackEntry all;
    private int count;
    private Timeout gc;
    /** When the collector runs next (namespace nanoseconds), while {@link #gc} is set. */
    private long gcAt;
    private final Runnable gcWorker = this::gcWorker;
    private DestroyListener destroyListener;

    public ConntrackTable(Netns ns) {
        this.ns = ns;
        long s = ns.seed() * 0x9e37_79b9_7f4a_7c15L;
        this.seed = (int) (s ^ s >>> 32);
        this.random = new java.util.SplittableRandom(s);
    }

    public ConntrackStats stats() {
        return stats;
    }

    /** Confirmed entries (what nf_conntrack_count shows). */
    public int count() {
        return count;
    }

    /** The size of the bucket array, 0 before the first insert. */
    public int bucketCount() {
        return buckets == null ? 0 : buckets.length;
    }

    public void setDestroyListener(DestroyListener l) {
        this.destroyListener = l;
    }

    long now() {
        return ns.now();
    }

    private static int scale(int hash, int size) {
        return (int) ((hash & 0xffff_ffffL) * size >>> 32);
    }

    /**
     * nf_conntrack_find_get: the direction of a live entry with {@code t} as one of its tuples, or null. Expired
     * entries met on the way are removed.
     */
    public ConntrackTupleHash find(ConntrackTuple t) {
        ConntrackTupleHash[] b = buckets;
        if (b == null) {
            return null;
        }
        long now = ns.now();
        int bucket = scale(t.hash(seed), b.length);
        ConntrackTupleHash h = b[bucket];
        while (h != null) {
            if (h.tuple.equals(t)) {
                if (!h.ct.expired(now)) {
                    return h;
                }
                // Expired on lookup; its other tuple may have been the next node, so walk the chain again.
                remove(h.ct);
                h = b[bucket];
                continue;
            }
            h = h.next;
        }
        return null;
    }

    /** The entry with {@code t} as its ORIGINAL or REPLY tuple, or null (for listings, tests and NAT). */
    public ConntrackEntry lookup(ConntrackTuple t) {
        ConntrackTupleHash h = find(t);
        return h == null ? null : h.ct;
    }

    /**
     * A new, unconfirmed entry for a first packet with tuple {@code orig} and the expected answer {@code reply}
     * (__nf_conntrack_alloc). With the table full it first evicts unassured entries near {@code orig}'s bucket;
     * null when nothing could be evicted ({@code drop} counted by the caller).
     */
    ConntrackEntry allocate(ConntrackTuple orig, ConntrackTuple reply, boolean acct, long max) {
        if (max != 0 && count >= max && !earlyDrop(orig.hash(seed))) {
            return null;
        }
        return new ConntrackEntry(orig, reply, acct);
    }

    /** early_drop: evicts the unassured entries of the first of eight buckets from {@code hash}'s that has any. */
    private boolean earlyDrop(int hash) {
        ConntrackTupleHash[] b = buckets;
        if (b == null) {
            return false;
        }
        long now = ns.now();
        int bucket = scale(hash, b.length);
        for (int i = 0; i < EVICTION_RANGE; i++) {
            if (i > 0) {
                bucket = (bucket + 1) % b.length;
            }
            int drops = 0;
            ConntrackTupleHash h = b[bucket];
            while (h != null) {
                ConntrackEntry ct = h.ct;
                boolean expired = ct.expired(now);
                if (expired || !ct.hasStatus(IpConntrackStatus.ASSURED)) {
                    remove(ct);
                    if (!expired) {
                        drops++;
                    }
                    // The entry's other tuple may have been the next node: walk the chain again.
                    h = b[bucket];
                } else {
                    h = h.next;
                }
            }
            if (drops > 0) {
                stats.earlyDrop += drops;
                return true;
            }
        }
        return false;
    }

    /**
     * __nf_conntrack_confirm: puts {@code ct} in the table once its first packet passed every hook. Returns the
     * entry the packet belongs to now: {@code ct}, or on a clash with an identical entry of a protocol that allows
     * it (UDP, ICMP) the existing one ({@code clash_resolve}); null when it cannot be inserted (a clash otherwise:
     * {@code insert_failed} and {@code drop}; a chain too long: {@code chaintoolong} and {@code insert_failed}).
     */
    ConntrackEntry confirm(ConntrackEntry ct) {
        if (ct.hasStatus(IpConntrackStatus.DYING)) {
            // Killed while unconfirmed (a reset answered the first SYN before it got here).
            stats.insertFailed++;
            return null;
        }
        ensureBuckets();
        ConntrackTuple orig = ct.tuplehash[ConntrackEntry.ORIGINAL].tuple;
        ConntrackTuple reply = ct.tuplehash[ConntrackEntry.REPLY].tuple;
        int maxChain = MIN_CHAINLEN + random.nextInt(MAX_CHAINLEN_SPREAD);
        ConntrackTupleHash clash = null;
        int len = 0;
        long now = ns.now();
        for (int d = 0; d < 2 && clash == null; d++) {
            ConntrackTuple t = d == 0 ? orig : reply;
            len = 0;
            int bucket = scale(t.hash(seed), buckets.length);
            for (ConntrackTupleHash h = buckets[bucket]; h != null; ) {
                if (h.tuple.equals(t)) {
                    if (h.ct.expired(now)) {
                        remove(h.ct);
                        h = buckets[bucket];
                        len = 0;
                        continue;
                    }
                    clash = h;
                    break;
                }
                if (len++ > maxChain) {
                    stats.chainTooLong++;
                    stats.insertFailed++;
                    return null;
                }
                h = h.next;
            }
        }
        if (clash != null) {
            ConntrackEntry old = clash.ct;
            int p = orig.protonum();
            if ((p == 17 || p == 1 || p == 136) && old.tuple(ConntrackEntry.ORIGINAL).equals(orig)
                    && old.tuple(ConntrackEntry.REPLY).equals(reply)) {
                stats.clashResolve++;
                return old;
            }
            stats.insertFailed++;
            stats.drop++;
            return null;
        }
        ct.timeout += now;
        ct.setStatusBits(IpConntrackStatus.CONFIRMED);
        insert(ct);
        return ct;
    }

    private void ensureBuckets() {
        int want = (int) ns.knobs().get(ConntrackSysctl.BUCKETS);
        if (buckets != null && buckets.length == want) {
            return;
        }
        // nf_conntrack_hash_resize: every entry moves to its chain in the new array.
        buckets = new ConntrackTupleHash[want];
        for (ConntrackEntry e = all; e != null; e = e.nextAll) {
            for (ConntrackTupleHash h : e.tuplehash) {
                h.next = null;
                link(h);
            }
        }
    }

    private void link(ConntrackTupleHash h) {
        int i = scale(h.tuple.hash(seed), buckets.length);
        h.bucket = i;
        h.next = buckets[i];
        buckets[i] = h;
    }

    private void unlink(ConntrackTupleHash h) {
        ConntrackTupleHash p = buckets[h.bucket];
        if (p == h) {
            buckets[h.bucket] = h.next;
        } else {
            while (p != null && p.next != h) {
                p = p.next;
            }
            if (p != null) {
                p.next = h.next;
            }
        }
        h.next = null;
        h.bucket = -1;
    }

    private void insert(ConntrackEntry ct) {
        link(ct.tuplehash[ConntrackEntry.ORIGINAL]);
        link(ct.tuplehash[ConntrackEntry.REPLY]);
        ct.prevAll = null;
        ct.nextAll = all;
        if (all != null) {
            all.prevAll = ct;
        }
        all = ct;
        count++;
        // The collector comes back when the earliest deadline is due; a new entry may be due before that.
        long due = Math.max(GC_INTERVAL_MIN, ct.timeout - ns.now());
        if (gc == null || ct.timeout - gcAt < 0 && gcAt - ns.now() > GC_INTERVAL_MIN) {
            scheduleGc(Math.min(GC_INTERVAL_MAX, due));
        }
    }

    /** Removes {@code ct} from the table (nf_ct_delete); false when it was not in it. */
    public boolean delete(ConntrackEntry ct) {
        if (ct.tuplehash[0].bucket < 0) {
            return false;
        }
        remove(ct);
        return true;
    }

    private void remove(ConntrackEntry ct) {
        if (ct.tuplehash[0].bucket < 0) {
            return;
        }
        unlink(ct.tuplehash[ConntrackEntry.ORIGINAL]);
        unlink(ct.tuplehash[ConntrackEntry.REPLY]);
        if (ct.prevAll != null) {
            ct.prevAll.nextAll = ct.nextAll;
        } else {
            all = ct.nextAll;
        }
        if (ct.nextAll != null) {
            ct.nextAll.prevAll = ct.prevAll;
        }
        ct.prevAll = ct.nextAll = null;
        ct.setStatusBits(IpConntrackStatus.DYING);
        count--;
        if (count == 0 && gc != null) {
            gc.cancel();
            gc = null;
        }
        if (destroyListener != null) {
            destroyListener.destroyed(ct);
        }
    }

    /** Removes every entry (conntrack -F); returns how many there were. */
    public int flush() {
        return deleteIf(e -> true);
    }

    /** Removes the live entries {@code which} accepts; returns how many. */
    public int deleteIf(Predicate<ConntrackEntry> which) {
        int n = 0;
        long now = ns.now();
        for (ConntrackEntry e = all; e != null; ) {
            ConntrackEntry next = e.nextAll;
            if (e.expired(now)) {
                remove(e);
            } else if (which.test(e)) {
                remove(e);
                n++;
            }
            e = next;
        }
        return n;
    }

    /** Every live entry, newest first; expired ones met are removed (as a ctnetlink dump evicts them). */
    public List<ConntrackEntry> entries() {
        List<ConntrackEntry> l = new ArrayList<>(count);
        forEach(l::add);
        return l;
    }

    public void forEach(Consumer<ConntrackEntry> action) {
        long now = ns.now();
        for (ConntrackEntry e = all; e != null; ) {
            ConntrackEntry next = e.nextAll;
            if (e.expired(now)) {
                remove(e);
            } else {
                action.accept(e);
            }
            e = next;
        }
    }

    private void scheduleGc(long delay) {
        if (gc != null) {
            gc.cancel();
        }
        gcAt = ns.now() + delay;
        gc = ns.schedule(gcWorker, delay);
    }

    /** gc_worker: removes what expired, and comes back when the next deadline is due (1 s to 60 s from now). */
    private void gcWorker() {
        gc = null;
        long now = ns.now();
        long next = Long.MAX_VALUE;
        for (ConntrackEntry e = all; e != null; ) {
            ConntrackEntry n = e.nextAll;
            if (e.expired(now)) {
                remove(e);
            } else {
                next = Math.min(next, e.timeout - now);
            }
            e = n;
        }
        if (count > 0) {
            scheduleGc(Math.max(GC_INTERVAL_MIN, Math.min(GC_INTERVAL_MAX, next)));
        }
    }

    /**
     * nf_ct_invert_tuple: the tuple of the answer to {@code t} into {@code out} — addresses and ports swapped, an
     * ICMP query type turned into its reply type. False for an ICMP type with no answer.
     */
    public static boolean invert(ConntrackTuple t, ConntrackTuple out) {
        if (t.protonum() == 1) {
            int type = IcmpConntrack.replyType(t.icmpType());
            if (type < 0) {
                return false;
            }
            out.setIcmp(t.dst(), t.src(), t.icmpId(), type, t.icmpCode());
            return true;
        }
        out.set(t.protonum(), t.dst(), t.src(), t.dstPort(), t.srcPort());
        return true;
    }

    /**
     * nf_nat_used_tuple over nf_conntrack_tuple_taken: whether a new connection whose ORIGINAL tuple became
     * {@code t} would collide — whether the answer to {@code t} (its inverse, the REPLY tuple it would need) is
     * already a tuple of another live entry than {@code ignored}.
     */
    public boolean tupleTaken(ConntrackTuple t, ConntrackEntry ignored) {
        if (!invert(t, scratch)) {
            return false;
        }
        return tupleInUse(scratch, ignored);
    }

    /**
     * nf_conntrack_tuple_taken: whether {@code t} itself is a tuple of a live entry other than {@code ignored}. An
     * entry whose ORIGINAL tuple equals {@code ignored}'s is the same flow (a clash confirmation resolves), not a
     * taker. A taken tuple counts as {@code found}, as in Linux, where only this search still counts it.
     */
    public boolean tupleInUse(ConntrackTuple t, ConntrackEntry ignored) {
        ConntrackTupleHash[] b = buckets;
        if (b == null) {
            return false;
        }
        long now = ns.now();
        for (ConntrackTupleHash h = b[scale(t.hash(seed), b.length)]; h != null; h = h.next) {
            if (!h.tuple.equals(t) || h.ct == ignored || h.ct.expired(now)) {
                continue;
            }
            if (ignored != null && h.ct.tuple(ConntrackEntry.ORIGINAL).equals(ignored.tuple(ConntrackEntry.ORIGINAL))) {
                continue;
            }
            stats.found++;
            return true;
        }
        return false;
    }

    /**
     * nf_conntrack_alter_reply: NAT sets the REPLY tuple of an entry it binds, before the entry is confirmed (after
     * that its place in the table depends on it).
     */
    public void alterReply(ConntrackEntry ct, ConntrackTuple newReply) {
        if (ct.confirmed()) {
            throw new IllegalStateException("the reply tuple of a confirmed entry cannot change: " + ct.tuple(0));
        }
        ct.tuplehash[ConntrackEntry.REPLY].tuple.copyFrom(newReply);
    }

    /** Stops the collector and forgets every entry (the namespace goes away). */
    public void close() {
        if (gc != null) {
            gc.cancel();
            gc = null;
        }
        flush();
    }
}
