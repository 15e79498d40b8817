package dev.usnet.ns;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.ipv4.IfAddr;
import dev.usnet.core.knob.NearestNames;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.pid.PidAllocator;
import dev.usnet.ns.pid.PidNamespace;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The namespaces of one usnet process, by name (what {@code ip netns} lists), with the operations that span
 * namespaces: veth pairs across them, moving devices, deleting a namespace with everything in it, and
 * rtnetlink-like dumps of another namespace's links and addresses by nsid without entering it.
 */
public final class NamespaceRegistry implements AutoCloseable {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private final Function<String, Scheduler> schedulers;
    private final long seed;
    private final Map<String, NetNamespace> byName = new LinkedHashMap<>();
    /** The namespace of each stack, so naming a veth peer's namespace in a dump does not walk every namespace. */
    private final Map<NetStack, NetNamespace> byStack = new java.util.IdentityHashMap<>();
    /** The pid namespaces of the processes every namespace here runs: one initial pid namespace, as on one host. */
    private final PidAllocator pids = new PidAllocator(PidNamespace.PID_MAX_DEFAULT);

    /** @param schedulers gives each new namespace the scheduler it runs on (virtual or real time) */
    public NamespaceRegistry(Function<String, Scheduler> schedulers, long seed) {
        this.schedulers = schedulers;
        this.seed = seed;
    }

