package dev.usnet.ns;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.PidAllocator;
import dev.usnet.ns.pid.PidModel;
import dev.usnet.ns.pid.PidNsChain;
import dev.usnet.ns.pid.PidNsKnobs;
import io.netty.util.collection.IntObjectHashMap;
import java.util.BitSet;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/**
 * A named network namespace (struct net with its /var/run/netns name): its stack, plus the ids it has given
 * other namespaces (nsids). An nsid is local to the namespace that assigned it: the id of B as seen from A
 * says nothing about the id of A as seen from B, and is assigned on first use, lowest free number first.
 */
public final class NetNamespace {
    private final String name;
    private final NetStack stack;
    private final Map<NetNamespace, Integer> nsids = new IdentityHashMap<>(2);
    /** The ids in {@link #nsids}, so the lowest free one is found without walking thousands of entries (idr_alloc). */
    private final BitSet usedNsids = new BitSet();
    /** The namespace behind each id (netns_ids: idr_find), so a query by nsid does not walk every peer. */
    private final IntObjectHashMap<NetNamespace> byId = new IntObjectHashMap<>();
    /** The namespaces that have an nsid for this one: only they need to forget it when it goes. */
    private final Set<NetNamespace> knownBy = Collections.newSetFromMap(new IdentityHashMap<>(2));
    private volatile boolean alive = true;
    private final PidAllocator pids;
    /** The pid namespaces its processes run in, made by the first process ({@link #processes}). */
    private PidNsChain processes;

    NetNamespace(String name, NetStack stack, PidAllocator pids) {
        this.name = name;
        this.stack = stack;
        this.pids = pids;
    }

    public String name() {
        return name;
    }

    public NetStack stack() {
        return stack;
    }

    public boolean isAlive() {
        return alive;
    }

    /**
     * The pid namespaces this namespace's processes (its apps) run in, created on first use from its knobs then:
     * {@code usnet.pidns.model}, {@code usnet.pidns.depth}, {@code kernel.pid_max}. Later changes to those knobs do not
     * rebuild it.
     */
    public synchronized PidNsChain processes() throws PidAllocException {
        if (!alive) {
            throw new IllegalStateException("namespace " + name + " no longer exists");
        }
        if (processes == null) {
            processes = PidNsChain.create(pids, name, stack.knobs().get(PidNsKnobs.MODEL),
                    (int) stack.knobs().get(PidNsKnobs.DEPTH), (int) stack.knobs().get(PidNsKnobs.PID_MAX));
        }
        return processes;
    }

    /** Its processes' pid namespaces if a process was ever started, else null. */
    public synchronized PidNsChain processesIfStarted() {
        return processes;
    }

    void markDead() {
        synchronized (this) {
            if (processes != null) {
                processes.shutdown();
            }
        }
        alive = false;
        synchronized (nsids) {
            nsids.clear();
            usedNsids.clear();
            byId.clear();
        }
    }

    /** The namespaces that have assigned this one an nsid (and must forget it when it is deleted). */
    List<NetNamespace> knownBy() {
        synchronized (knownBy) {
            return List.copyOf(knownBy);
        }
    }

    private void assign(NetNamespace peer, int id) {
        nsids.put(peer, id);
        usedNsids.set(id);
        byId.put(spread(id), peer);
        synchronized (peer.knownBy) {
            peer.knownBy.add(this);
        }
    }

    /** peernet2id_alloc: the id this namespace uses for {@code peer}, assigned now if it has none. */
    public int nsidOf(NetNamespace peer) {
        if (!peer.alive) {
            throw new IllegalArgumentException("namespace " + peer.name + " no longer exists");
        }
        synchronized (nsids) {
            Integer id = nsids.get(peer);
            if (id != null) {
                return id;
            }
            int next = usedNsids.nextClearBit(0);
            assign(peer, next);
            return next;
        }
    }

    /** peernet2id: the id of {@code peer} here if one was assigned, without assigning. */
    public OptionalInt peekNsid(NetNamespace peer) {
        synchronized (nsids) {
            Integer id = nsids.get(peer);
            return id == null ? OptionalInt.empty() : OptionalInt.of(id);
        }
    }

    /** {@code ip netns set PEER ID}: assigns an explicit id; fails if taken by another namespace. */
    public void setNsid(NetNamespace peer, int id) {
        if (id < 0) {
            throw new IllegalArgumentException("nsid must be >= 0");
        }
        synchronized (nsids) {
            NetNamespace holder = byId.get(spread(id));
            if (holder != null && holder != peer) {
                throw new IllegalArgumentException("nsid " + id + " is already used in " + name + " for " + holder.name);
            }
            Integer old = nsids.get(peer);
            if (old != null && old != id) {
                throw new IllegalArgumentException(peer.name + " already has nsid " + old + " in " + name);
            }
            assign(peer, id);
        }
    }

    /** get_net_ns_by_id: the namespace this one calls {@code nsid}, or null. */
    public NetNamespace byNsid(int nsid) {
        synchronized (nsids) {
            NetNamespace n = byId.get(spread(nsid));
            return n != null && n.alive ? n : null;
        }
    }


    void forget(NetNamespace dead) {
        synchronized (nsids) {
            Integer id = nsids.remove(dead);
            if (id != null) {
                usedNsids.clear(id);
                byId.remove(spread(id));
            }
        }
    }

    @Override
    public String toString() {
        return "netns " + name;
    }
}
