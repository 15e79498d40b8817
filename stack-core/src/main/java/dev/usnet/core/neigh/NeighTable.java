package dev.usnet.core.neigh;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.MacAddr;
import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;

/**
 * The ARP cache of a namespace (arp_tbl): resolution with Linux's NUD state machine and default timers
 * (three broadcast solicitations one second apart, then FAILED and ICMP host unreachable for what was
 * queued), a byte-bounded queue per unresolved entry, permanent entries, garbage collection.
 */
public final class NeighTable {
    /** Stand-in for the kernel's per-skb truesize overhead when counting unres_qlen_bytes. */
    static final int TRUESIZE_OVERHEAD = 256;

    private final NetStack stack;
    // The shared empty table until the first entry (never changed: the first create replaces it). Guarded by this.
    private static final LongObjectHashMap<Neighbour> NONE = new LongObjectHashMap<>(1);
    private LongObjectHashMap<Neighbour> entries = NONE;

    public NeighTable(NetStack stack) {
        this.stack = stack;
    }

    private static long key(Device dev, int ip) {
        return ((long) dev.ifindex() << 32) | (ip & 0xffff_ffffL);
    }

    public Neighbour lookup(Device dev, int ip) {
        synchronized (this) {
            return entries.get(key(dev, ip));
        }
    }

    private Neighbour create(Device dev, int ip) {
        synchronized (this) {
            Neighbour n = entries.get(key(dev, ip));
            if (n != null) {
                return n;
            }
            int limit = (int) stack.knobs().getLong("net.ipv4.neigh.default.gc_thresh3");
            if (entries.size() >= limit) {
                forcedGc();
                if (entries.size() >= limit) {
                    stack.mib().inc(Mib.NeighTableOverflow);
                    return null;
                }
            }
            n = new Neighbour(dev, ip);
            if (entries == NONE) {
                entries = new LongObjectHashMap<>();
            }
            entries.put(key(dev, ip), n);
            return n;
        }
    }

    /** Drops entries that are neither permanent nor holding packets, oldest use first, down to half. */
    private void forcedGc() {
        List<Neighbour> victims = new ArrayList<>();
        for (Neighbour n : entries.values()) {
            if (n.state != NudState.PERMANENT && n.arpQueue.isEmpty()) {
                victims.add(n);
            }
        }
        victims.sort((a, b) -> Long.compare(a.used, b.used));
        int target = entries.size() / 2;
        for (Neighbour n : victims) {
            if (entries.size() <= target) {
                break;
            }
            remove(n);
        }
    }

    private void remove(Neighbour n) {
        entries.remove(key(n.dev, n.ip));
        if (n.timer != null) {
            n.timer.cancel();
        }
    }

    /** {@code ip neigh replace IP lladdr MAC dev DEV nud permanent}. */
    public void addPermanent(Device dev, int ip, long mac) {
        Neighbour n = create(dev, ip);
        if (n == null) {
            throw new IllegalStateException("neighbour table full (gc_thresh3)");
        }
        if (n.timer != null) {
            n.timer.cancel();
        }
        n.mac = mac;
        n.state = NudState.PERMANENT;
        n.updated = n.confirmed = stack.now();
        flushQueue(n);
    }

    /** {@code ip neigh del}. */
    public boolean delete(Device dev, int ip) {
        synchronized (this) {
            Neighbour n = entries.get(key(dev, ip));
            if (n == null) {
                return false;
            }
            remove(n);
            dropQueue(n, DropReason.NEIGH_DEAD);
            return true;
        }
    }

    public List<Neighbour> list() {
        synchronized (this) {
            List<Neighbour> l = new ArrayList<>(entries.values());
            l.sort((a, b) -> a.dev.ifindex() != b.dev.ifindex() ? Integer.compare(a.dev.ifindex(), b.dev.ifindex())
                    : Integer.compareUnsigned(a.ip, b.ip));
            return l;
        }
    }

    public void flushDevice(Device dev) {
        synchronized (this) {
            for (Neighbour n : new ArrayList<>(entries.values())) {
                if (n.dev == dev) {
                    remove(n);
                    dropQueue(n, DropReason.NEIGH_DEAD);
                }
            }
        }
    }

    public void close() {
        synchronized (this) {
            for (Neighbour n : new ArrayList<>(entries.values())) {
                remove(n);
                dropQueue(n, DropReason.NEIGH_DEAD);
            }
        }
    }

