package dev.usnet.core.neigh;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.EthernetFrame;
import java.util.List;

/**
 * A neighbour table of a namespace for one protocol (arp_tbl for IPv4 now, nd_tbl for IPv6 later): entries keyed by
 * device and protocol address of the length the protocol's {@link NeighOps} gives (4 or 16 bytes, held as two
 * longs {@code hi}:{@code lo}; the {@code int} overloads are the IPv4 form). Resolution with Linux's NUD state
 * machine and default timers (three broadcast solicitations one second apart, then FAILED and, through the
 * protocol, ICMP host unreachable for what was queued), a byte-bounded queue per unresolved entry
 * (unres_qlen_bytes), permanent entries, and Linux's
 * garbage collection: with gc_thresh2 or more entries a new one forces a GC (at most every 5 s), at gc_thresh3
 * always, and creation fails when that GC can remove nothing; the forced GC removes entries that no timer holds
 * and that have failed or not been updated for 5 s, oldest first, down to gc_thresh2. From gc_thresh1 entries a
 * periodic GC every base_reachable_time/2 removes failed entries and those unused for gc_stale_time.
 */
public final class NeighTable {
    /** Stand-in for the kernel's per-skb truesize overhead when counting unres_qlen_bytes. */
    static final int TRUESIZE_OVERHEAD = 256;
    /** Entries updated this recently survive a forced GC (neigh_forced_gc's 5 s). */
    static final long FORCED_GC_AGE_NANOS = 5_000_000_000L;

    private final Netns stack;
    private final NeighOps ops;
    private final NeighSysctl.Table sysctl;
    // ops.keyLength(): 4 or 16 bytes.
    private final int keyLength;
    // ops.ethertype(), read once: written into every frame sent.
    private final int ethertype;
    // Who is told of entry changes ({@code ip monitor neigh}), or null.
    private volatile NeighListener listener;
    // Guarded by this.
    private final NeighHash entries = new NeighHash();
    /** Entries per NUD state, kept at every change so they can be read from any thread without the table's lock. */
    private final java.util.concurrent.atomic.AtomicIntegerArray byState =
            new java.util.concurrent.atomic.AtomicIntegerArray(NudState.values().length);
    // tbl->gc_list and tbl->gc_entries: non-permanent entries in creation order.
    private Neighbour gcHead;
    private Neighbour gcTail;
    private int gcEntries;
    private long lastFlush;
    private Timeout periodicGc;
    private long forcedGcRuns;

    /** Starts ({@code l}) or stops (null) telling {@code l} of entry changes. */
    public void setListener(NeighListener l) {
        this.listener = l;
    }

    /** The neighbour table of {@code stack} for the protocol whose operations are {@code ops}, with ARP's knobs. */
    public NeighTable(Netns stack, NeighOps ops) {
        this(stack, ops, NeighSysctl.IPV4);
    }

    /** As {@link #NeighTable(Netns, NeighOps)} with the knobs of {@code sysctl} ({@code net.ipv6.neigh.*}). */
    public NeighTable(Netns stack, NeighOps ops, NeighSysctl.Table sysctl) {
        this.stack = stack;
        this.sysctl = sysctl;
        this.ops = ops;
        this.ethertype = ops.ethertype();
        this.keyLength = ops.keyLength();
        if (keyLength != 4 && keyLength != 16) {
            throw new IllegalArgumentException("neighbour table key length " + keyLength + " is neither 4 nor 16");
        }
        this.lastFlush = stack.now();
    }

    /** The length of the table's protocol addresses in bytes: 4 or 16. */
    public int keyLength() {
        return keyLength;
    }

    /** An IPv4 address as the table's {@code lo}; the int overloads are for a 4-byte table only. */
    private long v4(int ip) {
        if (keyLength != 4) {
            throw new IllegalStateException("an IPv4 address given to a neighbour table of " + keyLength
                    + "-byte addresses");
        }
        return ip & 0xffff_ffffL;
    }

