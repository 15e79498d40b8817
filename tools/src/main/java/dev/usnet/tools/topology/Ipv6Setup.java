package dev.usnet.tools.topology;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv6.Inet6Ifaddr.Origin;
import dev.usnet.core.ipv6.Ipv6Sysctl;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.iproute.Ip6RouteSyntax;
import dev.usnet.tools.iproute.Ipv6On;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.TopologySpec.Addr6;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Knob;
import dev.usnet.tools.topology.file.TopologySpec.Neigh;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Text;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The IPv6 part of building a topology. A usnet namespace starts with IPv6 off ({@code disable_ipv6} 1, so that
 * IPv4-only runs send nothing IPv6); one the file gives an IPv6 address, route or neighbour gets
 * {@code net.ipv6.conf.all.disable_ipv6} and {@code default.disable_ipv6} set to 0 before its links come up, as a
 * Linux namespace has them, unless the file sets them itself.
 */
final class Ipv6Setup {
    private Ipv6Setup() {}

    /** Whether the file gives namespace {@code ns} anything IPv6: an address, a route or a neighbour. */
    static boolean usesIpv6(Ns ns) {
        for (DeviceSpec d : ns.devices()) {
            if (!d.link().addresses6().isEmpty()) {
                return true;
            }
        }
        for (Text r : ns.routes()) {
            if (Ip6RouteSyntax.isIpv6(r.text())) {
                return true;
            }
        }
        for (Neigh n : ns.neighbours()) {
            if (n.ip6() != null) {
                return true;
            }
        }
        return false;
    }

    static String disableKey(String dev) {
        return Ipv6On.disableKey(dev);
    }

    /**
     * Turns IPv6 on where the file gives it and applies every namespace's {@code net.ipv6.conf.*} knobs (devices
     * exist by now; addresses and up come next). Returns the knobs applied here, which the knob phase then skips.
     */
    static Set<Knob> enable(TopologySpec spec, Map<String, NetNamespace> nss, Problems problems) {
        Set<Knob> applied = new HashSet<>();
        for (Ns ns : spec.namespaces()) {
            NetNamespace n = nss.get(ns.name());
            if (n == null) {
                continue;
            }
            NetStack s = n.stack();
            if (usesIpv6(ns)) {
                Set<String> setByFile = new HashSet<>();
                ns.knobs().forEach(k -> setByFile.add(k.key()));
                Ipv6On.turnOn(s, setByFile);
            }
            for (Knob k : ns.knobs()) {
                // Router advertisement knobs too: advertising starts when a link-local address becomes usable.
                if (k.key().startsWith(Ipv6Sysctl.CONF) || k.key().startsWith(Ipv6Sysctl.RA)) {
                    applied.add(k);
                    String dev = Knobs.deviceOf(k.key());
                    if (dev != null && !List.of("all", "default", "lo").contains(dev) && s.device(dev) == null) {
                        // The stack would keep the setting for a device that may come later; the file has no such device.
                        if (!problems.hasErrorAt(k.where()) && !problems.mayBeDropped(ns.name(), dev)) {
                            problems.add(k.where(), "knob names device " + dev + ", which namespace " + ns.name()
                                    + " does not have (has: " + String.join(", ", s.devices().stream().map(Device::name)
                                    .toList()) + ")");
                        }
                        continue;
                    }
                    try {
                        s.knobs().set(k.key(), k.value());
                    } catch (RuntimeException e) {
                        problems.add(k.where(), e.getMessage());
                    }
                }
            }
            // lo came up with the namespace, while IPv6 was still off: it gets ::1 now, as Linux gives it when
            // disable_ipv6 goes to 0 on a device that is up (the file's own knobs may have turned it on).
            Ipv6On.linksChanged(s);
        }
        return applied;
    }

    /** {@code ip -6 addr add ADDR/LEN dev DEV [nodad]} for each of {@code addrs}; what the stack refuses is reported. */
    static void addAddresses(NetStack s, Ns ns, Device dev, List<Addr6> addrs, Problems problems) {
        for (Addr6 a : addrs) {
            if (!s.ipv6().enabled(dev)) {
                problems.add(a.where(), "IPv6 is off on " + ns.name() + "/" + dev.name() + " (" + disableKey(dev.name())
                        + " = 1), so it takes no IPv6 address (Linux: Permission denied); leave the knob at 0");
                continue;
            }
            try {
                s.ipv6().addrconf().add(dev, a.ip(), a.prefixLen(), Origin.STATIC, a.nodad(), s.ipv6().runsDad(dev));
            } catch (RuntimeException e) {
                problems.add(a.where(), e.getMessage());
            }
        }
    }

    /** {@code ip -6 neigh replace IP lladdr MAC dev DEV nud permanent}: a permanent entry of the ND table. */
    static void addNeighbour(NetStack s, Neigh n) {
        Device dev = s.requireDevice(n.dev());
        s.ipv6().neigh().addPermanent(dev, n.ip6().hi(), n.ip6().lo(), n.mac());
    }
}
