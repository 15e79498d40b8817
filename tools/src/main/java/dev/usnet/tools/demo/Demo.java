package dev.usnet.tools.demo;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Pinger;
import dev.usnet.tools.app.TcpApp;
import dev.usnet.tools.app.UdpSender;
import dev.usnet.tools.app.UdpSink;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.run.VirtualSession;
import dev.usnet.ns.NetNamespace;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * {@code usnet demo}: examples/demo.yaml (two containers reach a host namespace once over veth + bridge and once
 * over veth + routing with proxy ARP; pings, UDP and TCP streams over both) built by the topology builder and run
 * with its apps, in real time (or virtual time); after a warm-up that is not counted, a measured window, and a
 * report from the built topology's stacks, apps and latency paths. The senders keep clones of what they sent (as
 * TCP's retransmission queue does), so the routed path must copy-on-write while the bridged path never edits a
 * packet.
 */
public final class Demo {
    /** Which clock the namespaces run on. */
    public enum Clock { REAL, VIRTUAL }

    /**
     * What to run: where output goes, how long to measure after how long a warm-up, the clock, the topology file
     * ({@code null}: the bundled examples/demo.yaml) and the values the command line sets in it.
     */
    public record Options(Path out, double seconds, double warmupSeconds, Clock clock, Path file,
                          DemoSpec.Overrides overrides) {}

    /** The topology to run, with the options, and the picture its file opens with. */
    public record Prepared(Options options, TopologySpec spec, String picture) {}

    /** A TCP stream's result: bytes the receiver got while measuring and the sender as ss -ti shows it. */
    public record TcpReport(String name, long bytes, long connectNanos, String ss) {}

    /** One row of the forwarding table: a namespace's ingress->egress path while measuring. */
    public record PathReport(String namespace, String path, String via, long packets, long bytes, long cowCopies,
                             long cowBytes, Histogram latency) {}

    /** Ping results per target. */
    public record PingReport(String name, long sent, long received, Histogram rtt) {}

    /**
     * A UDP stream's datagrams while measuring: sent, received by its sink, skipped by its pacer because it ran
     * late, and the payload of each.
     */
    public record UdpReport(String name, long sent, long received, long skipped, int payload) {}

    /** Everything the demo measured; {@code drops} is the whole run's drop table. */
    public record Report(Prepared prepared, List<PathReport> paths, List<PingReport> pings, List<UdpReport> udp,
                         List<TcpReport> tcp, List<String> drops, Path outDir) {
        public Options options() {
            return prepared.options();
        }
    }

    /** How long measuring waits at most for every TCP stream to connect after the warm-up. */
    static final long CONNECT_WAIT_NANOS = 5_000_000_000L;
    /** How long replies to the window's last pings may take to be counted. */
    static final long PING_GRACE_NANOS = 300_000_000L;

    private Demo() {}

    /** Reads the topology file and applies the command line to it; errors name the file and line. */
    public static Prepared prepare(Options o) {
        DemoSpec.Source src = o.file() == null ? DemoSpec.bundled() : DemoSpec.file(o.file());
        return new Prepared(o, DemoSpec.load(src, o.overrides()), DemoSpec.picture(src.text()));
    }

    /** The built topology with its apps, in either clock. */
    private interface Session extends AutoCloseable {
        Topology topology();

        Apps apps();

        /** Lets the namespaces run this long: sleeping in real time, running the virtual clock forward. */
        void advance(long nanos) throws InterruptedException;

        /** Stops the apps and deletes every namespace; the exit report's counts. */
        Daemon.Summary stop();

        @Override
        default void close() {
            stop();
        }
    }

    private static Session open(TopologySpec spec, Options o) {
        if (o.clock() == Clock.VIRTUAL) {
            VirtualSession v = VirtualSession.start(spec, o.out());
            return new Session() {
                public Topology topology() {
                    return v.topology();
                }

                public Apps apps() {
                    return v.apps();
                }

                public void advance(long nanos) {
                    v.runFor(nanos);
                }

                public Daemon.Summary stop() {
                    return v.stop();
                }
            };
        }
        // One event loop per namespace, as before the demo was a topology file; no busy polling (three loops
        // spinning would take the CPUs the namespaces need) and no TAP warm-up (there is no TAP).
        Daemon d = Daemon.start(spec, new Daemon.Options(o.out(), spec.namespaces().size(), 0, 0),
                Daemon.Providers.forThisBuild());
        return new Session() {
            public Topology topology() {
                return d.topology();
            }

            public Apps apps() {
                return d.apps();
            }

            public void advance(long nanos) throws InterruptedException {
                Thread.sleep(nanos / 1_000_000L, (int) (nanos % 1_000_000L));
            }

            public Daemon.Summary stop() {
                return d.stop();
            }
        };
    }

