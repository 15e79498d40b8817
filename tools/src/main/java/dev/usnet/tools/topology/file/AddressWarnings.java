package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.Problems;
import java.util.HashMap;
import java.util.Map;

/**
 * Addresses Linux accepts but a Linux user would want to hear about: {@code ip addr add} takes them without a word,
 * and the run then behaves in a way nobody meant.
 * <ul>
 * <li>One address with two prefix lengths on two devices of a namespace: two connected routes of different lengths
 *     for one address, so which device the namespace answers and sends from depends on the destination, not on
 *     where the address was meant to be.
 * <li>A subnet's network or broadcast address (the host part all zeros or all ones, for prefixes up to /30; /31 and
 *     /32 have no such addresses) given to a device: packets to a broadcast address are broadcasts to every host of
 *     the subnet, and a network address names the subnet, not a host.
 * </ul>
 * The IPv6 addresses are judged by {@link Ipv6AddressChecks}, which this check runs too.
 */
public final class AddressWarnings {
    private AddressWarnings() {}

    public static void check(TopologySpec spec, Problems p) {
        for (Ns ns : spec.namespaces()) {
            // address -> where it was first seen, by device, in this namespace
            record First(String device, Addr addr) {}
            Map<Integer, First> seen = new HashMap<>();
            for (DeviceSpec d : ns.devices()) {
                for (Addr a : d.link().addresses()) {
                    warnIfNetworkOrBroadcast(ns, d, a, p);
                    First f = seen.putIfAbsent(a.ip(), new First(d.link().name(), a));
                    if (f != null && !f.device().equals(d.link().name()) && f.addr().prefixLen() != a.prefixLen()) {
                        p.warn(a.where(), Ipv4Addr.format(a.ip()) + " is on " + ns.name() + "/" + d.link().name() + " as /"
                                + a.prefixLen() + " and on " + ns.name() + "/" + f.device() + " as /" + f.addr().prefixLen()
                                + " (line " + f.addr().where().line() + "): one address with two prefix lengths makes two"
                                + " connected routes of different lengths, so which device answers and sends for it depends"
                                + " on the destination; give it one prefix length, or one device");
                    }
                }
            }
        }
        Ipv6AddressChecks.check(spec, p);
    }

    private static void warnIfNetworkOrBroadcast(Ns ns, DeviceSpec d, Addr a, Problems p) {
        if (a.prefixLen() > 30) {
            return;
        }
        int mask = Ipv4Addr.mask(a.prefixLen());
        int host = a.ip() & ~mask;
        String subnet = Ipv4Addr.format(a.ip() & mask) + "/" + a.prefixLen();
        String what = host == 0 ? "the network address" : host == ~mask ? "the broadcast address" : null;
        if (what != null) {
            p.warn(a.where(), a.text() + " on " + ns.name() + "/" + d.link().name() + " is " + what + " of " + subnet
                    + (host == 0 ? ": Linux takes it, but it names the subnet, not a host (old stacks take it for a broadcast)"
                    : ": every host on the subnet takes packets to it as broadcasts, not as its own")
                    + "; give the device one of the subnet's host addresses");
        }
    }
}
