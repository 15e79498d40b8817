package dev.usnet.tools.topology;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.TopologySpec.App;
import dev.usnet.tools.topology.TopologySpec.Ns;
import dev.usnet.tools.topology.TopologySpec.TcpApp;
import dev.usnet.tools.topology.TopologySpec.TcpBurst;
import dev.usnet.tools.topology.TopologySpec.TcpStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
final class VirtualClockStalls {
    private VirtualClockStalls() {}

    /** A TCP app whose path cannot move the clock: its results name, client and server, and where it is declared. */
    record Stuck(String app, String client, String server, Where where) {
        /** {@code sa0.stream-0 (sa0 -> sb0)}. */
        String describe() {
            return app + " (" + client + " -> " + server + ")";
        }
    }

    /** What to do about it, for a warning or an error. */
    static final String FIX = "give a link on its way a rate or a delay (netem: {rate: 1gbit} on the device, or"
            + " --set NS:usnet.netem.DEV.rate=1gbit), or turn on the CPU model (usnet.cpu.model: 1 in the namespaces'"
            + " knobs, or --set usnet.cpu.model=1)";

    /**
     * The apps of {@code spec} whose traffic cannot advance the virtual clock, judged on the built topology
     * ({@code stacks} gives each namespace's stack, null for one not built): the shortest chain of veth links from
     * the client's namespace to the server's, and whether any link end on it emulates a rate or a delay, or any
     * namespace on it runs the CPU model.
     */
    static List<Stuck> find(TopologySpec spec, Function<String, NetStack> stacks) {
        List<Stuck> out = new ArrayList<>();
        for (Ns ns : spec.namespaces()) {
            Map<String, Integer> perKind = new HashMap<>();
            for (App a : ns.apps()) {
                String kind = kind(a);
                int i = perKind.merge(kind, 1, Integer::sum) - 1;
                if (!(a instanceof TcpApp t) || !spinsAtOneInstant(t)) {
                    continue;
                }
                NetStack client = stacks.apply(ns.name());
                NetStack server = stacks.apply(t.common().server());
                if (client == null || server == null || client == server) {
                    continue;
                }
                // Every way out of the client (or into the server) takes time: so does the chain, without a search
                // that with thousands of clients on one bridge would visit every port once per client.
                if (everyLinkTakesTime(client) || everyLinkTakesTime(server)) {
                    continue;
                }
                List<NetStack> chain = chain(client, server);
                if (chain != null && !advances(chain)) {
                    out.add(new Stuck(ns.name() + "." + kind + "-" + i, ns.name(), t.common().server(), a.where()));
                }
            }
        }
        return out;
    }

    /** The app's kind as its results name has it. */
    private static String kind(App a) {
        return switch (a) {
            case TopologySpec.Ping p -> "ping";
            case TopologySpec.UdpSend u -> "udp-send";
            case TopologySpec.UdpSink u -> "udp-sink";
            case TopologySpec.Spawn s -> "spawn";
            case TopologySpec.Mpi m -> "mpi";
            case TcpApp t -> t.kind();
        };
    }

    /** Whether the app goes on exchanging data without waiting on a timer of its own. */
    private static boolean spinsAtOneInstant(TcpApp t) {
        return switch (t) {
            case TcpStream s -> s.intervalNanos() == 0;
            case TcpBurst b -> b.computeNanos() == 0;
            default -> true;
        };
    }

    /** The namespaces from {@code from} to {@code to} along veth links, fewest hops first; null when unconnected. */
    private static List<NetStack> chain(NetStack from, NetStack to) {
        Map<NetStack, NetStack> parent = new LinkedHashMap<>();
        parent.put(from, from);
        ArrayDeque<NetStack> q = new ArrayDeque<>();
        q.add(from);
        while (!q.isEmpty()) {
            NetStack s = q.poll();
            if (s == to) {
                List<NetStack> path = new ArrayList<>();
                for (NetStack x = to; x != from; x = parent.get(x)) {
                    path.addFirst(x);
                }
                path.addFirst(from);
                return path;
            }
            for (Device d : s.devices()) {
                if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() != null
                        && parent.putIfAbsent(v.peer().stack(), s) == null) {
                    q.add(v.peer().stack());
                }
            }
        }
        return null;
    }

    /** Whether anything on the chain takes time: a namespace's CPU model, or a rate or delay on a link between two. */
    private static boolean advances(List<NetStack> chain) {
        for (int k = 0; k < chain.size(); k++) {
            NetStack s = chain.get(k);
            if (s.knobs().cpuModel()) {
                return true;
            }
            if (k + 1 == chain.size()) {
                break;
            }
            NetStack next = chain.get(k + 1);
            for (Device d : s.devices()) {
                if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() == next
                        && (takesTime(v.netemParams()) || takesTime(v.peer().netemParams()))) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether {@code s} has veth links and each has a rate or a delay at one of its ends. */
    private static boolean everyLinkTakesTime(NetStack s) {
        boolean any = false;
        for (Device d : s.devices()) {
            if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() != null) {
                if (!takesTime(v.netemParams()) && !takesTime(v.peer().netemParams())) {
                    return false;
                }
                any = true;
            }
        }
        return any;
    }

    private static boolean takesTime(NetemParams p) {
        return p.rateBitsPerSecond() > 0 || p.delayNanos() > 0;
    }
}