    /** The apps the report reads, by kind, in file order. */
    private record AppsByKind(List<Pinger> pings, List<UdpSender> senders, List<UdpSink> sinks,
                              List<TcpApp> tcp) {
        static AppsByKind of(Apps apps) {
            List<Pinger> p = new ArrayList<>();
            List<UdpSender> s = new ArrayList<>();
            List<UdpSink> k = new ArrayList<>();
            List<TcpApp> t = new ArrayList<>();
            for (App a : apps.list()) {
                switch (a) {
                    case Pinger x -> p.add(x);
                    case UdpSender x -> s.add(x);
                    case UdpSink x -> k.add(x);
                    case TcpApp x -> t.add(x);
                    default -> { }
                }
            }
            return new AppsByKind(p, s, k, t);
        }
    }

    /** The counters the report takes as differences between the start and the end of the measured window. */
    private record Snapshot(Map<String, PathReport> paths, long[] udpSent, long[] udpSkipped, long[] udpReceived,
                            long[] tcpReceived) {}

    public static Report run(Prepared p) throws IOException, InterruptedException {
        Options o = p.options();
        TopologySpec spec = p.spec();
        Files.createDirectories(o.out());
        try (Session s = open(spec, o)) {
            AppsByKind apps = AppsByKind.of(s.apps());
            List<UdpSink> sinkOf = new ArrayList<>();
            for (UdpSender u : apps.senders()) {
                sinkOf.add(sinkFor(spec, u, apps.sinks()));
            }
            // Warm-up (JIT, ARP) is excluded: everything measured is taken as a difference from its end.
            s.advance(Math.round(o.warmupSeconds() * 1e9));
            // A SYN evicted from an unresolved neighbour's queue comes back after TCP's 1 s initial RTO;
            // measuring starts once every stream runs, so that does not decide the TCP numbers.
            Topology topo = s.topology();
            for (long waited = 0; waited < CONNECT_WAIT_NANOS && apps.tcp().stream()
                    .anyMatch(t -> topo.onLoop(t.namespace(), () -> t.client().connectNanos()) < 0); waited += 20_000_000L) {
                s.advance(20_000_000L);
            }
            Snapshot start = snapshot(spec, topo, apps, sinkOf);
            for (Pinger ping : apps.pings()) {
                topo.onLoop(ping.namespace(), () -> {
                    ping.openWindow();
                    return null;
                });
            }
            s.advance(Math.round(o.seconds() * 1e9));
            Snapshot end = snapshot(spec, topo, apps, sinkOf);
            for (Pinger ping : apps.pings()) {
                topo.onLoop(ping.namespace(), () -> {
                    ping.closeWindow();
                    return null;
                });
            }
            List<TcpReport> tcp = new ArrayList<>();
            for (int i = 0; i < apps.tcp().size(); i++) {
                TcpApp t = apps.tcp().get(i);
                TcpInfo info = topo.onLoop(t.namespace(), () -> {
                    TcpSock sock = t.client().socket();
                    return sock == null ? null : sock.info();
                });
                long connect = topo.onLoop(t.namespace(), () -> t.client().connectNanos());
                tcp.add(new TcpReport(name("TCP", spec, t.namespace(), spec.serverAddress(t.namespace(), tcpSpec(spec, t))),
                        end.tcpReceived()[i] - start.tcpReceived()[i], connect,
                        info == null ? "not connected" : info.summary().trim() + "\n\t" + info.format()));
            }
            // Replies to the window's last requests are still on their way: they get this long (the old demo's wait
            // before closing its sockets).
            s.advance(PING_GRACE_NANOS);
            List<PingReport> pings = pings(spec, topo, apps);
            Daemon.Summary summary = s.stop();
            Report rep = new Report(p, paths(start, end), pings, udp(spec, apps, start, end), tcp,
                    summary.drops(), o.out());
            writeHistograms(rep);
            return rep;
        }
    }

