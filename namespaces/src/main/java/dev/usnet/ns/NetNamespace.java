package dev.usnet.ns;

import dev.usnet.core.stack.NetStack;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.OptionalInt;

/**
 * A named network namespace (struct net with its /var/run/netns name): its stack, plus the ids it has given
 * other namespaces (nsids). An nsid is local to the namespace that assigned it: the id of B as seen from A
 * says nothing about the id of A as seen from B, and is assigned on first use, lowest free number first.
 */
public final class NetNamespace {
    private final String name;
    private final NetStack stack;
    private final Map<NetNamespace, Integer> nsids = new IdentityHashMap<>();
    private volatile boolean alive = true;

    NetNamespace(String name, NetStack stack) {
        this.name = name;
        this.stack = stack;
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

    void markDead() {
        alive = false;
        synchronized (nsids) {
            nsids.clear();
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
            int next = 0;
            while (nsids.containsValue(next)) {
                next++;
            }
            nsids.put(peer, next);
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
            for (var e : nsids.entrySet()) {
                if (e.getValue() == id && e.getKey() != peer) {
                    throw new IllegalArgumentException("nsid " + id + " is already used in " + name + " for " + e.getKey().name);
                }
            }
            Integer old = nsids.get(peer);
            if (old != null && old != id) {
                throw new IllegalArgumentException(peer.name + " already has nsid " + old + " in " + name);
            }
            nsids.put(peer, id);
        }
    }

    /** get_net_ns_by_id: the namespace this one calls {@code nsid}, or null. */
    public NetNamespace byNsid(int nsid) {
        synchronized (nsids) {
            for (var e : nsids.entrySet()) {
                if (e.getValue() == nsid) {
                    return e.getKey().alive ? e.getKey() : null;
                }
            }
        }
        return null;
    }

    void forget(NetNamespace dead) {
        synchronized (nsids) {
            nsids.remove(dead);
        }
    }

    @Override
    public String toString() {
        return "netns " + name;
    }
}