    /** Refuses an address that does not fit the table's key length (a 4-byte table's has hi = 0, lo < 2^32). */
    private void checkKey(long hi, long lo) {
        if (keyLength == 4 && (hi != 0 || lo >>> 32 != 0)) {
            throw new IllegalArgumentException("address " + NeighAddress.format(16, hi, lo)
                    + " does not fit a neighbour table of 4-byte addresses");
        }
    }

    public Neighbour lookup(Device dev, int ip) {
        return lookup(dev, 0, v4(ip));
    }

    /** The entry for {@code hi}:{@code lo} on {@code dev}, or null. */
    public Neighbour lookup(Device dev, long hi, long lo) {
        synchronized (this) {
            return entries.get(dev.ifindex(), hi, lo);
        }
    }

    /** Entries in the table (permanent ones included). */
    public int size() {
        synchronized (this) {
            return entries.size();
        }
    }

    /** Forced GC runs so far (the forced_gc_runs column of /proc/net/stat/arp_cache). */
    public long forcedGcRuns() {
        return forcedGcRuns;
    }

    /** Packets waiting for resolution in every entry, in bytes as unres_qlen_bytes counts them. */
    public long queuedBytes() {
        synchronized (this) {
            return entries.queuedBytes();
        }
    }

    /** neigh_alloc: a permanent entry is exempt from the GC and its limits; others count against gc_thresh2/3. */
    private Neighbour create(Device dev, long hi, long lo, boolean permanent) {
        checkKey(hi, lo);
        synchronized (this) {
            Neighbour n = entries.get(dev.ifindex(), hi, lo);
            if (n != null) {
                return n;
            }
            if (!permanent) {
                var knobs = stack.knobs();
                int count = gcEntries;
                long now = stack.now();
                if (count >= knobs.get(sysctl.gcThresh3)
                        || count >= knobs.get(sysctl.gcThresh2) && now - lastFlush > FORCED_GC_AGE_NANOS) {
                    if (forcedGc(now) == 0 && count >= knobs.get(sysctl.gcThresh3)) {
                        stack.mib().inc(Mib.NeighTableOverflow);
                        return null;
                    }
                }
            }
            n = new Neighbour(dev, keyLength, hi, lo);
            n.updated = n.used = stack.now();
            entries.add(n);
            n.inTable = true;
            byState.incrementAndGet(NudState.NONE.ordinal());
            if (!permanent) {
                gcAdd(n);
            }
            if (periodicGc == null && entries.size() >= stack.knobs().get(sysctl.gcThresh1)) {
                schedulePeriodicGc();
            }
            return n;
        }
    }

    private void gcAdd(Neighbour n) {
        n.gcPrev = gcTail;
        n.gcNext = null;
        if (gcTail != null) {
            gcTail.gcNext = n;
        } else {
            gcHead = n;
        }
        gcTail = n;
        n.onGcList = true;
        gcEntries++;
    }

    private void gcRemove(Neighbour n) {
        if (!n.onGcList) {
            return;
        }
        if (n.gcPrev != null) {
            n.gcPrev.gcNext = n.gcNext;
        } else {
            gcHead = n.gcNext;
        }
        if (n.gcNext != null) {
            n.gcNext.gcPrev = n.gcPrev;
        } else {
            gcTail = n.gcPrev;
        }
        n.gcPrev = null;
        n.gcNext = null;
        n.onGcList = false;
        gcEntries--;
    }

    /** Whether something besides the table holds the entry (Linux: refcnt above 1): here, a pending timer. */
    private static boolean referenced(Neighbour n) {
        return n.inTimerHandler || n.timer != null && n.timer.isPending();
    }

