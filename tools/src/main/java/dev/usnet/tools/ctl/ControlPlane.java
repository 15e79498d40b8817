package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.build.Topology;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * What {@code usnet ctl} can see and change of a running topology, verb by verb (docs/ctl.md): the daemon's
 * rtnetlink. Requests arrive on the control server's worker threads; everything that reads or changes a namespace
 * runs on that namespace's own thread ({@link NsLoops}). Changes run one at a time, each checked completely before
 * anything is touched, so a refused request leaves everything as it was.
 */
public final class ControlPlane implements AutoCloseable {
    /** The version of the request/reply protocol (docs/ctl.md); a change that breaks a client bumps it. */
    public static final int PROTOCOL = 1;
    /** How long a namespace's thread may take to answer one request before the request fails. */
    static final long LOOP_TIMEOUT_MS = 5_000;

    /** What the running daemon lends the control plane. */
    public record Host(String name, String clock, Topology topology, Supplier<Apps> apps, Path outDir, NsLoops loops,
                       Supplier<List<Path>> writeHistograms, KernelTaps kernelTaps) {
        /** A daemon that lends no kernel access: {@code link add ... type tap} is refused. */
        public Host(String name, String clock, Topology topology, Supplier<Apps> apps, Path outDir, NsLoops loops,
                    Supplier<List<Path>> writeHistograms) {
            this(name, clock, topology, apps, outDir, loops, writeHistograms, KernelTaps.NONE);
        }
    }

    private final Host host;
    private final EventHub events;
    private final RuntimeCaptures captures;
    private final ReentrantLock changes = new ReentrantLock();
    private final LiveApps liveApps = new LiveApps();
    private final long startedNanos = System.nanoTime();

    public ControlPlane(Host host, EventHub events) {
        this.host = host;
        this.events = events;
        this.captures = new RuntimeCaptures(host.outDir());
    }

    public Host host() {
        return host;
    }

    public EventHub events() {
        return events;
    }

    Topology topology() {
        return host.topology();
    }

    RuntimeCaptures captures() {
        return captures;
    }

    LiveApps liveApps() {
        return liveApps;
    }

    /**
     * Carries out one request: {@code args} are the words of {@code usnet ctl} after its options ({@code route add
     * ...}), {@code ns} the namespace of {@code -n} (null: none given). Throws {@link CtlException} for a request
     * that cannot be carried out.
     */
    public Reply handle(String ns, List<String> args) {
        if (args == null || args.isEmpty()) {
            throw new CtlException("no verb given (one of: " + String.join(", ", VERBS) + ")");
        }
        Call c = new Call(this, ns, args);
        return switch (args.getFirst()) {
            case "version", "hello" -> version();
            case "ns", "netns" -> NsVerbs.run(c);
            case "link" -> LinkVerbs.run(c);
            case "addr", "address", "a" -> AddrVerbs.run(c);
            case "route", "r" -> RouteVerbs.run(c);
            case "neigh", "neighbour", "neighbor", "n" -> NeighVerbs.run(c);
            case "bridge" -> BridgeVerbs.run(c);
            case "sysctl" -> SysctlVerbs.run(c);
            case "netem", "qdisc" -> NetemVerbs.run(c);
            case "stats", "nstat" -> StatsVerbs.run(c);
            case "capture" -> CaptureVerbs.run(c);
            case "hist" -> histDump(c);
            case "apps" -> AppsVerbs.run(c);
            case "app" -> AppVerbs.run(c);
            case "ss" -> SsVerbs.run(c);
            case "conntrack" -> ConntrackVerbs.run(c);
            case "nft" -> NftVerbs.run(c);
            case "events" -> throw new CtlException("events is a stream: ask for it as its own request (usnet ctl events)");
            case "help" -> Reply.of(Map.of("verbs", VERBS), String.join("\n", HELP));
            default -> throw new CtlException("unknown verb '" + args.getFirst() + "' (one of: " + String.join(", ", VERBS) + ")");
        };
    }

    /**
     * Whether {@code args} ask for a capture streamed down the connection ({@code capture start NS/DEV - ...}),
     * which the server handles as a stream, as it does {@code events}.
     */
    static boolean isCaptureStream(List<String> args) {
        return args.size() >= 4 && args.get(0).equals("capture") && args.get(1).equals("start") && args.get(3).equals("-");
    }

