package dev.usnet.tools.topology.file;

import dev.usnet.tools.topology.file.PlacedAddress.Family;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Loopback;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The file's addresses judged the same way in each family, IPv4 and then IPv6:
 * <ul>
 * <li>an address twice on one L2 segment (veth pairs, bridges with their ports, a TAP with its kernel end) is an
 *     error: both ends would answer ARP or neighbour solicitations for it;
 * <li>veth ends that both have addresses below a host prefix but share no prefix (a warning: neither reaches the other
 *     without a route; over IPv6 only their link-local addresses do);
 * <li>one address with two prefix lengths on two devices of a namespace (a warning: two connected routes of different
 *     lengths, so which device answers and sends for it depends on the destination);
 * <li>prefixes of one namespace that overlap on devices of different segments (a warning: packets to the longer one
 *     leave by one device only, whichever the hosts are behind).
 * </ul>
 * What only one family has (IPv4's network and broadcast addresses, IPv6's subnet-router anycast) is
 * {@link AddressWarnings}'.
 */
public final class AddressChecks {
    private AddressChecks() {}

    public static void check(TopologySpec spec, Problems p) {
        Segments segments = Segments.of(spec);
        for (Family f : Family.values()) {
            check(spec, f, segments, p);
        }
    }

    private static void check(TopologySpec spec, Family f, Segments segments, Problems p) {
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Veth v && !v.peerSide()) {
                    warnIfNoCommonPrefix(ns, v, f, p);
                }
            }
        }
        Map<String, PlacedAddress> onSegment = new HashMap<>();
        for (Ns ns : spec.namespaces()) {
            Map<String, PlacedAddress> inNs = new HashMap<>();
            List<PlacedAddress> prefixes = new ArrayList<>();
            for (DeviceSpec d : ns.devices()) {
                String dev = ns.name() + "/" + d.link().name();
                List<PlacedAddress> here = addresses(dev, d.link(), f);
                if (!(d instanceof Loopback)) {
                    List<PlacedAddress> owners = new ArrayList<>(here);
                    if (d instanceof Tap t) {
                        owners.addAll(kernelAddresses(t, f));
                    }
                    for (PlacedAddress a : owners) {
                        failIfOnSegmentAlready(onSegment, segments.of(dev), a, p);
                    }
                }
                for (PlacedAddress a : here) {
                    PlacedAddress same = inNs.putIfAbsent(a.ip(), a);
                    if (same != null && !same.device().equals(dev) && same.prefixLen() != a.prefixLen()) {
                        p.warn(a.where(), a.ip() + " is on " + dev + " as /" + a.prefixLen() + " and on " + same.device()
                                + " as /" + same.prefixLen() + " (line " + same.where().line() + "): one address with two"
                                + " prefix lengths makes two connected routes of different lengths, so which device answers"
                                + " and sends for it depends on the destination; give it one prefix length, or one device");
                    }
                    if (!(d instanceof Loopback) && !a.isLinkLocal() && a.prefixLen() < f.bits) {
                        prefixes.add(a);
                    }
                }
            }
            warnIfOverlapping(segments, prefixes, p);
        }
    }

    private static List<PlacedAddress> addresses(String dev, TopologySpec.Link l, Family f) {
        return f == Family.INET ? l.addresses().stream().map(a -> PlacedAddress.of(dev, a)).toList()
                : l.addresses6().stream().map(a -> PlacedAddress.of(dev, a)).toList();
    }

    /** The addresses of a TAP's kernel end: on the TAP's segment, though no usnet namespace holds them. */
    private static List<PlacedAddress> kernelAddresses(Tap t, Family f) {
        String k = (t.kernel().namespace() == null ? "the kernel" : "kernel namespace " + t.kernel().namespace()) + "/"
                + t.kernel().ifname();
        return f == Family.INET ? t.kernel().addresses().stream().map(a -> PlacedAddress.of(k, a)).toList()
                : t.kernel().addresses6().stream().map(a -> PlacedAddress.of(k, a)).toList();
    }

    private static void failIfOnSegmentAlready(Map<String, PlacedAddress> onSegment, String segment, PlacedAddress a,
                                               Problems p) {
        PlacedAddress first = onSegment.putIfAbsent(segment + " " + a.ip(), a);
        if (first != null && !first.device().equals(a.device())) {
            p.add(a.where(), a.ip() + " is already the address of " + first.device() + " (line " + first.where().line()
                    + ") on the same link; two ends of one segment cannot share an address (" + a.family().duplicateMeans
                    + ")");
        }
    }

    private static void warnIfNoCommonPrefix(Ns ns, Veth v, Family f, Problems p) {
        // Host prefixes (a /32 or /128: a point-to-point link routed by device) and link-local ones are not compared.
        List<PlacedAddress> mine = belowHost(addresses(ns.name() + "/" + v.link().name(), v.link(), f), f);
        List<PlacedAddress> theirs = belowHost(addresses(v.peerNamespace() + "/" + v.peer().name(), v.peer(), f), f);
        if (mine.isEmpty() || theirs.isEmpty()) {
            return;
        }
        for (PlacedAddress a : mine) {
            for (PlacedAddress b : theirs) {
                if (a.samePrefix(b, Math.min(a.prefixLen(), b.prefixLen()))) {
                    return;
                }
            }
        }
        p.warn(v.link().where().child("addresses"), "veth " + ns.name() + "/" + v.link().name() + " ("
                + String.join(", ", mine.stream().map(PlacedAddress::text).toList()) + ") and its peer " + v.peerNamespace()
                + "/" + v.peer().name() + " (" + String.join(", ", theirs.stream().map(PlacedAddress::text).toList())
                + ") share no " + f.prefixWord + ": " + f.unsharedMeans);
    }

    private static List<PlacedAddress> belowHost(List<PlacedAddress> l, Family f) {
        return l.stream().filter(a -> a.prefixLen() < f.bits && !a.isLinkLocal()).toList();
    }

    /**
     * Prefixes of one namespace (in file order) that overlap one on a device of another segment. Sorted by address,
     * a covering prefix before what it covers, the prefixes nest like intervals: a stack of the open ones finds each
     * prefix's enclosing ones in one pass, so a namespace with thousands of devices is not compared pairwise. The
     * warning goes to the later of the two in the file.
     */
    private static void warnIfOverlapping(Segments segments, List<PlacedAddress> inFileOrder, Problems p) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < inFileOrder.size(); i++) {
            order.add(i);
        }
        order.sort((x, y) -> {
            PlacedAddress a = inFileOrder.get(x);
            PlacedAddress b = inFileOrder.get(y);
            int len = Math.min(a.prefixLen(), b.prefixLen());
            int c = a.bits().prefix(len).compareTo(b.bits().prefix(len));
            return c != 0 ? c : a.prefixLen() != b.prefixLen() ? Integer.compare(a.prefixLen(), b.prefixLen())
                    : Integer.compare(x, y);
        });
        ArrayDeque<Integer> open = new ArrayDeque<>();
        Set<Integer> warned = new HashSet<>();
        for (int i : order) {
            PlacedAddress here = inFileOrder.get(i);
            while (!open.isEmpty() && !inFileOrder.get(open.peek()).covers(here)) {
                open.pop();
            }
            for (int o : open) {
                PlacedAddress other = inFileOrder.get(o);
                if (other.device().equals(here.device())
                        || segments.of(other.device()).equals(segments.of(here.device()))) {
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

    private static void warnOverlap(PlacedAddress here, PlacedAddress first, Problems p) {
        String pa = here.prefixText();
        String pb = first.prefixText();
        p.warn(here.where(), "prefix " + pa + " of " + here.device() + (pa.equals(pb) ? " is also on " : " overlaps " + pb
                + " of ") + first.device() + " (line " + first.where().line() + "), a device on another link: packets to "
                + (here.prefixLen() >= first.prefixLen() ? pa : pb) + " leave by one of them only; give each link its own"
                + " prefix");
    }
}