    private static Snapshot snapshot(TopologySpec spec, Topology topo, AppsByKind apps, List<UdpSink> sinkOf) {
        Map<String, PathReport> paths = new LinkedHashMap<>();
        for (NetNamespace ns : topo.namespaces()) {
            NetStack st = ns.stack();
            for (LatencyPaths.Path lp : st.latency().all()) {
                paths.put(ns.name() + " " + lp.name(), new PathReport(ns.name(), lp.name(),
                        Via.forwarding(spec, st, ns.name(), lp.name()), lp.packets(), lp.bytes(), lp.cowCopies(),
                        lp.cowBytes(), lp.snapshot()));
            }
        }
        int nu = apps.senders().size();
        long[] us = new long[nu];
        long[] sk = new long[nu];
        long[] ur = new long[nu];
        for (int i = 0; i < nu; i++) {
            us[i] = apps.senders().get(i).sent();
            sk[i] = apps.senders().get(i).skipped();
            UdpSink sink = sinkOf.get(i);
            ur[i] = sink == null ? 0 : topo.onLoop(sink.namespace(), sink::received);
        }
        long[] tr = new long[apps.tcp().size()];
        for (int i = 0; i < tr.length; i++) {
            TcpApp t = apps.tcp().get(i);
            tr[i] = topo.onLoop(t.serverNamespace(), () -> t.server().bytesReceived());
        }
        return new Snapshot(paths, us, sk, ur, tr);
    }

    private static List<PathReport> paths(Snapshot start, Snapshot end) {
        List<PathReport> out = new ArrayList<>();
        for (var e : end.paths().entrySet()) {
            PathReport p = e.getValue();
            PathReport w = start.paths().get(e.getKey());
            Histogram lat = p.latency().copy();
            if (w != null) {
                lat.subtract(w.latency());
            }
            out.add(new PathReport(p.namespace(), p.path(), p.via(), p.packets() - (w == null ? 0 : w.packets()),
                    p.bytes() - (w == null ? 0 : w.bytes()), p.cowCopies() - (w == null ? 0 : w.cowCopies()),
                    p.cowBytes() - (w == null ? 0 : w.cowBytes()), lat));
        }
        return out;
    }

    /** The requests sent in the measured window and the replies to them (whenever they came). */
    private static List<PingReport> pings(TopologySpec spec, Topology topo, AppsByKind apps) {
        List<PingReport> out = new ArrayList<>();
        for (Pinger a : apps.pings()) {
            int to = dev.usnet.core.wire.Ipv4Addr.parse(a.to());
            out.add(topo.onLoop(a.namespace(), () -> new PingReport(name("", spec, a.namespace(), to).trim(),
                    a.windowSent(), a.windowReceived(), a.windowRtt())));
        }
        return out;
    }

    private static List<UdpReport> udp(TopologySpec spec, AppsByKind apps, Snapshot start, Snapshot end) {
        List<UdpReport> out = new ArrayList<>();
        for (int i = 0; i < apps.senders().size(); i++) {
            UdpSender u = apps.senders().get(i);
            out.add(new UdpReport(name("UDP", spec, u.namespace(), address(u)), end.udpSent()[i] - start.udpSent()[i],
                    end.udpReceived()[i] - start.udpReceived()[i], end.udpSkipped()[i] - start.udpSkipped()[i], u.size()));
        }
        return out;
    }

    /** {@code KIND src->dst via bridge|routing}. */
    private static String name(String kind, TopologySpec spec, String from, int to) {
        return kind + " " + from + "->" + Via.owner(spec, to) + " via " + Via.path(spec, from, to);
    }

    private static int address(UdpSender u) {
        String t = u.to();
        return dev.usnet.core.wire.Ipv4Addr.parse(t.substring(0, t.lastIndexOf(':')));
    }

    private static int port(UdpSender u) {
        String t = u.to();
        return Integer.parseInt(t.substring(t.lastIndexOf(':') + 1));
    }

    /** The sink on the sender's port in the namespace that holds its destination, or null. */
    private static UdpSink sinkFor(TopologySpec spec, UdpSender u, List<UdpSink> sinks) {
        String owner = Via.owner(spec, address(u));
        for (UdpSink k : sinks) {
            if (k.namespace().equals(owner) && k.port() == port(u)) {
                return k;
            }
        }
        return null;
    }