    /**
     * neigh_resolve_output: sends an IPv4 packet to {@code nextHop} on {@code dev}. The frame must start with
     * a 14-byte link-layer slot followed by the IP header; the slot is filled here.
     */
    public void output(Device dev, int nextHop, Packet p) {
        if (dev instanceof Loopback) {
            EthernetFrame.write(p.buf(), p.start(), 0L, 0L, EthernetFrame.ETH_P_IP);
            dev.transmit(p);
            return;
        }
        if (Ipv4Addr.isMulticast(nextHop) || stack.devinet().isBroadcastOn(dev, nextHop)) {
            // arp_constructor: broadcast and multicast next hops are NOARP, mapped without asking.
            long mac = Ipv4Addr.isMulticast(nextHop) ? 0x0100_5e00_0000L | (nextHop & 0x7f_ffff) : MacAddr.BROADCAST;
            EthernetFrame.write(p.buf(), p.start(), mac, dev.mac(), EthernetFrame.ETH_P_IP);
            dev.transmit(p);
            return;
        }
        Neighbour n = lookup(dev, nextHop);
        if (n == null) {
            n = create(dev, nextHop);
            if (n == null) {
                stack.drop(p, DropReason.NEIGH_FAILED);
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
                n.state = NudState.DELAY;
                arm(n, c.delayFirstProbeTimeS * 1_000_000_000L);
            }
            EthernetFrame.write(p.buf(), p.start(), n.mac, dev.mac(), EthernetFrame.ETH_P_IP);
            dev.transmit(p);
            return;
        }
        DevConf c = stack.conf(dev);
        if (s == NudState.NONE || s == NudState.FAILED) {
            if (c.mcastSolicit + c.appSolicit == 0) {
                n.state = NudState.FAILED;
                stack.drop(p, DropReason.NEIGH_FAILED);
                return;
            }
            n.state = NudState.INCOMPLETE;
            n.probes = c.ucastSolicit;
            n.updated = stack.now();
            enqueue(n, p, c);
            arm(n, Math.max(c.retransTimeMs, 10) * 1_000_000L);
            probe(n);
            return;
        }
        enqueue(n, p, c);
    }

    private void enqueue(Neighbour n, Packet p, DevConf c) {
        int size = p.length() + TRUESIZE_OVERHEAD;
        while (!n.arpQueue.isEmpty() && n.arpQueueBytes + size > c.unresQlenBytes) {
            Packet old = n.arpQueue.pollFirst();
            n.arpQueueBytes -= old.length() + TRUESIZE_OVERHEAD;
            stack.drop(old, DropReason.NEIGH_QUEUE_FULL);
        }
        if (size > c.unresQlenBytes) {
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
        boolean unicast = probes < c.ucastSolicit && n.state == NudState.PROBE;
        Packet last = n.arpQueue.peekLast();
        int saddr = 0;
        if (last != null) {
            int s = new Ipv4Packet().wrap(last.buf(), last.start() + EthernetFrame.HEADER_LEN).src();
            if (stack.devinet().isLocal(s) && stack.knobs().arpAnnounce(c) < 2) {
                saddr = s;
            }
        }
        if (saddr == 0) {
            saddr = stack.devinet().selectSource(n.dev, n.ip);
        }
        stack.arp().sendRequest(n.dev, saddr, n.ip, unicast ? n.mac : 0L);
    }

    private void arm(Neighbour n, long delayNanos) {
        if (n.timer != null) {
            n.timer.cancel();
        }
        n.timer = stack.schedule(() -> timer(n), delayNanos);
    }

    private int maxProbes(Neighbour n, DevConf c) {
        return c.ucastSolicit + c.appSolicit + (n.state == NudState.PROBE ? 0 : c.mcastSolicit);
    }

    /** neigh_timer_handler. */
    private void timer(Neighbour n) {
        n.timer = null;
        DevConf c = stack.conf(n.dev);
        long now = stack.now();
        long retrans = Math.max(c.retransTimeMs, 10) * 1_000_000L;
        long delayProbe = c.delayFirstProbeTimeS * 1_000_000_000L;
        long next = -1;
        switch (n.state) {
            case REACHABLE -> {
                if (now <= n.confirmed + n.reachableTimeNanos) {
                    next = n.confirmed + n.reachableTimeNanos - now;
                } else if (now <= n.used + delayProbe) {
                    n.state = NudState.DELAY;
                    n.updated = now;
                    next = delayProbe;
                } else {
                    n.state = NudState.STALE;
                    n.updated = now;
                }
            }
            case DELAY -> {
                if (now <= n.confirmed + delayProbe) {
                    n.state = NudState.REACHABLE;
                    n.updated = now;
                    next = n.confirmed + n.reachableTimeNanos - now;
                } else {
                    n.state = NudState.PROBE;
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
            n.state = NudState.FAILED;
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
            stack.icmp().sendHostUnreachableForQueued(p);
            stack.drop(p, DropReason.NEIGH_FAILED);
        }
        n.arpQueueBytes = 0;
    }

    /**
     * neigh_update from a received ARP packet: {@code reply} is a reply addressed to us (REACHABLE), otherwise
     * the entry becomes STALE. A different address replaces the known one only when {@code override}.
     */
    void update(Neighbour n, long mac, boolean reply, boolean override) {
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
        n.state = next;
        n.updated = now;
        if (next == NudState.REACHABLE) {
            n.confirmed = now;
            DevConf c = stack.conf(n.dev);
            long base = c.baseReachableTimeMs * 1_000_000L;
            n.reachableTimeNanos = base / 2 + stack.randomBelow(Math.max(1, base));
            arm(n, n.reachableTimeNanos);
        } else if (n.timer != null) {
            n.timer.cancel();
            n.timer = null;
        }
        flushQueue(n);
    }

    /** Creates or refreshes the entry for a requester (neigh_event_ns), as STALE. */
    Neighbour eventNs(Device dev, int ip, long mac) {
        Neighbour n = lookup(dev, ip);
        if (n == null) {
            n = create(dev, ip);
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
            EthernetFrame.write(p.buf(), p.start(), n.mac, n.dev.mac(), EthernetFrame.ETH_P_IP);
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
