package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr6;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;

/**
 * Host addresses Linux accepts but a Linux user would want to hear about, where the host part of a prefix means
 * something else in one family: {@code ip addr add} takes them without a word, and the run then behaves in a way nobody
 * meant.
 * <ul>
 * <li>IPv4: a subnet's network or broadcast address (the host part all zeros or all ones, for prefixes up to /30; /31
 *     and /32 have no such addresses) given to a device: packets to a broadcast address are broadcasts to every host
 *     of the subnet, and a network address names the subnet, not a host.
 * <li>IPv6: the all-zeros host part of a prefix, the subnet-router anycast address (RFC 4291 §2.6.1) that every
 *     forwarding router of the link answers for.
 * </ul>
 * What both families share (an address twice on a link, two prefix lengths, veth ends sharing no prefix, overlapping
 * prefixes) is {@link AddressChecks}'.
 */
public final class AddressWarnings {
    private AddressWarnings() {}

    public static void check(TopologySpec spec, Problems p) {
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                String dev = ns.name() + "/" + d.link().name();
                for (Addr a : d.link().addresses()) {
                    warnIfNetworkOrBroadcast(dev, a, p);
                }
                for (Addr6 a : d.link().addresses6()) {
                    warnIfSubnetRouterAnycast(dev, a, p);
                }
            }
        }
    }

    private static void warnIfNetworkOrBroadcast(String dev, Addr a, Problems p) {
        if (a.prefixLen() > 30) {
            return;
        }
        int mask = Ipv4Addr.mask(a.prefixLen());
        int host = a.ip() & ~mask;
        String subnet = Ipv4Addr.format(a.ip() & mask) + "/" + a.prefixLen();
        String what = host == 0 ? "the network address" : host == ~mask ? "the broadcast address" : null;
        if (what != null) {
            p.warn(a.where(), a.text() + " on " + dev + " is " + what + " of " + subnet
                    + (host == 0 ? ": Linux takes it, but it names the subnet, not a host (old stacks take it for a broadcast)"
                    : ": every host on the subnet takes packets to it as broadcasts, not as its own")
                    + "; give the device one of the subnet's host addresses");
        }
    }

    private static void warnIfSubnetRouterAnycast(String dev, Addr6 a, Problems p) {
        if (a.prefixLen() >= 127 || a.ip().isLinkLocal() || !a.ip().prefix(a.prefixLen()).equals(a.ip())) {
            return;
        }
        p.warn(a.where(), a.text() + " on " + dev + " is the subnet-router anycast address of " + a.ip() + "/" + a.prefixLen()
                + " (its host part is all zeros): a forwarding Linux answers for it on every router of the link; give the"
                + " device one of the prefix's host addresses");
    }
}