    /**
     * neigh_forced_gc: from the oldest, removes entries nothing holds that have failed or were not updated in the
     * last 5 s, until the table is down to gc_thresh2. Returns how many went.
     */
    private int forcedGc(long now) {
        forcedGcRuns++;
        int maxClean = gcEntries - (int) stack.knobs().get(sysctl.gcThresh2);
        int shrunk = 0;
        Neighbour n = gcHead;
        while (n != null) {
            Neighbour next = n.gcNext;
            if (!referenced(n)) {
                NudState st = n.state;
                if (st == NudState.FAILED || st == NudState.NOARP || now - n.updated > FORCED_GC_AGE_NANOS) {
                    removeAndDrop(n);
                    shrunk++;
                }
                if (shrunk >= maxClean) {
                    break;
                }
            }
            n = next;
        }
        lastFlush = now;
        return shrunk;
    }

    private void schedulePeriodicGc() {
        long base = stack.knobs().defaultConf().get(sysctl.baseReachableTimeMs);
        long interval = Math.max(1, base / 2) * 1_000_000L;
        periodicGc = stack.schedule(this::periodicGc, interval);
    }

    /**
     * neigh_periodic_work: with gc_thresh1 entries or more, removes those not in a timer state nor permanent that
     * nothing holds and that failed or went unused for gc_stale_time. Re-armed while the table is that large.
     */
    private void periodicGc() {
        synchronized (this) {
            periodicGc = null;
            var knobs = stack.knobs();
            if (entries.size() < knobs.get(sysctl.gcThresh1)) {
                return;
            }
            long now = stack.now();
            Neighbour n = gcHead;
            while (n != null) {
                Neighbour next = n.gcNext;
                NudState st = n.state;
                boolean inTimer = st == NudState.INCOMPLETE || st == NudState.REACHABLE || st == NudState.DELAY
                        || st == NudState.PROBE;
                if (!inTimer && !referenced(n)) {
                    if (n.used < n.confirmed && n.confirmed <= now) {
                        n.used = n.confirmed;
                    }
                    long stale = stack.conf(n.dev).get(sysctl.gcStaleTime) * 1_000_000_000L;
                    if (st == NudState.FAILED || now - n.used >= stale) {
                        removeAndDrop(n);
                    }
                }
                n = next;
            }
            if (entries.size() >= knobs.get(sysctl.gcThresh1)) {
                schedulePeriodicGc();
            }
        }
    }

    private void removeAndDrop(Neighbour n) {
        remove(n);
        dropQueue(n, DropReason.NEIGH_DEAD);
    }

    private void remove(Neighbour n) {
        if (entries.remove(n)) {
            n.inTable = false;
            byState.decrementAndGet(n.state.ordinal());
            NeighListener l = listener;
            if (l != null) {
                l.neighDeleted(n);
            }
        }
        gcRemove(n);
        if (n.timer != null) {
            n.timer.cancel();
        }
    }

    /** Every NUD state change goes through here: the per-state counts follow, and a monitor hears of it. */
    private void setState(Neighbour n, NudState to) {
        NudState from = n.state;
        if (from == to) {
            return;
        }
        n.state = to;
        if (n.inTable) {
            byState.decrementAndGet(from.ordinal());
            byState.incrementAndGet(to.ordinal());
        }
        NeighListener l = listener;
        if (l != null) {
            l.neighChanged(n, from);
        }
    }

    /** How many entries are in {@code state} now; lock-free, for metrics scraped from another thread. */
    public int count(NudState state) {
        return byState.get(state.ordinal());
    }

    /** {@code ip neigh replace IP lladdr MAC dev DEV nud permanent}. */
    public void addPermanent(Device dev, int ip, long mac) {
        addPermanent(dev, 0, v4(ip), mac);
    }

    /** {@code ip neigh replace ADDR lladdr MAC dev DEV nud permanent} for {@code hi}:{@code lo}. */
    public void addPermanent(Device dev, long hi, long lo, long mac) {
        Neighbour n = create(dev, hi, lo, true);
        if (n == null) {
            throw new IllegalStateException("neighbour table full (gc_thresh3)");
        }
        if (n.timer != null) {
            n.timer.cancel();
        }
        n.mac = mac;
        setState(n, NudState.PERMANENT);
        gcRemove(n);
        n.updated = n.confirmed = stack.now();
        flushQueue(n);
    }

