package dev.usnet.tools.topology.file;

import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import java.util.HashMap;
import java.util.Map;

/**
 * The L2 segments of a file: devices ({@code ns/dev}) joined by a veth pair or by a bridge and its ports are on one
 * segment, whatever the address family. Union-find with path compression, so a bridge of thousands of ports is not a
 * chain as long as its port list.
 */
public final class Segments {
    private final Map<String, String> parent = new HashMap<>();

    private Segments() {}

    public static Segments of(TopologySpec spec) {
        Segments s = new Segments();
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Veth v && !v.peerSide()) {
                    s.union(ns.name() + "/" + v.link().name(), v.peerNamespace() + "/" + v.peer().name());
                } else if (d instanceof BridgeDev b) {
                    b.ports().forEach(r -> s.union(ns.name() + "/" + b.link().name(), ns.name() + "/" + r.name()));
                }
            }
        }
        return s;
    }

    /** The segment of device {@code nsDev} ({@code ns/dev}): the name of one of its devices, the same for all of them. */
    public String of(String nsDev) {
        String r = nsDev;
        while (parent.containsKey(r)) {
            r = parent.get(r);
        }
        String c = nsDev;
        while (!c.equals(r)) {
            String next = parent.get(c);
            parent.put(c, r);
            c = next;
        }
        return r;
    }

    private void union(String a, String b) {
        String ra = of(a);
        String rb = of(b);
        if (!ra.equals(rb)) {
            parent.put(rb, ra);
        }
    }
}
