package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr6;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Loopback;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The file's IPv6 addresses judged as its IPv4 ones are:
 * <ul>
 * <li>an address twice on one L2 segment (veth pairs, bridges with their ports) is an error: both ends would answer
 *     neighbour solicitations for it, and duplicate address detection would leave one of them dead ({@code
 *     dadfailed});
 * <li>one address with two prefix lengths on two devices of a namespace, and prefixes of one namespace that overlap
 *     on devices of different segments: two connected routes cover the same destinations, so which device a packet
 *     leaves by depends on the lengths, not on where the hosts are (warnings);
 * <li>the all-zeros host part of a prefix given to a device, the subnet-router anycast address (RFC 4291 §2.6.1)
 *     routers answer for (a warning);
 * <li>veth ends that both have global IPv6 addresses but share no prefix (a warning: only their link-local
 *     addresses reach each other).
 * </ul>
 */
public final class Ipv6AddressChecks {
    private Ipv6AddressChecks() {}

    /** An address where it was declared: on {@code device} ({@code ns/dev}). */
    private record Placed(String device, Addr6 addr) {}

    public static void check(TopologySpec spec, Problems p) {
        Map<String, String> parent = new HashMap<>();
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Veth v && !v.peerSide()) {
                    union(parent, ns.name() + "/" + v.link().name(), v.peerNamespace() + "/" + v.peer().name());
                    warnIfNoCommonPrefix(ns, v, p);
                } else if (d instanceof BridgeDev b) {
                    b.ports().forEach(r -> union(parent, ns.name() + "/" + b.link().name(), ns.name() + "/" + r.name()));
                }
            }
        }
        Map<String, Placed> onSegment = new HashMap<>();
        for (Ns ns : spec.namespaces()) {
            Map<Ipv6Addr, Placed> inNs = new HashMap<>();
            List<Placed> prefixes = new ArrayList<>();
            for (DeviceSpec d : ns.devices()) {
                String dev = ns.name() + "/" + d.link().name();
                for (Addr6 a : d.link().addresses6()) {
                    Placed here = new Placed(dev, a);
                    warnIfSubnetRouterAnycast(dev, a, p);
                    if (!(d instanceof Loopback)) {
                        Placed first = onSegment.putIfAbsent(find(parent, dev) + " " + a.ip(), here);
                        if (first != null && !first.device().equals(dev)) {
                            p.add(a.where(), a.ip() + " is already the address of " + first.device() + " (line "
                                    + first.addr().where().line() + ") on the same link; two ends of one segment cannot share"
                                    + " an address (both would answer neighbour solicitations for it, and duplicate address"
                                    + " detection would take it from one)");
                        }
                    }
                    Placed same = inNs.putIfAbsent(a.ip(), here);
                    if (same != null && !same.device().equals(dev) && same.addr().prefixLen() != a.prefixLen()) {
                        p.warn(a.where(), a.ip() + " is on " + dev + " as /" + a.prefixLen() + " and on " + same.device()
                                + " as /" + same.addr().prefixLen() + " (line " + same.addr().where().line() + "): one address"
                                + " with two prefix lengths makes two connected routes of different lengths; give it one"
                                + " prefix length, or one device");
                    }
                    if (!(d instanceof Loopback) && !a.ip().isLinkLocal() && a.prefixLen() < 128) {
                        prefixes.add(here);
                    }
                }
            }
            warnIfOverlapping(parent, prefixes, p);
        }
    }

    /**
     * Prefixes of one namespace (in file order) that overlap one on a device of another segment. Sorted by address,
     * a covering prefix before what it covers, the prefixes nest like intervals: a stack of the open ones finds each
     * prefix's enclosing ones in one pass, so a namespace with thousands of devices is not compared pairwise. The
     * warning goes to the later of the two in the file.
     */
    private static void warnIfOverlapping(Map<String, String> parent, List<Placed> inFileOrder, Problems p) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < inFileOrder.size(); i++) {
            order.add(i);
        }
        order.sort((x, y) -> {
            Addr6 a = inFileOrder.get(x).addr();
            Addr6 b = inFileOrder.get(y).addr();
            int c = a.ip().prefix(Math.min(a.prefixLen(), b.prefixLen())).compareTo(b.ip().prefix(Math.min(a.prefixLen(),
                    b.prefixLen())));
            return c != 0 ? c : a.prefixLen() != b.prefixLen() ? Integer.compare(a.prefixLen(), b.prefixLen())
                    : Integer.compare(x, y);
        });
        java.util.ArrayDeque<Integer> open = new java.util.ArrayDeque<>();
        java.util.Set<Integer> warned = new java.util.HashSet<>();
        for (int i : order) {
            Placed here = inFileOrder.get(i);
            while (!open.isEmpty() && !covers(inFileOrder.get(open.peek()).addr(), here.addr())) {
                open.pop();
            }
            for (int o : open) {
                Placed other = inFileOrder.get(o);
                if (other.device().equals(here.device())
                        || find(parent, other.device()).equals(find(parent, here.device()))) {
                    continue;
                }
                int later = Math.max(i, o);
                if (warned.add(later)) {
                    warnOverlap(inFileOrder.get(later), inFileOrder.get(Math.min(i, o)), p);
                }
                break;
            }
            open.push(i);
        }
    }

    /** Whether prefix {@code outer} covers (or equals) {@code inner}'s. */
    private static boolean covers(Addr6 outer, Addr6 inner) {
        return outer.prefixLen() <= inner.prefixLen()
                && outer.ip().prefix(outer.prefixLen()).equals(inner.ip().prefix(outer.prefixLen()));
    }

    private static void warnOverlap(Placed here, Placed first, Problems p) {
        Addr6 a = here.addr();
        Addr6 b = first.addr();
        String pa = a.ip().prefix(a.prefixLen()) + "/" + a.prefixLen();
        String pb = b.ip().prefix(b.prefixLen()) + "/" + b.prefixLen();
        p.warn(a.where(), "prefix " + pa + " of " + here.device() + (pa.equals(pb) ? " is also on " : " overlaps " + pb
                + " of ") + first.device() + " (line " + b.where().line() + "), a device on another link: packets to "
                + (a.prefixLen() >= b.prefixLen() ? pa : pb) + " leave by one of them only; give each link its own prefix");
    }

    private static void warnIfSubnetRouterAnycast(String dev, Addr6 a, Problems p) {
        if (a.prefixLen() >= 127 || a.ip().isLinkLocal() || !a.ip().prefix(a.prefixLen()).equals(a.ip())) {
            return;
        }
        p.warn(a.where(), a.text() + " on " + dev + " is the subnet-router anycast address of " + a.ip() + "/" + a.prefixLen()
                + " (its host part is all zeros): a forwarding Linux answers for it on every router of the link; give the"
                + " device one of the prefix's host addresses");
    }

    private static void warnIfNoCommonPrefix(Ns ns, Veth v, Problems p) {
        List<Addr6> mine = global(v.link().addresses6());
        List<Addr6> theirs = global(v.peer().addresses6());
        if (mine.isEmpty() || theirs.isEmpty()) {
            return;
        }
        for (Addr6 a : mine) {
            for (Addr6 b : theirs) {
                int len = Math.min(a.prefixLen(), b.prefixLen());
                if (a.ip().prefix(len).equals(b.ip().prefix(len))) {
                    return;
                }
            }
        }
        p.warn(v.link().where().child("addresses"), "veth " + ns.name() + "/" + v.link().name() + " ("
                + String.join(", ", mine.stream().map(Addr6::text).toList()) + ") and its peer " + v.peerNamespace() + "/"
                + v.peer().name() + " (" + String.join(", ", theirs.stream().map(Addr6::text).toList())
                + ") share no IPv6 prefix: only their link-local addresses reach each other without a route");
    }

    /** The addresses below /128 that are not link-local: the ones that make a prefix the two ends could share. */
    private static List<Addr6> global(List<Addr6> l) {
        return l.stream().filter(a -> a.prefixLen() < 128 && !a.ip().isLinkLocal()).toList();
    }

    private static String find(Map<String, String> parent, String x) {
        String r = x;
        while (parent.containsKey(r)) {
            r = parent.get(r);
        }
        String c = x;
        while (!c.equals(r)) {
            String next = parent.get(c);
            parent.put(c, r);
            c = next;
        }
        return r;
    }

    private static void union(Map<String, String> parent, String a, String b) {
        String ra = find(parent, a);
        String rb = find(parent, b);
        if (!ra.equals(rb)) {
            parent.put(rb, ra);
        }
    }
}
