package dev.usnet.core.bridge;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netns.Netns;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Loops of bridges joined by veth pairs. usnet's bridges run no spanning tree (as Linux's with {@code stp_state 0}),
 * so a broadcast that enters such a loop is flooded round it for ever; when a run's clock stalls on endless
 * broadcasts, this names the bridges and links to break. A loop is a cycle in the graph whose nodes are bridges and
 * whose edges are the veth pairs with both ends enslaved to bridges (two pairs between the same two bridges are a
 * loop; so is one pair with both ends on one bridge).
 */
public final class BridgeLoops {
    private BridgeLoops() {}

    /** One loop: its bridges ({@code ns/dev}) and the veth pairs that close it ({@code ns/dev-ns/dev}), in order. */
    public record Loop(List<String> bridges, List<String> links) {
        /** {@code bridges sw1/br0, sw2/br0 through sw1/l1-sw2/l1, sw2/l2-sw1/l2}. */
        public String describe() {
            return (bridges.size() == 1 ? "bridge " : "bridges ") + String.join(", ", bridges) + " through "
                    + String.join(", ", links);
        }
    }

    /** A loop among the bridges of {@code stacks}, or null when they form none. */
    public static Loop find(List<? extends Netns> stacks) {
        // Adjacency: per bridge, the veth ends on it whose peers are on a bridge too.
        Map<Bridge, List<VethEnd>> edges = new IdentityHashMap<>();
        List<Bridge> bridges = new ArrayList<>();
        for (Netns s : stacks) {
            for (Device d : s.devices()) {
                if (d instanceof Bridge b) {
                    bridges.add(b);
                    edges.putIfAbsent(b, new ArrayList<>());
                } else if (d instanceof VethEnd v && v.master() instanceof Bridge b && v.peer() != null
                        && v.peer().master() instanceof Bridge) {
                    edges.computeIfAbsent(b, k -> new ArrayList<>()).add(v);
                }
            }
        }
        // Depth-first search over bridges; an edge to a bridge already on the search path, other than back over the
        // very pair we came by, closes a loop.
        Map<Bridge, Integer> state = new IdentityHashMap<>();
        for (Bridge root : bridges) {
            if (state.containsKey(root)) {
                continue;
            }
            Loop l = search(root, edges, state);
            if (l != null) {
                return l;
            }
        }
        return null;
    }

    private record Frame(Bridge bridge, VethEnd via, int next) {}

    private static final int ON_PATH = 1;
    private static final int DONE = 2;

    private static Loop search(Bridge root, Map<Bridge, List<VethEnd>> edges, Map<Bridge, Integer> state) {
        Deque<Frame> path = new ArrayDeque<>();
        path.push(new Frame(root, null, 0));
        state.put(root, ON_PATH);
        while (!path.isEmpty()) {
            Frame f = path.pop();
            List<VethEnd> out = edges.getOrDefault(f.bridge, List.of());
            if (f.next >= out.size()) {
                state.put(f.bridge, DONE);
                continue;
            }
            path.push(new Frame(f.bridge, f.via, f.next + 1));
            VethEnd v = out.get(f.next);
            if (f.via != null && v == f.via.peer()) {
                continue;
            }
            Bridge to = (Bridge) v.peer().master();
            Integer st = state.get(to);
            if (st == null) {
                state.put(to, ON_PATH);
                path.push(new Frame(to, v, 0));
            } else if (st == ON_PATH) {
                return loop(path, v, to);
            }
        }
        return null;
    }

    /** The loop closed by {@code closing} back to {@code to}: the path's bridges from {@code to} on. */
    private static Loop loop(Deque<Frame> path, VethEnd closing, Bridge to) {
        List<Frame> frames = new ArrayList<>(path);
        java.util.Collections.reverse(frames);
        List<String> bridges = new ArrayList<>();
        List<String> links = new ArrayList<>();
        boolean in = false;
        for (Frame f : frames) {
            if (f.bridge == to) {
                in = true;
            } else if (in && f.via != null) {
                links.add(link(f.via));
            }
            if (in) {
                bridges.add(name(f.bridge));
            }
        }
        links.add(link(closing));
        return new Loop(bridges, links);
    }

    private static String link(VethEnd v) {
        return name(v) + "-" + name(v.peer());
    }

    private static String name(Device d) {
        Netns s = d.stack();
        return (s == null ? "?" : s.name()) + "/" + d.name();
    }
}
