package dev.usnet.tools.topology;

import dev.usnet.core.knob.NearestNames;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.app.MpiApp;
import dev.usnet.tools.topology.file.AddressChecks;
import dev.usnet.tools.topology.file.AddressWarnings;
import dev.usnet.tools.topology.file.KnobDevices;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.App;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.Capture;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelNs;
import dev.usnet.tools.topology.file.TopologySpec.Knob;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.TopologySpec.Loopback;
import dev.usnet.tools.topology.file.TopologySpec.Neigh;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Pcap;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import dev.usnet.tools.topology.file.TopologySpec.TcpApp;
import dev.usnet.tools.topology.file.TopologySpec.TcpCommon;
import dev.usnet.tools.topology.file.TopologySpec.UdpSink;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Cross-references of a parsed file: every name used is declared, once, in the right place. */
final class TopologyChecks {
    private TopologyChecks() {}

    static void check(TopologySpec spec, Problems p) {
        Map<String, KernelNs> kernel = new LinkedHashMap<>();
        for (KernelNs k : spec.kernelNamespaces()) {
            KernelNs first = kernel.putIfAbsent(k.name(), k);
            if (first != null) {
                p.add(k.where(), "kernel namespace " + k.name() + " is listed twice (first at line " + first.where().line() + ")");
            }
        }
        // What device entries claimed across the file (a TAP's kernel name, a pcap port's interface), by what they are.
        Map<String, DeviceSpec> claims = new HashMap<>();
        Map<String, Capture> captureFiles = new HashMap<>();
        Map<String, Where> logFiles = new HashMap<>();
        Map<String, TcpApp> tcpServers = new HashMap<>();
        Set<String> bothSides = new HashSet<>();
        // spec.namespace() walks the list: with thousands of namespaces (count:) one index keeps this linear.
        Set<String> nsNames = new HashSet<>();
        spec.namespaces().forEach(n -> nsNames.add(n.name()));
        // What exists, said once per missing name however many entries name it (count: copies all would).
        Map<String, String> declared = new HashMap<>();
        List<String> nsOrder = spec.namespaces().stream().map(Ns::name).toList();
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
                if (first != null && sameVethPair(first, d)) {
                    if (bothSides.add(ns.name() + "/" + n)) {
                        declaredFromBothSides(ns, (Veth) first, (Veth) d, bothSides, p);
                    }
                } else if (first != null) {
                    p.add(w, "duplicate device name " + n + " in namespace " + ns.name() + " (" + describe(first) + ")");
                }
            }
            LinkKind.Checks checks = new LinkKind.Checks(p, nsNames, nsOrder, declared, byName, claims);
            for (DeviceSpec d : ns.devices()) {
                LinkKinds.check(checks, ns, d);
            }
            for (Knob k : ns.knobs()) {
                String dev = KnobDevices.of(k.key());
                if (dev != null) {
                    if (!dev.equals("all") && !dev.equals("default") && !dev.equals("lo") && !byName.containsKey(dev)
                            && !p.mayBeDropped(ns.name(), dev)) {
                        p.add(k.where(), "knob names device " + dev + ", which namespace " + ns.name() + " does not have"
                                + devices(byName));
                    }
                }
            }
            for (Neigh n : ns.neighbours()) {
                if (!n.dev().equals("lo") && !byName.containsKey(n.dev()) && !p.mayBeDropped(ns.name(), n.dev())) {
                    p.add(n.where(), "no device " + n.dev() + " in namespace " + ns.name() + devices(byName));
                }
            }
            for (Capture c : ns.captures()) {
                if (!c.device().equals("lo") && !byName.containsKey(c.device()) && !p.mayBeDropped(ns.name(), c.device())) {
                    p.add(c.where().child("device"), "no device " + c.device() + " in namespace " + ns.name() + devices(byName));
                }
                Capture first = captureFiles.putIfAbsent(c.file(), c);
                if (first != null) {
                    p.add(c.where().child("file"), "capture file " + c.file() + " is already written by the capture at line "
                            + first.where().line());
                }
            }
            Map<Integer, App> boundUdpPorts = new HashMap<>();
            for (App a : ns.apps()) {
                if (a instanceof TopologySpec.Mpi mpi) {
                    MpiApp.check(spec, mpi, p);
                }
                if (a instanceof TcpApp t) {
                    checkTcpApp(spec, t, tcpServers, p);
                    // An app's trace: or bursts: file is one more file in the output directory.
                    List<TopologySpec.AppLog> logs = new java.util.ArrayList<>();
                    logs.add(t.common().trace());
                    if (t instanceof TopologySpec.TcpBurst b) {
                        logs.add(b.bursts());
                    }
                    for (TopologySpec.AppLog l : logs) {
                        if (l == null || l.file() == null) {
                            continue;
                        }
                        Capture c = captureFiles.get(l.file());
                        Where first = logFiles.putIfAbsent(l.file(), l.where());
                        if (c != null || first != null) {
                            p.add(l.where(), "file " + l.file() + " is already written by the "
                                    + (c != null ? "capture at line " + c.where().line() : "entry at line " + first.line()));
                        }
                    }
                }
                if (a.udpPort() != 0) {
                    App first = boundUdpPorts.putIfAbsent(a.udpPort(), a);
                    if (first != null) {
                        p.add(a.where().child("port"), "UDP port " + a.udpPort() + " already has "
                                + (first instanceof UdpSink ? "a sink" : "a " + first.kind() + " app") + " in namespace "
                                + ns.name() + " (line " + first.where().line() + ")");
                    }
                }
            }
        }
        AddressChecks.check(spec, p);
        AddressWarnings.check(spec, p);
    }

    /**
     * A veth pair declared in each of its namespaces: {@code first} and {@code second} are the same two ends,
     * one entry declared here, the other the peer end of a declaration in the other namespace.
     */
    private static boolean sameVethPair(DeviceSpec first, DeviceSpec second) {
        return first instanceof Veth a && second instanceof Veth b && a.peerSide() != b.peerSide()
                && a.peerNamespace().equals(b.peerNamespace()) && a.peer().name().equals(b.peer().name());
    }

    /** Reports a pair declared from both sides once, at the later declaration, with both lines and how to write it. */
    private static void declaredFromBothSides(Ns ns, Veth x, Veth y, Set<String> reported, Problems p) {
        Veth own = x.peerSide() ? y : x;
        Veth other = x.peerSide() ? x : y;
        // other.peer() is the end the other namespace declared itself, with its own line.
        String otherNs = other.peerNamespace();
        reported.add(otherNs + "/" + other.peer().name());
        Link firstDecl = own.link().where().line() <= other.peer().where().line() ? own.link() : other.peer();
        Link laterDecl = firstDecl == own.link() ? other.peer() : own.link();
        String firstNs = firstDecl == own.link() ? ns.name() : otherNs;
        String laterNs = firstDecl == own.link() ? otherNs : ns.name();
        p.add(laterDecl.where().child("name"), "veth pair " + firstNs + "/" + firstDecl.name() + " - " + laterNs + "/"
                + laterDecl.name() + " is declared from both sides (line " + firstDecl.where().line() + " in " + firstNs
                + ", line " + laterDecl.where().line() + " in " + laterNs + "); declare a pair once, with its other end under"
                + " peer:, e.g. in " + firstNs + ": {name: " + firstDecl.name() + ", kind: veth, peer: {namespace: " + laterNs
                + ", name: " + laterDecl.name() + "}}, and move this entry's settings (addresses, mac, netem...) into that peer:");
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
                    + NearestNames.listing(c.server(), spec.namespaces().stream().map(Ns::name).toList()) + ")");
            return;
        }
        List<Addr> addrs = spec.addresses(server.name());
        if (c.to6() != null) {
            // An IPv6 to: is taken as given; the build checks that the client has a route to it.
        } else if (addrs.isEmpty()) {
            // When an entry of the server's namespace could not be read, its addresses may be on that entry.
            if (!p.isIncomplete(server.name())) {
                p.add(c.serverWhere(), "namespace " + server.name() + " has no address for the " + t.kind()
                        + " client to connect to; give it one");
            }
        } else if (c.to() != null && !p.isIncomplete(server.name()) && addrs.stream().noneMatch(a -> a.ip() == c.to())) {
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

    static void checkPorts(Ns ns, BridgeDev b, Map<String, DeviceSpec> byName, Problems p) {
        Map<String, Ref> seen = new HashMap<>();
        for (Ref r : b.ports()) {
            DeviceSpec d = byName.get(r.name());
            if (seen.putIfAbsent(r.name(), r) != null) {
                p.add(r.where(), r.name() + " is listed twice");
            } else if (r.name().equals(b.link().name())) {
                p.add(r.where(), "a bridge cannot be its own port");
            } else if (d == null && p.mayBeDropped(ns.name(), r.name())) {
                continue;
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