    /** {@code ip neigh del}. */
    public boolean delete(Device dev, int ip) {
        return delete(dev, 0, v4(ip));
    }

    /** {@code ip neigh del} of {@code hi}:{@code lo}; false when there is no such entry. */
    public boolean delete(Device dev, long hi, long lo) {
        synchronized (this) {
            Neighbour n = entries.get(dev.ifindex(), hi, lo);
            if (n == null) {
                return false;
            }
            remove(n);
            dropQueue(n, DropReason.NEIGH_DEAD);
            return true;
        }
    }

    /** Every entry, by ifindex then address (unsigned, as the bytes compare). */
    public List<Neighbour> list() {
        synchronized (this) {
            List<Neighbour> l = entries.entries(null);
            l.sort((a, b) -> a.ifindex != b.ifindex ? Integer.compare(a.ifindex, b.ifindex)
                    : a.hi != b.hi ? Long.compareUnsigned(a.hi, b.hi) : Long.compareUnsigned(a.lo, b.lo));
            return l;
        }
    }

    /**
     * {@code ip neigh flush [dev DEV]}: removes every entry (of {@code dev}, or all when null) that is neither
     * PERMANENT nor NOARP, as iproute2 does without {@code nud all}; what they queued is dropped. Returns how many.
     */
    public int flush(Device dev) {
        synchronized (this) {
            int n = 0;
            for (Neighbour x : entries.entries(dev)) {
                if (x.state != NudState.PERMANENT && x.state != NudState.NOARP) {
                    remove(x);
                    dropQueue(x, DropReason.NEIGH_DEAD);
                    n++;
                }
            }
            return n;
        }
    }

    public void flushDevice(Device dev) {
        synchronized (this) {
            // Only the device's own entries are copied: a router deleting thousands of ports, one neighbour each,
            // copied the whole table per port.
            for (Neighbour n : entries.entries(dev)) {
                remove(n);
                dropQueue(n, DropReason.NEIGH_DEAD);
            }
        }
    }

    public void close() {
        synchronized (this) {
            if (periodicGc != null) {
                periodicGc.cancel();
                periodicGc = null;
            }
            for (Neighbour n : entries.entries(null)) {
                remove(n);
                dropQueue(n, DropReason.NEIGH_DEAD);
            }
        }
    }

    /**
     * neigh_resolve_output: sends a packet of the table's protocol to {@code nextHop} on {@code dev}. The frame
     * must start with a 14-byte link-layer slot followed by the network header; the slot is filled here.
     */
    public void output(Device dev, int nextHop, Packet p) {
        output(dev, 0, v4(nextHop), p);
    }