    /** The spec entry of a TCP app: the n-th TCP entry of its namespace, as Apps made them in file order. */
    private static TopologySpec.TcpApp tcpSpec(TopologySpec spec, TcpApp t) {
        for (TopologySpec.App a : spec.namespace(t.namespace()).apps()) {
            if (a instanceof TopologySpec.TcpApp x && spec.serverAddress(t.namespace(), x) != null
                    && (dev.usnet.core.wire.Ipv4Addr.format(spec.serverAddress(t.namespace(), x)) + ":" + x.common().port())
                    .equals(t.to())) {
                return x;
            }
        }
        throw new IllegalStateException("no spec entry for " + t.label());
    }

    private static void writeHistograms(Report r) throws IOException {
        for (PathReport p : r.paths()) {
            try (PrintStream ps = new PrintStream(Files.newOutputStream(r.outDir().resolve("fwd-" + p.path().replace("->", "-to-") + ".hgrm")))) {
                p.latency().outputPercentileDistribution(ps, 1000.0);
            }
        }
        for (PingReport p : r.pings()) {
            String file = "ping-" + p.name().replaceAll("[^A-Za-z0-9]+", "-") + ".hgrm";
            try (PrintStream ps = new PrintStream(Files.newOutputStream(r.outDir().resolve(file)))) {
                p.rtt().outputPercentileDistribution(ps, 1000.0);
            }
        }
    }

