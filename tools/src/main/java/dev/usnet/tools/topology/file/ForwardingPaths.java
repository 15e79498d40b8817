package dev.usnet.tools.topology.file;

import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Loopback;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import java.util.List;

/**
 * Forwarding paths as an {@code expect: path ...} line names them: {@code NS/IN->OUT}, the way reports, charts and
 * {@code usnet ctl} name them ({@code host/hb1->br0}), or {@code IN->OUT} when only one namespace has such a path.
 * A path is a way a namespace can take a frame from one of its devices to another (results.md): a bridge port's
 * frames go to another port of its bridge, to the bridge itself, or are flooded ({@code PORT->flood}); a routed
 * packet comes in on a device that is no bridge port and leaves on one that is none either (towards a bridge's
 * ports it leaves through the bridge). Any other pair can never carry a packet, so an expectation about it is a
 * mistake that would only show as "absent from the run" after the run.
 */
public final class ForwardingPaths {
    private ForwardingPaths() {}

    static final String FLOOD = "flood";

    /** The selector's namespace (null when not given), ingress and egress; null when it is not IN->OUT. */
    public record Name(String ns, String in, String out) {
        static Name parse(String selector) {
            int slash = selector.indexOf('/');
            String ns = slash < 0 ? null : selector.substring(0, slash);
            String[] io = selector.substring(slash + 1).split("->", -1);
            if (io.length != 2 || io[0].isEmpty() || io[1].isEmpty() || ns != null && ns.isEmpty()) {
                return null;
            }
            return new Name(ns, io[0], io[1]);
        }
    }

    /** Whether the results' path {@code name} of namespace {@code ns} is the one {@code selector} names. */
    public static boolean matches(String selector, String ns, String name) {
        Name n = Name.parse(selector);
        return n != null && (n.in() + "->" + n.out()).equals(name) && (n.ns() == null || n.ns().equals(ns));
    }

    /** What is wrong with the path {@code selector} in {@code spec}, or null when such a path can occur. */
    public static String check(TopologySpec spec, String selector) {
        Name n = Name.parse(selector);
        if (n == null) {
            return "path '" + selector + "': expected NS/IN->OUT, as reports name paths (e.g. host/hb1->br0, host/hb1->flood)";
        }
        if (n.ns() != null) {
            Ns ns = spec.namespaces().stream().filter(x -> x.name().equals(n.ns())).findFirst().orElse(null);
            if (ns == null) {
                return "path '" + selector + "': no namespace '" + n.ns() + "'";
            }
            String why = impossible(ns, n.in(), n.out());
            return why == null ? null : "path '" + selector + "' can never carry a packet: " + why;
        }
        List<Ns> have = spec.namespaces().stream().filter(x -> x.device(n.in()) != null
                && (n.out().equals(FLOOD) || x.device(n.out()) != null)).toList();
        if (have.isEmpty()) {
            return "path '" + selector + "': no namespace has both devices (write NS/IN->OUT, e.g. host/hb1->br0)";
        }
        if (have.size() > 1) {
            return "path '" + selector + "' is in several namespaces (" + String.join(", ", have.stream().map(Ns::name)
                    .toList()) + "): write NS/IN->OUT, e.g. " + have.getFirst().name() + "/" + selector;
        }
        String why = impossible(have.getFirst(), n.in(), n.out());
        return why == null ? null : "path '" + selector + "' (in " + have.getFirst().name() + ") can never carry a packet: " + why;
    }

    /** Why namespace {@code ns} can never take a frame from {@code in} to {@code out}, or null when it can. */
    public static String impossible(Ns ns, String in, String out) {
        DeviceSpec din = ns.device(in);
        if (din == null) {
            return ns.name() + " has no device " + in;
        }
        if (!out.equals(FLOOD) && ns.device(out) == null) {
            return ns.name() + " has no device " + out;
        }
        if (din instanceof Loopback || in.equals("lo") || out.equals("lo")) {
            return "lo forwards nothing";
        }
        BridgeDev bridge = bridgeOf(ns, in);
        if (bridge != null) {
            String b = bridge.link().name();
            boolean sibling = bridge.ports().stream().map(Ref::name).anyMatch(p -> p.equals(out)) && !out.equals(in);
            if (out.equals(FLOOD) || out.equals(b) || sibling) {
                return null;
            }
            return in + " is a port of bridge " + b + ": its frames go to another port of " + b + " (" + in + "->PORT), to "
                    + b + " itself (" + in + "->" + b + ") or are flooded (" + in + "->flood)";
        }
        if (out.equals(FLOOD)) {
            return in + " is no bridge port, and only a bridge port floods (PORT->flood)";
        }
        BridgeDev outBridge = bridgeOf(ns, out);
        if (outBridge != null) {
            return out + " is a port of bridge " + outBridge.link().name() + ": a packet routed towards it leaves through the"
                    + " bridge (" + in + "->" + outBridge.link().name() + "), whose own output to a port is no path";
        }
        return null;
    }

    /** The bridge of {@code ns} that has {@code dev} as a port, or null. */
    private static BridgeDev bridgeOf(Ns ns, String dev) {
        for (DeviceSpec d : ns.devices()) {
            if (d instanceof BridgeDev b && b.ports().stream().anyMatch(p -> p.name().equals(dev))) {
                return b;
            }
        }
        return null;
    }
}