    /** Starts a capture streamed into {@code sink} (see {@link CaptureVerbs#startStream}). */
    Reply streamCapture(String ns, List<String> args, CaptureStream.Sink sink, java.util.function.Consumer<CaptureStream> started) {
        return CaptureVerbs.startStream(new Call(this, ns, args), sink, started);
    }

    static final List<String> VERBS = List.of("version", "ns", "link", "addr", "route", "neigh", "bridge", "sysctl", "netem",
            "stats", "capture", "hist", "apps", "app", "ss", "conntrack", "nft", "events", "help");

    static final List<String> HELP = List.of(
            "version                                  protocol version, topology, clock, uptime",
            "ns list | ns add NAME | ns del NAME",
            "link show [DEV]",
            "link set DEV [up|down] [mtu N] [address MAC] [master BRIDGE|nomaster]",
            "link add NAME type veth peer [NS/]PEER | link add NAME type bridge | link del DEV",
            "link add NAME type tap kernel-netns KNS [kernel-name IFNAME] [vnet_hdr]   kernel end in ip netns KNS",
            "addr show [dev DEV] | addr add|del A.B.C.D/LEN dev DEV",
            "route show | route get ADDR | route add|del|replace ROUTE (ip route syntax)",
            "neigh show [dev DEV] | neigh add|replace IP lladdr MAC dev DEV | neigh del IP dev DEV | neigh flush [dev DEV]",
            "bridge fdb show [br BRIDGE] [dev PORT] | bridge fdb add|del MAC dev PORT | bridge link show",
            "bridge link set dev PORT [learning on|off] [flood on|off] [mcast_flood on|off] [hairpin on|off]",
            "sysctl -a | sysctl KEY... | sysctl -w KEY=VALUE...",
            "netem show [DEV] | netem set DEV SPEC... | netem del DEV",
            "stats",
            "capture start NS/DEV FILE|- [in|out|inout] [count N] | capture stop [FILE] | capture list",
            "hist dump",
            "apps",
            "app start KIND KEY VALUE ... | app stop NAME   KEY VALUE: a topology file's app keys",
            "ss [-t] [-i] [-n] [-l|-a]                TCP sockets as ss -tin shows them",
            "conntrack -L|-D [-s A] [-d A] [-p P] [--sport N] [--dport N] | conntrack -F|-S|-C",
            "nft [-a] list ruleset|table T | nft -f FILE | nft add|insert|delete|flush ...   nftables, as nft",
            "events");