    /** {@code ip netns add NAME}. */
    public synchronized NetNamespace create(String name) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid namespace name '" + name + "'");
        }
        if (byName.containsKey(name)) {
            throw new IllegalArgumentException("namespace " + name + " already exists");
        }
        NetStack stack = new NetStack(name, schedulers.apply(name), seed);
        // Every namespace speaks TCP, as every Linux netns does.
        dev.usnet.tcp.Tcp.install(stack);
        NetNamespace ns = new NetNamespace(name, stack, pids);
        byName.put(name, ns);
        byStack.put(stack, ns);
        return ns;
    }

    /** The initial pid namespace and its init, below which every namespace's processes run. */
    public PidAllocator pids() {
        return pids;
    }

    public synchronized NetNamespace get(String name) {
        NetNamespace ns = byName.get(name);
        if (ns == null) {
            throw new IllegalArgumentException("no namespace '" + name + "' (have: "
                    + NearestNames.listing(name, byName.keySet()) + ")");
        }
        return ns;
    }

    public synchronized List<NetNamespace> list() {
        return new ArrayList<>(byName.values());
    }

    /** The namespace owning {@code stack}, or null. */
    public synchronized NetNamespace of(NetStack stack) {
        return byStack.get(stack);
    }

    /**
     * {@code ip netns del NAME}: every device in it is destroyed, veth peers in other namespaces with them,
     * and the other namespaces forget the nsid they had for it.
     */
    public synchronized void delete(String name) {
        NetNamespace ns = get(name);
        byName.remove(name);
        byStack.remove(ns.stack());
        ns.stack().close();
        ns.markDead();
        // Only the namespaces that gave it an id have one to forget (not every namespace: deleting ten thousand
        // would be quadratic).
        for (NetNamespace other : ns.knownBy()) {
            other.forget(ns);
        }
    }

    /**
     * {@code ip link add A netns NSA type veth peer name B netns NSB}. Each end gets a locally administered
     * MAC derived from the names unless given.
     */
    public VethEnd[] createVeth(NetNamespace a, String nameA, NetNamespace b, String nameB) {
        VethEnd[] pair = VethEnd.createPair(a.stack(), nameA, macFor(a.name() + "/" + nameA), b.stack(), nameB,
                macFor(b.name() + "/" + nameB));
        if (a != b) {
            // Announcing the link names the peer namespace, which assigns its nsid on each side.
            a.nsidOf(b);
            b.nsidOf(a);
        }
        return pair;
    }

    /** A stable locally administered unicast MAC for a device name. */
    public static long macFor(String key) {
        long h = 1125899906842597L;
        for (int i = 0; i < key.length(); i++) {
            h = 31 * h + key.charAt(i);
        }
        return (0x02_00_00_00_00_00L | (h & 0x00_ff_ff_ff_ff_ffL)) & ~0x01_00_00_00_00_00L;
    }

    /**
     * {@code ip link set DEV netns TARGET}: the device leaves its namespace (its addresses, routes and
     * neighbours there are flushed, as Linux does), joins the target with a new ifindex there, and comes up
     * down.
     */
    public void moveDevice(Device dev, NetNamespace target) {
        NetStack from = dev.stack();
        if (from == null) {
            throw new IllegalArgumentException(dev.name() + " is not in any namespace");
        }
        if (from == target.stack()) {
            return;
        }
        if (target.stack().device(dev.name()) != null) {
            throw new IllegalArgumentException("a device named " + dev.name() + " already exists in " + target.name());
        }
        if (dev.master() != null) {
            throw new IllegalArgumentException(dev.name() + " is a bridge port; release it first (ip link set " + dev.name() + " nomaster)");
        }
        if (dev == from.loopback()) {
            throw new IllegalArgumentException("lo cannot move between namespaces");
        }
        from.unregister(dev);
        dev.setUp(false);
        target.stack().register(dev);
        NetNamespace src = of(from);
        if (dev instanceof VethEnd v && v.peer() != null && src != null) {
            NetNamespace peerNs = of(v.peer().stack());
            if (peerNs != null && peerNs != target) {
                target.nsidOf(peerNs);
                peerNs.nsidOf(target);
            }
        }
    }

    /** RTM_GETLINK dump of {@code target} as seen from {@code viewer} (what {@code ip -n TARGET link} prints). */
    public List<LinkInfo> links(NetNamespace viewer, NetNamespace target) {
        List<LinkInfo> l = new ArrayList<>();
        for (Device d : target.stack().devices()) {
            int peerIf = -1;
            int linkNsid = -1;
            if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() != null) {
                VethEnd p = v.peer();
                peerIf = p.ifindex();
                if (p.stack() != target.stack()) {
                    NetNamespace pns = of(p.stack());
                    // The nsid is the viewer's name for the peer's namespace (IFLA_LINK_NETNSID is relative to the asker).
                    linkNsid = pns == null ? -1 : pns == viewer ? viewer.nsidOf(viewer) : viewer.nsidOf(pns);
                }
            }
            l.add(new LinkInfo(d.ifindex(), d.name(), d.kind(), d.mac(), d.mtu(), d.isUp(), d.hasCarrier(),
                    d.master() == null ? null : d.master().name(), peerIf, linkNsid, d.stats().rxPackets,
                    d.stats().txPackets));
        }
        l.sort((x, y) -> Integer.compare(x.ifindex(), y.ifindex()));
        return l;
    }

    /**
     * RTM_GETLINK with IFLA_TARGET_NETNSID: the links of the namespace that {@code viewer} calls {@code nsid},
     * without entering it.
     */
    public List<LinkInfo> linksByNsid(NetNamespace viewer, int nsid) {
        return links(viewer, resolve(viewer, nsid));
    }

    /** RTM_GETADDR with IFA_TARGET_NETNSID (the IFA_IF_NETNSID point): addresses in a peer by its nsid. */
    public List<AddrInfo> addressesByNsid(NetNamespace viewer, int nsid) {
        return addresses(resolve(viewer, nsid));
    }

    /** RTM_GETADDR dump of {@code target} (entering it, or asking from inside). */
    public static List<AddrInfo> addresses(NetNamespace target) {
        List<AddrInfo> l = new ArrayList<>();
        for (IfAddr a : target.stack().devinet().list()) {
            l.add(new AddrInfo(a.dev().ifindex(), a.dev().name(), Ipv4Addr.format(a.address()) + "/" + a.prefixLen(),
                    a.broadcast() == 0 ? null : Ipv4Addr.format(a.broadcast())));
        }
        l.sort((x, y) -> x.ifindex() != y.ifindex() ? Integer.compare(x.ifindex(), y.ifindex()) : x.cidr().compareTo(y.cidr()));
        return l;
    }

    private static NetNamespace resolve(NetNamespace viewer, int nsid) {
        NetNamespace t = viewer.byNsid(nsid);
        if (t == null) {
            throw new IllegalArgumentException("no namespace with nsid " + nsid + " as seen from " + viewer.name()
                    + " (RTNETLINK: Invalid argument)");
        }
        return t;
    }

    /** Deletes every namespace. */
    @Override
    public synchronized void close() {
        for (String n : new ArrayList<>(byName.keySet())) {
            delete(n);
        }
    }
}
