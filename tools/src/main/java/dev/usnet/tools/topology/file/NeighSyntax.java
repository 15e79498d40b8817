package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.topology.file.TopologySpec.Neigh;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.Where;

/** A static neighbour as {@code ip neigh replace} takes it, from a namespace's {@code neighbours:}. */
public final class NeighSyntax {
    private NeighSyntax() {}

    /** {@code IP lladdr MAC dev DEV [nud permanent]}, the {@code ip neigh replace} arguments; IP of either family. */
    public static Neigh parse(String s, Where w, Problems problems) {
        String[] t = s.trim().split("\\s+");
        int i = 0;
        if (t[0].equals("to")) {
            i++;
        }
        if (i >= t.length) {
            problems.add(w, "expected \"IP lladdr MAC dev DEV\", got \"" + s + "\"");
            return null;
        }
        int ip = 0;
        Ipv6Addr ip6 = null;
        String addr = t[i++];
        try {
            if (addr.indexOf(':') >= 0) {
                ip6 = Ipv6Addr.parse(addr);
                if (ip6.isMulticast() || ip6.isUnspecified()) {
                    problems.add(w, "neighbour \"" + s + "\": " + addr + " is " + (ip6.isMulticast() ? "a multicast"
                            : "the unspecified") + " address; a neighbour entry is for one unicast address");
                    return null;
                }
            } else {
                ip = Ipv4Addr.parse(addr);
            }
        } catch (IllegalArgumentException e) {
            problems.add(w, "neighbour \"" + s + "\": " + e.getMessage());
            return null;
        }
        Long mac = null;
        String dev = null;
        while (i < t.length) {
            String key = t[i++];
            if (i >= t.length) {
                problems.add(w, "neighbour \"" + s + "\": '" + key + "' needs a value");
                return null;
            }
            String v = t[i++];
            switch (key) {
                case "lladdr" -> {
                    try {
                        mac = MacAddr.parse(v);
                    } catch (IllegalArgumentException e) {
                        problems.add(w, "neighbour \"" + s + "\": " + e.getMessage());
                        return null;
                    }
                }
                case "dev" -> dev = v;
                case "nud" -> {
                    if (!v.equals("permanent")) {
                        problems.add(w, "neighbour \"" + s + "\": only 'nud permanent' entries can be declared");
                        return null;
                    }
                }
                default -> {
                    problems.add(w, "neighbour \"" + s + "\": unknown keyword '" + key + "' (expected lladdr, dev, nud)");
                    return null;
                }
            }
        }
        if (mac == null || dev == null) {
            problems.add(w, "neighbour \"" + s + "\": needs both 'lladdr MAC' and 'dev DEV'");
            return null;
        }
        return new Neigh(ip, ip6, mac, dev, w);
    }
}
