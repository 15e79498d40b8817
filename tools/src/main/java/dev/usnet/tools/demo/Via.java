package dev.usnet.tools.demo;

import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import dev.usnet.tools.topology.file.TopologySpec.Veth;

/**
 * Names for the demo's rows, read from the topology: whose address a peer is, and whether a namespace reaches it
 * over a bridge (its veth's other end is a bridge port) or through routing.
 */
final class Via {
    private Via() {}

    /** The namespace holding {@code ip}, or the address itself when none does. */
    static String owner(TopologySpec spec, int ip) {
        for (Ns n : spec.namespaces()) {
            for (Addr a : spec.addresses(n.name())) {
                if (a.ip() == ip) {
                    return n.name();
                }
            }
        }
        return Ipv4Addr.format(ip);
    }

    /**
     * {@code bridge} or {@code routing}: how namespace {@code ns} reaches {@code ip} on a connected network, judged by
     * the other end of the device that network is on; {@code routing} when no connected network holds it.
     */
    static String path(TopologySpec spec, String ns, int ip) {
        Ns n = spec.namespace(ns);
        for (DeviceSpec d : n.devices()) {
            for (Addr a : d.link().addresses()) {
                int len = a.prefixLen();
                int mask = len == 0 ? 0 : -1 << (32 - len);
                if (len > 0 && len < 32 && (a.ip() & mask) == (ip & mask) && d instanceof Veth v) {
                    return bridgeOf(spec.namespace(v.peerNamespace()), v.peer().name()) != null ? "bridge" : "routing";
                }
            }
        }
        return "routing";
    }

    /**
     * What a forwarding path {@code IN->OUT} of namespace {@code ns} goes through: {@code bridge BR} when IN is a
     * port of bridge BR, else {@code routing}, with {@code , proxy ARP} when IN answers ARP by proxy.
     */
    static String forwarding(TopologySpec spec, NetStack stack, String ns, String path) {
        int arrow = path.indexOf("->");
        String in = arrow < 0 ? path : path.substring(0, arrow);
        BridgeDev br = bridgeOf(spec.namespace(ns), in);
        if (br != null) {
            return "bridge " + br.link().name();
        }
        String proxyArp;
        try {
            proxyArp = stack.knobs().get(Knobs.deviceKey(Ipv4Sysctl.CONF, in, Ipv4Sysctl.PROXY_ARP.name()));
        } catch (RuntimeException e) {
            proxyArp = "0";
        }
        return "1".equals(proxyArp) ? "routing, proxy ARP" : "routing";
    }

    private static BridgeDev bridgeOf(Ns n, String port) {
        if (n == null) {
            return null;
        }
        for (DeviceSpec d : n.devices()) {
            if (d instanceof BridgeDev b) {
                for (Ref r : b.ports()) {
                    if (r.name().equals(port)) {
                        return b;
                    }
                }
            }
        }
        return null;
    }
}