    /** {@link #output(Device, int, Packet)} to the next hop {@code hi}:{@code lo}. */
    public void output(Device dev, long hi, long lo, Packet p) {
        if (dev instanceof Loopback || dev.noArp()) {
            EthernetFrame.write(p.buf(), p.start(), 0L, 0L, ethertype);
            dev.transmit(p);
            return;
        }
        long mapped = ops.mapWithoutAsking(dev, hi, lo);
        if (mapped != NeighOps.RESOLVE) {
            EthernetFrame.write(p.buf(), p.start(), mapped, dev.mac(), ethertype);
            dev.transmit(p);
            return;
        }
        Neighbour n = lookup(dev, hi, lo);
        if (n == null) {
            n = create(dev, hi, lo, false);
            if (n == null) {
                stack.drop(p, DropReason.NEIGH_CREATEFAIL);
                return;
            }
        }
        NudState s = n.state;
        if (s.valid()) {
            long now = stack.now();
            n.used = now;
            if (s == NudState.STALE) {
                // First use of a stale entry: trust it for delay_first_probe_time, then probe.
                DevConf c = stack.conf(dev);
                setState(n, NudState.DELAY);
                arm(n, c.get(sysctl.delayFirstProbeTime) * 1_000_000_000L);
            }
            EthernetFrame.write(p.buf(), p.start(), n.mac, dev.mac(), ethertype);
            dev.transmit(p);
            return;
        }
        DevConf c = stack.conf(dev);
        if (s == NudState.NONE || s == NudState.FAILED) {
            if (c.get(sysctl.mcastSolicit) + c.get(sysctl.appSolicit) == 0) {
                setState(n, NudState.FAILED);
                stack.drop(p, DropReason.NEIGH_FAILED);
                return;
            }
            setState(n, NudState.INCOMPLETE);
            n.probes = (int) c.get(sysctl.ucastSolicit);
            n.updated = stack.now();
            enqueue(n, p, c);
            arm(n, Math.max(c.get(sysctl.retransTimeMs), 10) * 1_000_000L);
            probe(n);
            return;
        }
        enqueue(n, p, c);
    }

    private void enqueue(Neighbour n, Packet p, DevConf c) {
        int size = p.length() + TRUESIZE_OVERHEAD;
        while (!n.arpQueue.isEmpty() && n.arpQueueBytes + size > c.get(sysctl.unresQlenBytes)) {
            Packet old = n.arpQueue.pollFirst();
            n.arpQueueBytes -= old.length() + TRUESIZE_OVERHEAD;
            stack.drop(old, DropReason.NEIGH_QUEUE_FULL);
        }
        if (size > c.get(sysctl.unresQlenBytes)) {
            stack.drop(p, DropReason.NEIGH_QUEUE_FULL);
            return;
        }
        n.arpQueue.addLast(p);
        n.arpQueueBytes += size;
    }

    private void probe(Neighbour n) {
        DevConf c = stack.conf(n.dev);
        int probes = n.probes++;
        // Probes below ucast_solicit go unicast to the known address (PROBE state); the rest are broadcast.
        boolean unicast = probes < c.get(sysctl.ucastSolicit) && n.state == NudState.PROBE;
        ops.solicit(n, unicast, n.arpQueue.peekLast());
    }

    private void arm(Neighbour n, long delayNanos) {
        if (n.timer != null) {
            n.timer.cancel();
        }
        n.timer = stack.schedule(() -> timer(n), delayNanos);
    }

    private int maxProbes(Neighbour n, DevConf c) {
        return (int) (c.get(sysctl.ucastSolicit) + c.get(sysctl.appSolicit)
                + (n.state == NudState.PROBE ? 0 : c.get(sysctl.mcastSolicit)));
    }

    /** neigh_timer_handler; the entry counts as held while it runs (its ICMP errors may need new entries). */
    private void timer(Neighbour n) {
        n.inTimerHandler = true;
        try {
            timerHandler(n);
        } finally {
            n.inTimerHandler = false;
        }
    }