    private Reply version() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("protocol", PROTOCOL);
        m.put("usnet", "0.1.0");
        m.put("topology", host.name());
        m.put("clock", host.clock());
        m.put("pid", ProcessHandle.current().pid());
        m.put("namespaces", topology().namespaces().size());
        m.put("uptime_s", Math.round((System.nanoTime() - startedNanos) / 1e6) / 1e3);
        return Reply.of(m, String.format("usnet 0.1.0, protocol %d: topology %s, clock %s, pid %d, %d namespaces, up %.3f s",
                PROTOCOL, host.name(), host.clock(), ProcessHandle.current().pid(), topology().namespaces().size(),
                (System.nanoTime() - startedNanos) / 1e9));
    }

    private Reply histDump(Call c) {
        Args a = c.args("hist dump");
        String sub = a.next("'dump'");
        if (!sub.equals("dump")) {
            throw a.unexpected(sub);
        }
        a.end();
        List<Path> files;
        try {
            files = host.writeHistograms().get();
        } catch (RuntimeException e) {
            throw new CtlException("writing histograms: " + e.getMessage(), e);
        }
        List<String> names = files.stream().map(Path::toString).toList();
        return Reply.of(Map.of("files", names), names.isEmpty() ? "no histograms to write (no namespace has histograms: true"
                + " and no TCP app has finished)" : "wrote " + names.size() + " histograms:\n" + String.join("\n", names));
    }

    /**
     * Stops what the control plane itself started: apps begun with {@code app start} (while the namespaces still
     * exist: the daemon closes the control plane once the file's apps have stopped), captures begun with {@code
     * capture start}.
     */
    @Override
    public void close() {
        List<String> errors = new ArrayList<>();
        liveApps.stopAll(topology(), errors);
        for (String e : errors) {
            System.err.println("usnet: " + e);
        }
        captures.closeAll();
    }

    // ---- helpers for the verbs ----

    /** The namespace named {@code name}, or a {@link CtlException} listing those there are. */
    NetStack stack(String name) {
        List<NetNamespace> all = topology().namespaces();
        if (name == null) {
            if (all.size() == 1) {
                return all.getFirst().stack();
            }
            throw new CtlException("which namespace? give -n NS (namespaces: " + names(all) + ")");
        }
        for (NetNamespace n : all) {
            if (n.name().equals(name)) {
                return n.stack();
            }
        }
        throw new CtlException("no namespace '" + name + "' (namespaces: " + names(all) + ")");
    }

    private static String names(List<NetNamespace> all) {
        List<String> l = new ArrayList<>();
        for (NetNamespace n : all) {
            l.add(n.name());
            if (l.size() == 20 && all.size() > 21) {
                l.add("... " + (all.size() - 20) + " more");
                break;
            }
        }
        return all.isEmpty() ? "none" : String.join(", ", l);
    }

    /** The device or a {@link CtlException} naming the namespace and what it has. */
    static Device device(NetStack s, String name) {
        Device d = s.device(name);
        if (d == null) {
            throw new CtlException("no device '" + name + "' in namespace " + s.name() + " (devices: "
                    + String.join(", ", s.devices().stream().map(Device::name).toList()) + ")");
        }
        return d;
    }

    /** Runs {@code task} on {@code s}'s thread and waits for it; what the core refuses becomes a {@link CtlException}. */
    <T> T onLoop(NetStack s, Callable<T> task) {
        return await(host.loops().submit(s, task), "namespace " + s.name());
    }

    /** Runs {@code task} where namespace-less changes run, and waits. */
    <T> T global(Callable<T> task) {
        return await(host.loops().submitGlobal(task), "the daemon");
    }

    /** A change: one at a time across all clients, run on {@code s}'s thread. */
    <T> T change(NetStack s, Callable<T> task) {
        changes.lock();
        try {
            return onLoop(s, task);
        } finally {
            changes.unlock();
        }
    }

    /**
     * A change that runs on the calling thread (one at a time with all others): what reaches into the kernel, which
     * a namespace's thread may no longer do once the daemon dropped its capabilities there. Its reads and changes of
     * a namespace still go through {@link #onLoop}.
     */
    <T> T exclusive(Callable<T> task) {
        changes.lock();
        try {
            return task.call();
        } catch (CtlException | IllegalArgumentException | IllegalStateException e) {
            throw e instanceof CtlException ce ? ce : new CtlException(e.getMessage(), e);
        } catch (Exception e) {
            throw new CtlException(e.toString(), e);
        } finally {
            changes.unlock();
        }
    }

    /** A change that belongs to no one namespace (creating or deleting one). */
    <T> T changeGlobal(Callable<T> task) {
        changes.lock();
        try {
            return global(task);
        } finally {
            changes.unlock();
        }
    }

    private static <T> T await(java.util.concurrent.CompletableFuture<T> f, String who) {
        try {
            return f.get(LOOP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            if (t instanceof CtlException ce) {
                throw ce;
            }
            if (t instanceof IllegalArgumentException || t instanceof IllegalStateException) {
                throw new CtlException(t.getMessage(), t);
            }
            throw new CtlException(who + ": " + t, t);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new CtlException(who + " did not answer within " + LOOP_TIMEOUT_MS + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CtlException("interrupted");
        }
    }

    /** One request: the control plane, the {@code -n} namespace and the words. */
    record Call(ControlPlane cp, String ns, List<String> words) {
        /** The words after the verb, read with {@code usage} in errors. */
        Args args(String usage) {
            return new Args(words, 1, usage);
        }

        NetStack stack() {
            return cp.stack(ns);
        }

        /** The namespace {@code -n} names, else every namespace, in the topology's order. */
        List<NetStack> stacksOrAll() {
            if (ns != null) {
                return List.of(stack());
            }
            List<NetStack> l = new java.util.ArrayList<>();
            for (dev.usnet.ns.NetNamespace n : cp.topology().namespaces()) {
                l.add(n.stack());
            }
            return l;
        }
    }
}