    private static final String[] COUNT_WORDS = {"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};

    /** What runs, before the numbers: the picture, the traffic, and what COW copies are. */
    public static void printIntro(Prepared p, PrintWriter out) {
        Options o = p.options();
        TopologySpec spec = p.spec();
        int n = spec.namespaces().size();
        out.println("usnet demo: " + (n < COUNT_WORDS.length ? COUNT_WORDS[n] : String.valueOf(n))
                + " network namespaces in one process, " + (o.clock() == Clock.VIRTUAL ? "in virtual time" : "in real time")
                + ", random seed " + spec.seed() + " (--seed)");
        out.println();
        out.print(p.picture().indent(2));
        out.println();
        List<String> from = new ArrayList<>();
        Map<String, List<String>> pinged = new LinkedHashMap<>();
        double pingInterval = -1;
        TopologySpec.UdpSend udp = null;
        List<String> udpPorts = new ArrayList<>();
        TopologySpec.TcpStream stream = null;
        for (TopologySpec.Ns ns : spec.namespaces()) {
            for (TopologySpec.App a : ns.apps()) {
                if (!(a instanceof TopologySpec.UdpSink) && !from.contains(ns.name())) {
                    from.add(ns.name());
                }
                switch (a) {
                    case TopologySpec.Ping ping when ping.to6() != null -> {
                        pingInterval = ping.intervalSeconds();
                        pinged.computeIfAbsent("over IPv6", k -> new ArrayList<>()).add(ping.to6().toString());
                    }
                    case TopologySpec.Ping ping -> {
                        pingInterval = ping.intervalSeconds();
                        String owner = Via.owner(spec, ping.to());
                        pinged.computeIfAbsent(owner.equals("host") ? "the host" : owner, k -> new ArrayList<>())
                                .add(dev.usnet.core.wire.Ipv4Addr.format(ping.to()));
                    }
                    case TopologySpec.UdpSend u -> {
                        udp = u;
                        udpPorts.add(String.valueOf(u.port()));
                    }
                    case TopologySpec.TcpStream t -> stream = t;
                    default -> { }
                }
            }
        }
        out.println("Traffic, all from " + String.join(", ", from) + ", the same over both paths:");
        if (pingInterval > 0) {
            List<String> to = new ArrayList<>();
            pinged.forEach((k, v) -> to.add(k + " (" + String.join(", ", v) + ")"));
            out.printf("  ping      every %s to %s%n", millis(pingInterval * 1e9), String.join(" and to ", to));
        }
        if (udp != null) {
            out.printf("  UDP       %d datagrams/s of %d bytes to %s port%s %s, one per path; the sender keeps its last %d%n",
                    udp.rate(), udp.size(), udp.to6() != null ? udp.to6().toString() : Via.owner(spec, udp.to()),
                    udpPorts.size() > 1 ? "s" : "",
                    String.join(" and ", udpPorts), udp.keepClones());
            out.printf("            as clones (as TCP's retransmission queue does) so forwarded bytes are shared%n");
        }
        if (stream != null) {
            String cc = stream.common().congestion() == null ? "default congestion control"
                    : stream.common().congestion().toUpperCase(Locale.ROOT);
            out.printf("  TCP       %s, %d bytes written %s to %s on each path%n", cc, stream.writeBytes(),
                    stream.intervalNanos() > 0 ? "every " + millis(stream.intervalNanos()) : "as fast as TCP takes them",
                    stream.common().server());
        }
        out.printf("  timing    %.1f s warm-up (JIT, ARP; not counted), then %.1f s measured%n", o.warmupSeconds(), o.seconds());
        out.println();
        out.println("COW copy: a forwarder that must edit a packet whose bytes another holder shares (the sender's clone)");
        out.println("  copies before writing (skb_cow / pskb_expand_head in Linux; usnet.forward.cow sets how much is copied).");
        out.println("  Routing makes them: the router decrements TTL and rewrites both MACs. The bridge forwards frames");
        out.println("  unmodified, so it never copies.");
        out.println();
    }

    private static String millis(double nanos) {
        double ms = nanos / 1e6;
        return ms == Math.rint(ms) ? String.format("%d ms", (long) ms) : String.format("%s ms", ms);
    }

    /** Prints the measured numbers, each table with what it means. Latencies in microseconds. */
    public static void print(Report r, PrintWriter out) {
        Options o = r.options();
        out.printf("Forwarding in the host, per port pair, while measuring (%.1f s): packets and bytes forwarded,%n",
                o.seconds());
        out.println("COW copies made and bytes they copied, and the time from arrival on the ingress port (into the host's");
        out.println("receive backlog) to transmit on the egress port:");
        out.printf("  %-10s %-20s %9s %12s %9s %11s %9s %9s %9s%n", "path", "via", "packets", "bytes", "cow", "cow bytes",
                "p50 us", "p99 us", "p99.9 us");
        for (PathReport p : r.paths()) {
            out.printf("  %-10s %-20s %9d %12d %9d %11d %9.2f %9.2f %9.2f%n", p.path(), p.via(), p.packets(), p.bytes(),
                    p.cowCopies(), p.cowBytes(), us(p.latency(), 50), us(p.latency(), 99), us(p.latency(), 99.9));
        }
        out.println();
        out.println("Ping round trips (through the sender's and the receiver's stacks as well as the host):");
        out.printf("  %-26s %6s %6s %9s %9s%n", "ping", "sent", "recv", "p50 us", "p99 us");
        for (PingReport p : r.pings()) {
            out.printf("  %-26s %6d %6d %9.2f %9.2f%n", p.name(), p.sent(), p.received(), us(p.rtt(), 50), us(p.rtt(), 99));
        }
        out.println();
        out.println("Streams while measuring (Mbit/s of payload; \"late\" = datagrams a UDP sender skipped because its");
        out.println("thread ran late by more than 10 ms, instead of sending them in one burst):");
        for (UdpReport u : r.udp()) {
            out.printf("  %-27s %7d sent %7d received %5d late  %7.1f Mbit/s%n", u.name(), u.sent(), u.received(),
                    u.skipped(), mbit(u.received() * u.payload(), o.seconds()));
        }
        for (TcpReport t : r.tcp()) {
            out.printf("  %-27s %9d bytes received       %7.1f Mbit/s; %s; sender (ss -ti):%n    %s%n", t.name(), t.bytes(),
                    mbit(t.bytes(), o.seconds()), t.connectNanos() < 0 ? "never connected"
                            : String.format("connected %.0f ms after connect()", t.connectNanos() / 1e6),
                    t.ss().replace("\n\t", "\n    "));
        }
        out.println();
        out.println("whole run:");
        r.drops().forEach(out::println);
        out.println();
        out.println("wrote pcaps (first 2000 frames per host port) and .hgrm files to " + r.outDir().toAbsolutePath());
    }

    private static double mbit(long bytes, double seconds) {
        return bytes * 8 / seconds / 1e6;
    }

    private static double us(Histogram h, double pct) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(pct) / 1000.0;
    }
}