    private void timerHandler(Neighbour n) {
        n.timer = null;
        DevConf c = stack.conf(n.dev);
        long now = stack.now();
        long retrans = Math.max(c.get(sysctl.retransTimeMs), 10) * 1_000_000L;
        long delayProbe = c.get(sysctl.delayFirstProbeTime) * 1_000_000_000L;
        long next = -1;
        switch (n.state) {
            case REACHABLE -> {
                if (now <= n.confirmed + n.reachableTimeNanos) {
                    next = n.confirmed + n.reachableTimeNanos - now;
                } else if (now <= n.used + delayProbe) {
                    setState(n, NudState.DELAY);
                    n.updated = now;
                    next = delayProbe;
                } else {
                    setState(n, NudState.STALE);
                    n.updated = now;
                }
            }
            case DELAY -> {
                if (now <= n.confirmed + delayProbe) {
                    setState(n, NudState.REACHABLE);
                    n.updated = now;
                    next = n.confirmed + n.reachableTimeNanos - now;
                } else {
                    setState(n, NudState.PROBE);
                    n.updated = now;
                    n.probes = 0;
                    next = retrans;
                }
            }
            case INCOMPLETE, PROBE -> next = retrans;
            default -> {
                return;
            }
        }
        if ((n.state == NudState.INCOMPLETE || n.state == NudState.PROBE) && n.probes >= maxProbes(n, c)) {
            setState(n, NudState.FAILED);
            n.updated = now;
            stack.mib().inc(Mib.NeighResolutionFailed);
            invalidate(n);
            return;
        }
        if (next >= 0) {
            arm(n, Math.max(next, 1));
        }
        if (n.state == NudState.INCOMPLETE || n.state == NudState.PROBE) {
            probe(n);
        }
    }

    /** neigh_invalidate: every queued packet is answered with ICMP host unreachable and dropped. */
    private void invalidate(Neighbour n) {
        Packet p;
        while ((p = n.arpQueue.pollFirst()) != null) {
            n.arpQueueBytes -= p.length() + TRUESIZE_OVERHEAD;
            ops.reportUnreachable(p);
            stack.drop(p, DropReason.NEIGH_FAILED);
        }
        n.arpQueueBytes = 0;
    }

    /**
     * neigh_update from a received solicitation or advertisement (ARP now): {@code reply} is a reply addressed to us (REACHABLE), otherwise
     * the entry becomes STALE. A different address replaces the known one only when {@code override}.
     */
    public void update(Neighbour n, long mac, boolean reply, boolean override) {
        NudState old = n.state;
        if (old == NudState.PERMANENT || old == NudState.NOARP) {
            return;
        }
        long now = stack.now();
        if (old.valid() && mac != n.mac && !override) {
            return;
        }
        NudState next = reply ? NudState.REACHABLE : NudState.STALE;
        if (!reply && old.valid() && mac == n.mac) {
            // Same address heard again in a request: nothing learned, state kept.
            return;
        }
        n.mac = mac;
        setState(n, next);
        n.updated = now;
        if (next == NudState.REACHABLE) {
            n.confirmed = now;
            DevConf c = stack.conf(n.dev);
            long base = c.get(sysctl.baseReachableTimeMs) * 1_000_000L;
            n.reachableTimeNanos = base / 2 + stack.randomBelow(Math.max(1, base));
            arm(n, n.reachableTimeNanos);
        } else if (n.timer != null) {
            n.timer.cancel();
            n.timer = null;
        }
        flushQueue(n);
    }

    /** Creates or refreshes the entry for a requester (neigh_event_ns), as STALE. */
    public Neighbour eventNs(Device dev, int ip, long mac) {
        return eventNs(dev, 0, v4(ip), mac);
    }

    /** {@link #eventNs(Device, int, long)} for the requester {@code hi}:{@code lo}. */
    public Neighbour eventNs(Device dev, long hi, long lo, long mac) {
        Neighbour n = lookup(dev, hi, lo);
        if (n == null) {
            n = create(dev, hi, lo, false);
            if (n == null) {
                return null;
            }
        }
        update(n, mac, false, true);
        return n;
    }

    private void flushQueue(Neighbour n) {
        Packet p;
        while (n.state.valid() && (p = n.arpQueue.pollFirst()) != null) {
            n.arpQueueBytes -= p.length() + TRUESIZE_OVERHEAD;
            EthernetFrame.write(p.buf(), p.start(), n.mac, n.dev.mac(), ethertype);
            n.dev.transmit(p);
        }
    }

    private void dropQueue(Neighbour n, DropReason r) {
        Packet p;
        while ((p = n.arpQueue.pollFirst()) != null) {
            stack.drop(p, r);
        }
        n.arpQueueBytes = 0;
    }
}
