package dev.usnet.tools.topology;

import dev.usnet.core.knob.Knobs;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.topology.TopologySpec.Addr;
import dev.usnet.tools.topology.TopologySpec.App;
import dev.usnet.tools.topology.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.TopologySpec.Capture;
import dev.usnet.tools.topology.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.TopologySpec.KernelNs;
import dev.usnet.tools.topology.TopologySpec.Knob;
import dev.usnet.tools.topology.TopologySpec.Loopback;
import dev.usnet.tools.topology.TopologySpec.Neigh;
import dev.usnet.tools.topology.TopologySpec.Ns;
import dev.usnet.tools.topology.TopologySpec.Pcap;
import dev.usnet.tools.topology.TopologySpec.Ref;
import dev.usnet.tools.topology.TopologySpec.Tap;
import dev.usnet.tools.topology.TopologySpec.TcpApp;
import dev.usnet.tools.topology.TopologySpec.TcpCommon;
import dev.usnet.tools.topology.TopologySpec.UdpSink;
import dev.usnet.tools.topology.TopologySpec.Veth;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Cross-references of a parsed file: every name used is declared, once, in the right place. */
final class TopologyChecks {
    private static final Pattern DEV_KNOB = Pattern.compile("net\\.ipv4\\.(conf|neigh)\\.(.+)\\.[a-z_]+");

    private TopologyChecks() {}

    /** The device a per-device knob names ({@code net.ipv4.conf.<dev>.*}, {@code usnet.netem.<dev>...}), or null. */
    static String knobDevice(String key) {
        String netem = Knobs.netemDevice(key);
        if (netem != null) {
            return netem;
        }
        Matcher m = DEV_KNOB.matcher(key);
        return m.matches() ? m.group(2) : null;
    }

    static void check(TopologySpec spec, Problems p) {
        Map<String, KernelNs> kernel = new LinkedHashMap<>();
        for (KernelNs k : spec.kernelNamespaces()) {
            KernelNs first = kernel.putIfAbsent(k.name(), k);
            if (first != null) {
                p.add(k.where(), "kernel namespace " + k.name() + " is listed twice (first at line " + first.where().line() + ")");
            }
        }
        Map<String, Tap> tapIfnames = new HashMap<>();
        Map<String, Pcap> pcapIfaces = new HashMap<>();
        Map<String, Capture> captureFiles = new HashMap<>();
        Map<String, TcpApp> tcpServers = new HashMap<>();
        for (Ns ns : spec.namespaces()) {
            Map<String, DeviceSpec> byName = new LinkedHashMap<>();
            for (DeviceSpec d : ns.devices()) {
                String n = d.link().name();
                Where w = d.link().where().child("name");
                if (n.equals("lo") && !(d instanceof Loopback)) {
                    p.add(w, "'lo' is the loopback every namespace has; declare it with kind: loopback to give it addresses");
                    continue;
                }
                DeviceSpec first = byName.putIfAbsent(n, d);
                if (first != null) {
                    p.add(w, "duplicate device name " + n + " in namespace " + ns.name() + " (" + describe(first) + ")");
                }
            }
            for (DeviceSpec d : ns.devices()) {
                switch (d) {
                    case Veth v when !v.peerSide() -> {
                        if (spec.namespace(v.peerNamespace()) == null) {
                            p.add(v.peer().where().child("namespace"), "no usnet namespace " + v.peerNamespace()
                                    + " (declared: " + String.join(", ", spec.namespaces().stream().map(Ns::name).toList()) + ")");
                        }
                    }
                    case BridgeDev b -> checkPorts(ns, b, byName, p);
                    case Tap t -> {
                        Tap first = tapIfnames.putIfAbsent(t.kernel().ifname(), t);
                        if (first != null) {
                            p.add(t.kernel().where(), "TAP interface name " + t.kernel().ifname() + " is used twice (first at line "
                                    + first.kernel().where().line() + "); TAPs are created in usnet's own kernel namespace"
                                    + " before they move, so their kernel names must differ");
                        }
                    }
                    case Pcap c -> {
                        Pcap first = pcapIfaces.putIfAbsent(c.iface(), c);
                        if (first != null) {
                            p.add(c.link().where().child("interface"), "interface " + c.iface() + " is already pcap device "
                                    + first.link().name() + " (line " + first.link().where().line() + ")");
                        }
                    }
                    default -> { }
                }
            }
            for (Knob k : ns.knobs()) {
                String dev = knobDevice(k.key());
                if (dev != null) {
                    if (!dev.equals("all") && !dev.equals("default") && !dev.equals("lo") && !byName.containsKey(dev)) {
                        p.add(k.where(), "knob names device " + dev + ", which namespace " + ns.name() + " does not have"
                                + devices(byName));
                    }
                }
            }
            for (Neigh n : ns.neighbours()) {
                if (!n.dev().equals("lo") && !byName.containsKey(n.dev())) {
                    p.add(n.where(), "no device " + n.dev() + " in namespace " + ns.name() + devices(byName));
                }
            }
            for (Capture c : ns.captures()) {
                if (!c.device().equals("lo") && !byName.containsKey(c.device())) {
                    p.add(c.where().child("device"), "no device " + c.device() + " in namespace " + ns.name() + devices(byName));
                }
                Capture first = captureFiles.putIfAbsent(c.file(), c);
                if (first != null) {
                    p.add(c.where().child("file"), "capture file " + c.file() + " is already written by the capture at line "
                            + first.where().line());
                }
            }
            Map<Integer, App> sinks = new HashMap<>();
            for (App a : ns.apps()) {
                if (a instanceof TcpApp t) {
                    checkTcpApp(spec, t, tcpServers, p);
                }
                if (a instanceof UdpSink s) {
                    App first = sinks.putIfAbsent(s.port(), s);
                    if (first != null) {
                        p.add(s.where().child("port"), "UDP port " + s.port() + " already has a sink in namespace " + ns.name()
                                + " (line " + first.where().line() + ")");
                    }
                }
            }
        }
    }

