package dev.usnet.tools.topology;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.CpuModelSysctl;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.App;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.TcpApp;
import dev.usnet.tools.topology.file.TopologySpec.TcpBurst;
import dev.usnet.tools.topology.file.TopologySpec.TcpStream;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The TCP apps that leave virtual time no way forward. In virtual time nothing takes time unless something says so:
 * a link's netem rate (serialisation) or delay, or a namespace's CPU model (usnet.cpu.model). A TCP flow between
 * namespaces joined only by links with neither, through namespaces without the CPU model, sends a segment, gets its
 * ACK and sends the next at one and the same instant, for ever: the clock never moves. Bulk streams, request/response
 * and bursts without compute time do; an application-limited stream ({@code interval:}) and bursts that compute wait
 * on a timer between their exchanges, which moves the clock.
 */
public final class VirtualClockStalls {
    private VirtualClockStalls() {}

    /** A TCP app whose path cannot move the clock: its results name, client and server, and where it is declared. */
    public record Stuck(String app, String client, String server, Where where) {
        /** {@code sa0.stream-0 (sa0 -> sb0)}. */
        public String describe() {
            return app + " (" + client + " -> " + server + ")";
        }
    }

    /** What to do about it, for a warning or an error. */
    public static final String FIX = "give a link on its way a rate or a delay (netem: {rate: 1gbit} on the device, or"
            + " --set NS:usnet.netem.DEV.rate=1gbit), or turn on the CPU model (usnet.cpu.model: 1 in the namespaces'"
            + " knobs, or --set usnet.cpu.model=1)";

    /**
     * The apps of {@code spec} whose traffic cannot advance the virtual clock, judged on the built topology
     * ({@code stacks} gives each namespace's stack, null for one not built): the shortest chain of veth links from
     * the client's namespace to the server's, and whether any link end on it emulates a rate or a delay, or any
     * namespace on it runs the CPU model.
     */
    public static List<Stuck> find(TopologySpec spec, Function<String, NetStack> stacks) {
        List<Stuck> out = new ArrayList<>();
        // One search per server, not per app: 10 000 clients of one server searched from each client made the
        // check quadratic (every search crossed the bridge namespace's 10 000 ports).
        Map<NetStack, Map<NetStack, NetStack>> treeOf = new HashMap<>();
        for (Ns ns : spec.namespaces()) {
            Map<String, Integer> perKind = new HashMap<>();
            for (App a : ns.apps()) {
                String kind = a.kind();
                int i = perKind.merge(kind, 1, Integer::sum) - 1;
                if (!(a instanceof TcpApp t) || !spinsAtOneInstant(t)) {
                    continue;
                }
                NetStack client = stacks.apply(ns.name());
                NetStack server = stacks.apply(t.common().server());
                if (client == null || server == null || client == server) {
                    continue;
                }
                List<NetStack> chain = chain(treeOf.computeIfAbsent(server, VirtualClockStalls::tree), client, server);
                if (chain != null && !advances(chain)) {
                    out.add(new Stuck(ns.name() + "." + kind + "-" + i, ns.name(), t.common().server(), a.where()));
                }
            }
        }
        return out;
    }

    /** Whether the app goes on exchanging data without waiting on a timer of its own. */
    private static boolean spinsAtOneInstant(TcpApp t) {
        return switch (t) {
            case TcpStream s -> s.intervalNanos() == 0;
            case TcpBurst b -> b.computeNanos() == 0;
            default -> true;
        };
    }

    /**
     * The namespaces reachable from {@code root} along veth links, each mapped to its neighbour one hop nearer the
     * root on a shortest way there (the root to itself).
     */
    private static Map<NetStack, NetStack> tree(NetStack root) {
        Map<NetStack, NetStack> parent = new HashMap<>();
        parent.put(root, root);
        ArrayDeque<NetStack> q = new ArrayDeque<>();
        q.add(root);
        while (!q.isEmpty()) {
            NetStack s = q.poll();
            for (Device d : s.devices()) {
                if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() != null
                        && parent.putIfAbsent(v.peer().stack(), s) == null) {
                    q.add(v.peer().stack());
                }
            }
        }
        return parent;
    }

    /**
     * The namespaces from {@code from} to {@code to} along veth links, fewest hops first, from {@code to}'s
     * {@link #tree}; null when unconnected.
     */
    private static List<NetStack> chain(Map<NetStack, NetStack> treeOfTo, NetStack from, NetStack to) {
        if (!treeOfTo.containsKey(from)) {
            return null;
        }
        List<NetStack> path = new ArrayList<>();
        for (NetStack x = from; x != to; x = treeOfTo.get(x)) {
            path.add(x);
        }
        path.add(to);
        return path;
    }

    /** Whether anything on the chain takes time: a namespace's CPU model, or a rate or delay on a link between two. */
    private static boolean advances(List<NetStack> chain) {
        for (int k = 0; k < chain.size(); k++) {
            NetStack s = chain.get(k);
            if (s.knobs().get(CpuModelSysctl.MODEL) != 0) {
                return true;
            }
            if (k + 1 == chain.size()) {
                break;
            }
            NetStack next = chain.get(k + 1);
            // The links between the two, seen from the end with fewer devices (not a bridge's thousands of ports).
            NetStack near = s.deviceCount() <= next.deviceCount() ? s : next;
            NetStack far = near == s ? next : s;
            for (Device d : near.devices()) {
                if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() == far
                        && (takesTime(v.netemParams()) || takesTime(v.peer().netemParams()))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean takesTime(NetemParams p) {
        return p.rateBitsPerSecond() > 0 || p.delayNanos() > 0;
    }
}
