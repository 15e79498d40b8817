package dev.usnet.tools.topology;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.nftables.NftSyntaxException;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.iproute.Ip6RouteSyntax;
import dev.usnet.tools.iproute.IpRouteSyntax;
import dev.usnet.tools.kernel.TapProvider;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelNs;
import dev.usnet.tools.topology.file.TopologySpec.Knob;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.TopologySpec.Neigh;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Pcap;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import dev.usnet.tools.topology.file.TopologySpec.Text;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Builds a {@link TopologySpec} into live usnet namespaces, in the order {@code ip} commands would: devices,
 * their MAC/MTU/offloads, bridge ports, IPv6 on and its device knobs ({@link Ipv6Setup}), addresses, up, knobs,
 * routes, neighbours. Whatever the core refuses
 * (a route to a gateway that is not connected, a knob out of range, an address added twice) is reported
 * with the line it came from. {@link #check} does the same build in virtual time with stand-ins for TAP and
 * pcap devices: no privileges, no side effects.
 */
public final class TopologyBuilder {
    /** Makes the devices that reach outside usnet (TAP, pcap). */
    public interface ExternalDevices {
        Device tap(String ns, Tap spec, long mac, NetStack stack);

        Device pcap(String ns, Pcap spec, long mac, NetStack stack);

        /** Stand-ins that only drop what they are given: for {@code --check} and tests. */
        static ExternalDevices placeholders() {
            return new ExternalDevices() {
                @Override
                public Device tap(String ns, Tap spec, long mac, NetStack stack) {
                    return new Placeholder("tap", spec.link().name(), mac);
                }

                @Override
                public Device pcap(String ns, Pcap spec, long mac, NetStack stack) {
                    return new Placeholder("pcap", spec.link().name(), mac);
                }
            };
        }
    }

    /** A device that drops everything it transmits: the stand-in for a TAP or pcap port while checking. */
    static class Placeholder extends Device {
        Placeholder(String kind, String name, long mac) {
            super(kind, name, mac);
        }

        @Override
        protected void xmit(Packet p) {
            p.release();
        }
    }

    private final TopologySpec spec;
    private final Problems problems;
    /** The device each declared entry made (by its Link), so a later phase skips entries that made none. */
    private final Map<Link, Device> made = new IdentityHashMap<>();
    private final Map<String, NetNamespace> nss = new LinkedHashMap<>();

    private TopologyBuilder(TopologySpec spec, Problems problems) {
        this.spec = spec;
        this.problems = problems;
    }

    /**
     * Validates everything a build would check, in virtual time with stand-in devices; throws a
     * {@link TopologyException} listing every problem. No files, no kernel changes.
     */
    public static void check(TopologySpec spec) {
        Problems p = new Problems();
        check(spec, p);
        p.throwIfAny();
    }

    /**
     * As {@link #check(TopologySpec)}, adding to {@code p}, which may already hold the file's own problems:
     * an entry with a problem there is not judged again (a device named twice is not created twice), everything
     * else is.
     */
    static void check(TopologySpec spec, Problems p) {
        VirtualScheduler vs = new VirtualScheduler();
        TopologyBuilder b = new TopologyBuilder(spec, p);
        b.checkKernelSides();
        NamespaceRegistry reg = new NamespaceRegistry(n -> vs, spec.seed());
        try {
            b.build(reg, ExternalDevices.placeholders());
            if (p.isEmpty()) {
                for (VirtualClockStalls.Stuck st : VirtualClockStalls.find(spec, n -> {
                    var ns = b.nss.get(n);
                    return ns == null ? null : ns.stack();
                })) {
                    p.warnVirtualClock(st.where(), "in virtual time (--clock virtual) " + st.describe() + " cannot move"
                            + " the clock: no link between " + st.client() + " and " + st.server() + " has a netem rate or"
                            + " delay and the CPU model is off, so every segment and its ACK fall on one instant and the"
                            + " run stops with an error; " + VirtualClockStalls.FIX);
                }
            }
        } finally {
            reg.close();
        }
    }

    /** Builds the topology; on any problem, removes what it built and throws a {@link TopologyException}. */
    public static Topology build(TopologySpec spec, Function<String, Scheduler> schedulers, ExternalDevices ext) {
        TopologyBuilder b = new TopologyBuilder(spec, new Problems());
        b.checkKernelSides();
        NamespaceRegistry reg = new NamespaceRegistry(schedulers, spec.seed());
        try {
            b.build(reg, ext);
        } catch (RuntimeException e) {
            reg.close();
            throw e;
        }
        if (!b.problems.isEmpty()) {
            reg.close();
            b.problems.throwIfAny();
        }
        return new Topology(spec, reg);
    }

    /** Reports what the core refused for an entry, unless the entry already has a problem this one follows from. */
    private void report(Where w, String message) {
        if (!problems.hasErrorAt(w)) {
            problems.add(w, message);
        }
    }

    /** The namespace registry and the makers of TAP and pcap devices, while {@link #build} runs. */
    private NamespaceRegistry reg;
    private ExternalDevices ext;

    /** The namespace named {@code name} being built, or null. */
    NetNamespace namespace(String name) {
        return nss.get(name);
    }

    NamespaceRegistry registry() {
        return reg;
    }

    ExternalDevices external() {
        return ext;
    }

    /** The device made for the entry (or peer end) {@code l}. */
    void made(Link l, Device d) {
        made.put(l, d);
    }

    /** Whether the entry at {@code w} has a problem already (a device named twice is not made twice). */
    boolean hasErrorAt(Where w) {
        return problems.hasErrorAt(w);
    }

    private void build(NamespaceRegistry reg, ExternalDevices ext) {
        this.reg = reg;
        this.ext = ext;
        for (Ns ns : spec.namespaces()) {
            nss.put(ns.name(), reg.create(ns.name()));
        }
        // 1. Devices. An entry the file's checks found wrong (a name used twice, a peer namespace that does not
        // exist) makes no device; the later phases then skip it.
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            for (DeviceSpec d : ns.devices()) {
                Link l = d.link();
                long mac = l.mac() != null ? l.mac() : NamespaceRegistry.macFor(ns.name() + "/" + l.name());
                if (problems.hasErrorAt(l.where().child("name"))) {
                    continue;
                }
                try {
                    LinkKinds.create(this, ns.name(), s, d, mac);
                } catch (RuntimeException e) {
                    problems.add(l.where(), d.kind() + " " + l.name() + ": " + e.getMessage());
                }
            }
        }
        // 2. Link settings before enslaving (a port's MAC is learned as local when it joins).
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            for (DeviceSpec d : ns.devices()) {
                Link l = d.link();
                Device dev = made.get(l);
                if (dev == null) {
                    continue;
                }
                try {
                    if (l.mac() != null) {
                        dev.setMac(l.mac());
                    }
                    if (l.mtu() != null) {
                        dev.setMtu(l.mtu());
                    }
                    if (l.txChecksumming() != null) {
                        dev.setTxChecksumOffload(l.txChecksumming());
                    }
                    if (l.neededHeadroom() != null) {
                        dev.setNeededHeadroom(l.neededHeadroom());
                    }
                    if (l.gso() != null) {
                        dev.setGsoOffload(l.gso());
                    }
                    if (l.gro() != null) {
                        dev.setGro(l.gro());
                    }
                } catch (RuntimeException e) {
                    problems.add(l.where(), e.getMessage());
                }
            }
        }
        // 3. Bridges and their ports.
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof BridgeDev b && made.get(b.link()) instanceof Bridge br) {
                    try {
                        if (b.ageingTimeSeconds() != null) {
                            br.setAgeingNanos(Math.round(b.ageingTimeSeconds() * 1e9));
                        }
                        if (b.fdbMaxLearned() != null) {
                            br.setFdbMaxLearned(b.fdbMaxLearned());
                        }
                        if (b.groupFwdMask() != null) {
                            br.setGroupFwdMask(b.groupFwdMask());
                        }
                    } catch (RuntimeException e) {
                        report(b.link().where(), e.getMessage());
                    }
                    for (Ref r : b.ports()) {
                        if (s.device(r.name()) == null && problems.mayBeDropped(ns.name(), r.name())) {
                            continue;
                        }
                        try {
                            br.addPort(s.requireDevice(r.name()));
                        } catch (RuntimeException e) {
                            report(r.where(), e.getMessage());
                        }
                    }
                }
            }
        }
        // 3b. IPv6 on in the namespaces the file gives it, and the file's own IPv6 device settings, before any address
        // is added or link comes up: whether an address starts tentative and what a link makes at up depend on them.
        Set<Knob> appliedEarly = Ipv6Setup.enable(spec, nss, problems);
        // 4. Addresses, then up.
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            for (DeviceSpec d : ns.devices()) {
                Device dev = made.get(d.link());
                if (dev == null) {
                    continue;
                }
                for (Addr a : d.link().addresses()) {
                    try {
                        s.devinet().add(dev, a.ip(), a.prefixLen());
                    } catch (RuntimeException e) {
                        problems.add(a.where(), e.getMessage());
                    }
                }
                Ipv6Setup.addAddresses(s, ns, dev, d.link().addresses6(), problems);
                dev.setUp(d.link().up());
            }
        }
        // 5. Link emulation declared on devices (netem:), then knobs in file order (conf.all before conf.<dev>
        // means what it means in sysctl.conf; a usnet.netem knob may refine a device's netem:).
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            for (DeviceSpec d : ns.devices()) {
                for (Knob k : d.link().netem()) {
                    try {
                        s.knobs().set(k.key(), k.value());
                    } catch (RuntimeException e) {
                        problems.add(k.where(), e.getMessage());
                    }
                }
            }
            for (Knob k : ns.knobs()) {
                if (appliedEarly.contains(k)) {
                    continue;
                }
                try {
                    s.knobs().set(k.key(), k.value());
                } catch (RuntimeException e) {
                    problems.add(k.where(), e.getMessage());
                }
            }
        }
        // 6. Routes (after addresses: a gateway must be on a connected network), then neighbours.
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            boolean complete = complete(ns);
            for (Text r : ns.routes()) {
                try {
                    if (Ip6RouteSyntax.isIpv6(r.text())) {
                        s.ipv6().fib().addNew(Ip6RouteSyntax.parse(r.text(), s));
                        continue;
                    }
                    s.routes().addNew(IpRouteSyntax.parse(r.text(), s));
                } catch (RuntimeException e) {
                    // A gateway or device may be missing only because an entry it is on was wrong.
                    if (complete) {
                        problems.add(r.where(), routeMessage(r.text(), e));
                    }
                }
            }
            for (Neigh n : ns.neighbours()) {
                if (s.device(n.dev()) == null && problems.mayBeDropped(ns.name(), n.dev())) {
                    continue;
                }
                try {
                    if (n.ip6() != null) {
                        Ipv6Setup.addNeighbour(s, n);
                        continue;
                    }
                    s.neigh().addPermanent(s.requireDevice(n.dev()), n.ip(), n.mac());
                } catch (RuntimeException e) {
                    report(n.where(), e.getMessage());
                }
            }
        }
        // 6b. nftables rulesets (after the devices, which iif and oif name): one transaction each.
        for (Ns ns : spec.namespaces()) {
            if (ns.nftables() == null) {
                continue;
            }
            try {
                Nftables.of(nss.get(ns.name()).stack().ipv4()).apply(ns.nftables().text());
            } catch (NftSyntaxException e) {
                Where w = ns.nftables().where();
                problems.add(new Where(w.file(), w.line() + e.line(), w.path()), "ruleset " + e.getMessage());
            }
        }
        // 7. Apps: a ping or UDP sender has a route to its destination (sendto() would fail with ENETUNREACH); a
        // TCP client has one to the server's address (connect() would), and the server one back to the address
        // the client sends from. Judged only where the route tables are complete.
        Map<String, Ns> byName = new LinkedHashMap<>();
        spec.namespaces().forEach(n -> byName.put(n.name(), n));
        // A server's completeness once, not once per client: 10 000 clients of a server with 10 000 devices made
        // this check quadratic. What the loop adds are app problems, which do not change it.
        Map<String, Boolean> serverComplete = new java.util.HashMap<>();
        for (Ns ns : spec.namespaces()) {
            NetStack s = nss.get(ns.name()).stack();
            if (!complete(ns)) {
                continue;
            }
            for (TopologySpec.App a : ns.apps()) {
                switch (a) {
                    case TopologySpec.Ping p when p.to6() != null -> checkReachable6(s, ns, "ping", p.to6(), p.where());
                    case TopologySpec.Ping p -> checkReachable(s, ns, "ping", p.to(), p.where());
                    case TopologySpec.UdpSend u when u.to6() != null ->
                            checkReachable6(s, ns, "udp-send", u.to6(), u.where());
                    case TopologySpec.UdpSend u -> checkReachable(s, ns, "udp-send", u.to(), u.where());
                    case TopologySpec.TcpApp t when t.common().to6() != null ->
                            checkReachable6(s, ns, t.kind(), t.common().to6(), t.where());
                    case TopologySpec.TcpApp t -> {
                        Integer to = spec.serverAddress(ns.name(), t);
                        NetNamespace server = nss.get(t.common().server());
                        if (to == null || server == null
                                || !serverComplete.computeIfAbsent(server.name(), n -> complete(byName.get(n)))) {
                            continue;
                        }
                        Route rt = s.ipOutput().routeOutput(to);
                        if (rt == null) {
                            problems.add(t.where(), t.kind() + " app: namespace " + ns.name() + " has no route to "
                                    + Ipv4Addr.format(to) + " (the server, in namespace " + server.name() + ")");
                            continue;
                        }
                        int src = s.ipOutput().sourceFor(rt, to);
                        if (src == 0) {
                            problems.add(t.where(), t.kind() + " app: namespace " + ns.name() + " has no address to send to "
                                    + Ipv4Addr.format(to) + " from");
                        } else if (server.stack().ipOutput().routeOutput(src) == null) {
                            problems.add(t.where(), t.kind() + " app: the server's namespace " + server.name()
                                    + " has no route back to " + Ipv4Addr.format(src) + " (the client's address in "
                                    + ns.name() + ")");
                        }
                    }
                    default -> { }
                }
            }
        }
    }

    private void checkReachable(NetStack s, Ns ns, String kind, int to, Where w) {
        if (s.ipOutput().routeOutput(to) == null) {
            problems.add(w.child("to"), kind + " app: namespace " + ns.name() + " has no route to " + Ipv4Addr.format(to)
                    + " (" + routeSummary(ns) + ")");
        }
    }

    /** An IPv6 destination's device (for a link-local one) is there, and the destination has a route. */
    private void checkReachable6(NetStack s, Ns ns, String kind, EntryValues.Ip6Destination to, Where w) {
        dev.usnet.core.device.Device oif = null;
        if (to.dev() != null) {
            oif = s.device(to.dev());
            if (oif == null) {
                problems.add(w.child("to"), kind + " app: namespace " + ns.name() + " has no device " + to.dev());
                return;
            }
        }
        if (s.ipv6().output().routeOutput(to.address().hi(), to.address().lo(), oif) == null) {
            problems.add(w.child("to"), kind + " app: namespace " + ns.name() + " has no IPv6 route to " + to
                    + " (" + routeSummary6(ns) + ")");
        }
    }

    /** What a namespace's IPv4 route table holds, as the file declares it: connected networks and IPv4 routes. */
    private String routeSummary(Ns ns) {
        List<String> nets = spec.addresses(ns.name()).stream().filter(a -> a.prefixLen() > 0 && a.prefixLen() < 32)
                .map(a -> Ipv4Addr.format(a.ip() & (-1 << (32 - a.prefixLen()))) + "/" + a.prefixLen()).distinct().toList();
        return routeSummary(nets, ns.routes().stream().map(Text::text).filter(r -> !Ip6RouteSyntax.isIpv6(r)).toList());
    }

    /**
     * The same for IPv6: connected prefixes (link-local ones left out, every device has fe80::/64) and IPv6 routes, so a
     * dual-stack namespace's message names only what could have carried the packet.
     */
    private String routeSummary6(Ns ns) {
        List<String> nets = ns.devices().stream().flatMap(d -> d.link().addresses6().stream())
                .filter(a -> a.prefixLen() > 0 && a.prefixLen() < 128 && !a.ip().isLinkLocal())
                .map(a -> a.ip().prefix(a.prefixLen()) + "/" + a.prefixLen()).distinct().toList();
        return routeSummary(nets, ns.routes().stream().map(Text::text).filter(Ip6RouteSyntax::isIpv6).toList());
    }

    private static String routeSummary(List<String> connected, List<String> routes) {
        return (connected.isEmpty() ? "no connected network" : "connected: " + String.join(", ", connected)) + "; "
                + (routes.isEmpty() ? "no routes" : "routes: " + String.join(", ", routes));
    }

    /** Every device of {@code ns} was read and is there, with all its addresses: its route table is as the file means it. */
    private boolean complete(Ns ns) {
        if (problems.isIncomplete(ns.name()) || problems.hasErrorAt(ns.where().child("routes"))) {
            return false;
        }
        NetStack s = nss.get(ns.name()).stack();
        for (DeviceSpec d : ns.devices()) {
            // An entry skipped for its name (declared twice, say a veth pair from both sides) still has its
            // device, made by the other entry.
            if (s.device(d.link().name()) == null || problems.hasErrorAt(d.link().where().child("addresses"))) {
                return false;
            }
        }
        return true;
    }

    static Device register(NetStack s, Device d) {
        s.register(d);
        return d;
    }

    private static String routeMessage(String text, RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith("route '") ? m : "route '" + text + "': " + m;
    }

    /**
     * The kernel ends of TAPs: their addresses and routes are checked as the kernel would take them, in a
     * scratch stack per kernel namespace. Namespaces this file creates start empty, so a gateway must be on
     * one of the TAPs' networks there; in other namespaces only the syntax can be checked.
     */
    private void checkKernelSides() {
        Set<String> declared = spec.kernelNamespaces().stream().map(KernelNs::name).collect(Collectors.toSet());
        Map<String, List<Tap>> byNs = new LinkedHashMap<>();
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Tap t) {
                    String k = t.kernel().namespace();
                    byNs.computeIfAbsent(k == null ? "" : k, x -> new ArrayList<>()).add(t);
                }
            }
        }
        VirtualScheduler vs = new VirtualScheduler();
        for (var e : byNs.entrySet()) {
            boolean known = declared.contains(e.getKey());
            NetStack s = new NetStack("kernel:" + e.getKey(), vs, 1);
            try {
                for (Tap t : e.getValue()) {
                    if (s.device(t.kernel().ifname()) != null) {
                        // A TAP interface name used twice, already reported by TopologyChecks.
                        continue;
                    }
                    Device dev = new Placeholder("tap", t.kernel().ifname(), 2);
                    s.register(dev);
                    dev.setUp(true);
                    for (Addr a : t.kernel().addresses()) {
                        try {
                            s.devinet().add(dev, a.ip(), a.prefixLen());
                        } catch (RuntimeException ex) {
                            problems.add(a.where(), ex.getMessage());
                        }
                    }
                    if (!known) {
                        // Unknown surroundings: any gateway may be reachable.
                        s.routes().add(new Route(0, 0, RouteType.UNICAST, 0, dev, 0, Integer.MAX_VALUE, true));
                    }
                }
                for (Tap t : e.getValue()) {
                    for (Text r : t.kernel().routes()) {
                        String text = TapProvider.kernelRoute(r.text(), t.kernel().ifname());
                        try {
                            if (!known) {
                                for (String tok : devTokens(text)) {
                                    if (s.device(tok) == null) {
                                        s.register(new Placeholder("kernel", tok, 2));
                                    }
                                }
                            }
                            if (Ip6RouteSyntax.isIpv6(text)) {
                                // The kernel namespace's IPv6 addresses are not modelled here: an IPv6 route is the
                                // kernel's to judge when usnet starts (ip -6 route add reports what it refuses).
                                continue;
                            }
                            Route rt = IpRouteSyntax.parse(text, s);
                            if (known) {
                                s.routes().addNew(rt);
                            }
                        } catch (RuntimeException ex) {
                            String where = known ? " in kernel namespace " + e.getKey() + " (which usnet creates empty)" : "";
                            problems.add(r.where(), routeMessage(r.text(), ex) + where);
                        }
                    }
                }
            } finally {
                s.close();
            }
        }
    }

    private static List<String> devTokens(String route) {
        List<String> l = new ArrayList<>();
        String[] t = route.split("\\s+");
        for (int i = 0; i + 1 < t.length; i++) {
            if (t[i].equals("dev")) {
                l.add(t[i + 1]);
            }
        }
        return l;
    }
}