    /**
     * A TCP app's server: its namespace exists, the address the client connects to is one of that namespace's,
     * and no other TCP app's server listens on the same port there.
     */
    private static void checkTcpApp(TopologySpec spec, TcpApp t, Map<String, TcpApp> servers, Problems p) {
        TcpCommon c = t.common();
        Ns server = spec.namespace(c.server());
        if (server == null) {
            p.add(c.serverWhere(), "no usnet namespace " + c.server() + " (declared: "
                    + String.join(", ", spec.namespaces().stream().map(Ns::name).toList()) + ")");
            return;
        }
        List<Addr> addrs = spec.addresses(server.name());
        if (addrs.isEmpty()) {
            p.add(c.serverWhere(), "namespace " + server.name() + " has no address for the " + t.kind()
                    + " client to connect to; give it one");
        } else if (c.to() != null && addrs.stream().noneMatch(a -> a.ip() == c.to())) {
            p.add(c.toWhere(), Ipv4Addr.format(c.to()) + " is not an address of namespace " + server.name() + " (has: "
                    + String.join(", ", addrs.stream().map(a -> Ipv4Addr.format(a.ip())).toList())
                    + "); leave 'to' out to use one of them");
        }
        TcpApp first = servers.putIfAbsent(server.name() + ":" + c.port(), t);
        if (first != null) {
            p.add(c.portWhere(), "TCP port " + c.port() + " of namespace " + server.name() + " already has the server of the "
                    + first.kind() + " app at line " + first.where().line() + "; give each app its own port");
        }
    }

    private static void checkPorts(Ns ns, BridgeDev b, Map<String, DeviceSpec> byName, Problems p) {
        Map<String, Ref> seen = new HashMap<>();
        for (Ref r : b.ports()) {
            DeviceSpec d = byName.get(r.name());
            if (seen.putIfAbsent(r.name(), r) != null) {
                p.add(r.where(), r.name() + " is listed twice");
            } else if (r.name().equals(b.link().name())) {
                p.add(r.where(), "a bridge cannot be its own port");
            } else if (d == null) {
                p.add(r.where(), "no device " + r.name() + " in namespace " + ns.name() + devices(byName)
                        + "; a port must be in its bridge's namespace");
            } else if (d instanceof BridgeDev || d instanceof Loopback) {
                p.add(r.where(), r.name() + " is a " + d.kind() + " and cannot be a bridge port");
            }
        }
        for (DeviceSpec other : ns.devices()) {
            if (other instanceof BridgeDev ob && ob != b && ns.devices().indexOf(ob) < ns.devices().indexOf(b)) {
                for (Ref r : b.ports()) {
                    for (Ref o : ob.ports()) {
                        if (o.name().equals(r.name())) {
                            p.add(r.where(), r.name() + " is already a port of " + ob.link().name() + " (line " + o.where().line() + ")");
                        }
                    }
                }
            }
        }
    }

    private static String describe(DeviceSpec d) {
        if (d instanceof Veth v && v.peerSide()) {
            return "already the peer end of veth " + v.peer().name() + " in namespace " + v.peerNamespace() + ", line "
                    + v.link().where().line();
        }
        return "first declared at line " + d.link().where().line();
    }

    private static String devices(Map<String, DeviceSpec> byName) {
        return " (has: " + String.join(", ", java.util.stream.Stream.concat(java.util.stream.Stream.of("lo"),
                byName.keySet().stream().filter(n -> !n.equals("lo"))).toList()) + ")";
    }
}
