package dev.usnet.tools.demo;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.ipv4.Icmp;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.report.DropTable;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;

/**
 * The seed's picture in one process, in real time: two containers reach a host namespace once over
 * veth + bridge and once over veth + routing with proxy ARP; pings and UDP streams run over both paths.
 * Senders keep clones of what they sent (as TCP's retransmission queue does), so the routed path must
 * copy-on-write while the bridged path never edits a packet.
 */
public final class Demo {
    /** What to run. */
    public record Options(Path out, double seconds, double warmupSeconds, int ratePps, int payload, int keepClones,
                          int tcpChunk, long seed, Map<String, String> knobs) {}

    /** A TCP stream's result: bytes the receiver got while measuring and the sender as ss -ti shows it. */
    public record TcpReport(String name, long bytes, long connectNanos, String ss) {}

    /** One row of the report. */
    public record PathReport(String path, String via, long packets, long bytes, long cowCopies, long cowBytes,
                             Histogram latency) {}

    /** Ping results per target. */
    public record PingReport(String name, long sent, long received, Histogram rtt) {}

    /** A UDP stream's datagrams while measuring: sent, received, and skipped by its pacer because it ran late. */
    public record UdpReport(String name, long sent, long received, long skipped) {}

    /** Everything the demo measured. */
    public record Report(Options options, List<PathReport> paths, List<PingReport> pings, List<UdpReport> udp,
                         List<TcpReport> tcp, Map<String, Map<DropReason, Long>> drops, Path outDir) {}

    private static final int STREAM_PORT = 5001;
    /** host, ctr1, ctr2: each runs on its own event loop. */
    private static final int NAMESPACES = 3;

    private Demo() {}

    public static Report run(Options o) throws IOException, InterruptedException {
        Files.createDirectories(o.out);
        IoEventLoopGroup group = new MultiThreadIoEventLoopGroup(NAMESPACES, LocalIoHandler.newFactory());
        Map<String, Scheduler> byNs = new LinkedHashMap<>();
        List<PcapWriter> writers = new ArrayList<>();
        NamespaceRegistry reg = new NamespaceRegistry(n -> byNs.computeIfAbsent(n, x -> new RealTimeScheduler(group.next())), o.seed);
        try {
            NetNamespace host = reg.create("host");
            NetNamespace c1 = reg.create("ctr1");
            NetNamespace c2 = reg.create("ctr2");
            for (NetNamespace ns : reg.list()) {
                for (var k : o.knobs.entrySet()) {
                    ns.stack().knobs().set(k.getKey(), k.getValue());
                }
            }
            NetStack h = host.stack();
            h.knobs().set("net.ipv4.ip_forward", "1");
            // Bridged path: ctr eth0 <-> hbN, both hbN enslaved to br0 (198.18.0.1/24).
            var br = new dev.usnet.core.bridge.Bridge("br0", NamespaceRegistry.macFor("host/br0"));
            h.register(br);
            VethEnd[] b1 = reg.createVeth(c1, "eth0", host, "hb1");
            VethEnd[] b2 = reg.createVeth(c2, "eth0", host, "hb2");
            br.addPort(b1[1]);
            br.addPort(b2[1]);
            br.setUp(true);
            b1[1].setUp(true);
            b2[1].setUp(true);
            h.devinet().add(br, Ipv4Addr.parse("198.18.0.1"), 24);
            // Routed path: ctr eth1 <-> hrN with proxy ARP and /32 routes; the host's own address on lo.
            VethEnd[] r1 = reg.createVeth(c1, "eth1", host, "hr1");
            VethEnd[] r2 = reg.createVeth(c2, "eth1", host, "hr2");
            h.devinet().add(h.loopback(), Ipv4Addr.parse("198.18.1.1"), 32);
            for (VethEnd[] r : List.of(r1, r2)) {
                h.knobs().set("net.ipv4.conf." + r[1].name() + ".proxy_arp", "1");
                h.knobs().set("net.ipv4.neigh." + r[1].name() + ".proxy_delay", "0");
                r[1].setUp(true);
            }
            h.routes().add(hostRoute("198.18.1.11", r1[1]));
            h.routes().add(hostRoute("198.18.1.12", r2[1]));
            configureContainer(c1.stack(), b1[0], "198.18.0.11", r1[0], "198.18.1.11");
            configureContainer(c2.stack(), b2[0], "198.18.0.12", r2[0], "198.18.1.12");
            for (Device d : List.of(b1[1], b2[1], r1[1], r2[1])) {
                PcapWriter w = new PcapWriter(o.out.resolve(d.name() + ".pcap"));
                writers.add(w);
                long epoch = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
                d.addTap(new PcapTap(w, PcapTap.Direction.INOUT, epoch, 2000));
            }

            AtomicBoolean running = new AtomicBoolean(true);
            long[] received = new long[2];
            UdpSocket sink = onLoop(c2.stack(), () -> {
                UdpSocket s = c2.stack().udp().bind(0, STREAM_PORT);
                s.setReceiver((sock, src, port, buf, off, len) -> received[(src >>> 8 & 0xff) == 0 ? 0 : 1]++);
                return s;
            });
            List<Pinger> pingers = List.of(
                    new Pinger(c1.stack(), "ctr1->host via bridge", "198.18.0.1", 101),
                    new Pinger(c1.stack(), "ctr1->host via routing", "198.18.1.1", 102),
                    new Pinger(c1.stack(), "ctr1->ctr2 via bridge", "198.18.0.12", 103),
                    new Pinger(c1.stack(), "ctr1->ctr2 via routing", "198.18.1.12", 104));
            Streamer bridged = new Streamer(c1.stack(), "198.18.0.12", o, running);
            Streamer routed = new Streamer(c1.stack(), "198.18.1.12", o, running);
            for (Pinger p : pingers) {
                p.start(running);
            }
            bridged.start();
            routed.start();
            List<TcpStreamer> tcp = new ArrayList<>();
            List<String> tcpNames = List.of("TCP ctr1->ctr2 via bridge", "TCP ctr1->ctr2 via routing");
            if (o.tcpChunk > 0) {
                tcp.add(new TcpStreamer(c1.stack(), c2.stack(), "198.18.0.12", 5002, o.tcpChunk));
                tcp.add(new TcpStreamer(c1.stack(), c2.stack(), "198.18.1.12", 5003, o.tcpChunk));
                for (TcpStreamer t : tcp) {
                    onLoop(c2.stack(), () -> {
                        t.listen();
                        return null;
                    });
                    onLoop(c1.stack(), () -> {
                        t.connect();
                        return null;
                    });
                }
            }
            // Warm-up (JIT, ARP) is excluded: everything measured is taken as a difference from its end.
            Thread.sleep((long) (o.warmupSeconds * 1000));
            // A SYN evicted from an unresolved neighbour's queue comes back after TCP's 1 s initial RTO;
            // measuring starts once both streams run, so that does not decide the TCP numbers.
            long connectDeadline = System.nanoTime() + 5_000_000_000L;
            while (System.nanoTime() < connectDeadline && tcp.stream().anyMatch(t -> t.connectNanos < 0)) {
                Thread.sleep(20);
            }
            Map<String, PathReport> atWarm = new LinkedHashMap<>();
            for (LatencyPaths.Path p : h.latency().all()) {
                atWarm.put(p.name(), new PathReport(p.name(), "", p.packets(), p.bytes(), p.cowCopies(), p.cowBytes(), p.snapshot()));
            }
            for (Pinger p : pingers) {
                onLoop(c1.stack(), () -> {
                    p.measuring = true;
                    return null;
                });
            }
            long[] sentAtWarm = {bridged.sent, routed.sent};
            long[] skippedAtWarm = {bridged.skipped, routed.skipped};
            long[] tcpAtWarm = new long[tcp.size()];
            for (int i = 0; i < tcp.size(); i++) {
                TcpStreamer t = tcp.get(i);
                tcpAtWarm[i] = onLoop(c2.stack(), () -> t.received);
            }
            long[] recvAtWarm = onLoop(c2.stack(), received::clone);
            Thread.sleep((long) (o.seconds * 1000));
            running.set(false);
            List<TcpReport> tcpReports = new ArrayList<>();
            for (int i = 0; i < tcp.size(); i++) {
                TcpStreamer t = tcp.get(i);
                long got = onLoop(c2.stack(), () -> t.received) - tcpAtWarm[i];
                var info = onLoop(c1.stack(), t::info);
                tcpReports.add(new TcpReport(tcpNames.get(i), got, t.connectNanos,
                        info == null ? "not connected" : info.summary().trim() + "\n\t" + info.format()));
                onLoop(c1.stack(), () -> {
                    t.stop();
                    return null;
                });
            }
            // Lets what is in flight arrive and the FINs close the TCP streams, so teardown drops nothing.
            Thread.sleep(300);
            for (TcpStreamer t : tcp) {
                onLoop(c2.stack(), () -> {
                    t.closeServer();
                    return null;
                });
            }
            onLoop(c1.stack(), () -> {
                bridged.close();
                routed.close();
                for (Pinger p : pingers) {
                    p.close();
                }
                return null;
            });
            onLoop(c2.stack(), () -> {
                sink.close();
                return null;
            });

            List<PathReport> paths = new ArrayList<>();
            for (LatencyPaths.Path p : h.latency().all()) {
                String via = p.name().startsWith("hb") ? "bridge br0" : p.name().startsWith("hr") ? "routing, proxy ARP" : "";
                PathReport w = atWarm.get(p.name());
                Histogram lat = p.snapshot();
                if (w != null) {
                    lat.subtract(w.latency());
                }
                paths.add(new PathReport(p.name(), via, p.packets() - (w == null ? 0 : w.packets()),
                        p.bytes() - (w == null ? 0 : w.bytes()), p.cowCopies() - (w == null ? 0 : w.cowCopies()),
                        p.cowBytes() - (w == null ? 0 : w.cowBytes()), lat));
            }
            List<PingReport> pings = new ArrayList<>();
            for (Pinger p : pingers) {
                pings.add(new PingReport(p.name, p.sent, p.received, p.rtt));
            }
            Map<String, Map<DropReason, Long>> drops = new LinkedHashMap<>();
            for (NetNamespace ns : reg.list()) {
                drops.put(ns.name(), ns.stack().drops().snapshot());
            }
            long[] recvAtEnd = onLoop(c2.stack(), received::clone);
            List<UdpReport> udp = List.of(
                    new UdpReport("UDP ctr1->ctr2 via bridge", bridged.sent - sentAtWarm[0], recvAtEnd[0] - recvAtWarm[0],
                            bridged.skipped - skippedAtWarm[0]),
                    new UdpReport("UDP ctr1->ctr2 via routing", routed.sent - sentAtWarm[1], recvAtEnd[1] - recvAtWarm[1],
                            routed.skipped - skippedAtWarm[1]));
            Report rep = new Report(o, paths, pings, udp, tcpReports, drops, o.out);
            writeHistograms(rep);
            return rep;
        } finally {
            reg.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            for (PcapWriter w : writers) {
                w.close();
            }
        }
    }

    private static Route hostRoute(String ip, Device dev) {
        return new Route(Ipv4Addr.parse(ip), 32, RouteType.UNICAST, 0, dev, 0, 0, false);
    }

    private static void configureContainer(NetStack s, Device bridged, String bridgedIp, Device routed, String routedIp) {
        s.devinet().add(bridged, Ipv4Addr.parse(bridgedIp), 24);
        s.devinet().add(routed, Ipv4Addr.parse(routedIp), 24);
        bridged.setUp(true);
        routed.setUp(true);
    }

    private static <T> T onLoop(NetStack s, java.util.concurrent.Callable<T> task) throws InterruptedException {
        var f = ((RealTimeScheduler) s.scheduler()).executor().submit(task);
        try {
            return f.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("namespace " + s.name() + " did not answer: " + e, e);
        }
    }

    private static void writeHistograms(Report r) throws IOException {
        for (PathReport p : r.paths) {
            try (PrintStream ps = new PrintStream(Files.newOutputStream(r.outDir.resolve("fwd-" + p.path.replace("->", "-to-") + ".hgrm")))) {
                p.latency.outputPercentileDistribution(ps, 1000.0);
            }
        }
        for (PingReport p : r.pings) {
            String file = "ping-" + p.name.replaceAll("[^A-Za-z0-9]+", "-") + ".hgrm";
            try (PrintStream ps = new PrintStream(Files.newOutputStream(r.outDir.resolve(file)))) {
                p.rtt.outputPercentileDistribution(ps, 1000.0);
            }
        }
    }

    /** The namespaces, links and addresses {@link #run} builds. */
    static final String TOPOLOGY = """
              ctr1                           host  (ip_forward=1)                         ctr2
        +-----------------+        +-------------------------------------+        +-----------------+
        | eth0            |  veth  | hb1 ---- br0 198.18.0.1/24 ---- hb2 |  veth  | eth0            |
        | 198.18.0.11/24  |========|          (bridge, layer 2)          |========| 198.18.0.12/24  |
        |                 |        |                                     |        |                 |
        | eth1            |  veth  | hr1      lo 198.18.1.1/32       hr2 |  veth  | eth1            |
        | 198.18.1.11/24  |========| proxy_arp      routing    proxy_arp |========| 198.18.1.12/24  |
        +-----------------+        | 198.18.1.11/32 dev hr1              |        +-----------------+
                                   | 198.18.1.12/32 dev hr2              |
                                   +-------------------------------------+
        bridged path: ctr1 eth0 -> hb1 -> br0 -> hb2 -> ctr2 eth0 (one subnet; the host switches frames)
        routed path:  ctr1 eth1 -> hr1 -> IP forwarding -> hr2 -> ctr2 eth1 (hr1/hr2 answer ARP for the
                      other side by proxy ARP, so each container sees one flat /24)
        """;

    /** What runs, before the numbers: the picture, the traffic, and what COW copies are. */
    public static void printIntro(Options o, PrintWriter out) {
        out.println("usnet demo: three network namespaces in one process, in real time, random seed " + o.seed
                + " (--seed)");
        out.println();
        out.print(TOPOLOGY.indent(2));
        out.println();
        out.println("Traffic, all from ctr1, the same over both paths:");
        out.printf("  ping      every 10 ms to the host (198.18.0.1, 198.18.1.1) and to ctr2 (198.18.0.12, 198.18.1.12)%n");
        out.printf("  UDP       %d datagrams/s of %d bytes to ctr2 port %d on each path; the sender keeps its last %d%n",
                o.ratePps, o.payload, STREAM_PORT, o.keepClones);
        out.printf("            as clones (as TCP's retransmission queue does) so forwarded bytes are shared%n");
        if (o.tcpChunk > 0) {
            out.printf("  TCP       CUBIC, %d bytes written every 10 ms to ctr2 on each path%n", o.tcpChunk);
        }
        out.printf("  timing    %.1f s warm-up (JIT, ARP; not counted), then %.1f s measured%n", o.warmupSeconds, o.seconds);
        out.println();
        out.println("COW copy: a forwarder that must edit a packet whose bytes another holder shares (the sender's clone)");
        out.println("  copies before writing (skb_cow / pskb_expand_head in Linux; usnet.forward.cow sets how much is copied).");
        out.println("  Routing makes them: the router decrements TTL and rewrites both MACs. The bridge forwards frames");
        out.println("  unmodified, so it never copies.");
        out.println();
    }

    /** Prints the measured numbers, each table with what it means. Latencies in microseconds. */
    public static void print(Report r, PrintWriter out) {
        Options o = r.options();
        out.printf("Forwarding in the host, per port pair, while measuring (%.1f s): packets and bytes forwarded,%n",
                o.seconds);
        out.println("COW copies made and bytes they copied, and the time from arrival on the ingress port (into the host's");
        out.println("receive backlog) to transmit on the egress port:");
        out.printf("  %-10s %-20s %9s %12s %9s %11s %9s %9s %9s%n", "path", "via", "packets", "bytes", "cow", "cow bytes",
                "p50 us", "p99 us", "p99.9 us");
        for (PathReport p : r.paths) {
            out.printf("  %-10s %-20s %9d %12d %9d %11d %9.2f %9.2f %9.2f%n", p.path, p.via, p.packets, p.bytes, p.cowCopies,
                    p.cowBytes, us(p.latency, 50), us(p.latency, 99), us(p.latency, 99.9));
        }
        out.println();
        out.println("Ping round trips (through the sender's and the receiver's stacks as well as the host):");
        out.printf("  %-26s %6s %6s %9s %9s%n", "ping", "sent", "recv", "p50 us", "p99 us");
        for (PingReport p : r.pings) {
            out.printf("  %-26s %6d %6d %9.2f %9.2f%n", p.name, p.sent, p.received, us(p.rtt, 50), us(p.rtt, 99));
        }
        out.println();
        out.println("Streams while measuring (Mbit/s of payload; \"late\" = datagrams a UDP sender skipped because its");
        out.println("thread ran late by more than 10 ms, instead of sending them in one burst):");
        for (UdpReport u : r.udp) {
            out.printf("  %-27s %7d sent %7d received %5d late  %7.1f Mbit/s%n", u.name, u.sent, u.received, u.skipped,
                    mbit(u.received * o.payload, o.seconds));
        }
        for (TcpReport t : r.tcp) {
            out.printf("  %-27s %9d bytes received       %7.1f Mbit/s; %s; sender (ss -ti):%n    %s%n", t.name, t.bytes,
                    mbit(t.bytes, o.seconds), t.connectNanos < 0 ? "never connected"
                            : String.format("connected %.0f ms after connect()", t.connectNanos / 1e6),
                    t.ss.replace("\n\t", "\n    "));
        }
        out.println();
        printDrops(r, out);
        out.println();
        out.println("wrote pcaps (first 2000 frames per host port) and .hgrm files to " + r.outDir.toAbsolutePath());
    }

    /** The drop counters of the whole run by namespace and reason, with what each reason that occurred means. */
    static void printDrops(Report r, PrintWriter out) {
        out.println("whole run:");
        DropTable.lines(r.drops()).forEach(out::println);
    }

    private static double mbit(long bytes, double seconds) {
        return bytes * 8 / seconds / 1e6;
    }

    private static double us(Histogram h, double pct) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(pct) / 1000.0;
    }

    /** Sends one echo request every 10 ms and records round-trip times. */
    private static final class Pinger {
        final NetStack s;
        final String name;
        final int dst;
        final int id;
        final Histogram rtt = new Histogram(3);
        long sent;
        long received;
        volatile boolean measuring;
        long sentTotal;
        private final ByteBuf payload = Unpooled.buffer(56);
        private final Map<Integer, Long> outstanding = new LinkedHashMap<>();

        Pinger(NetStack s, String name, String dst, int id) {
            this.s = s;
            this.name = name;
            this.dst = Ipv4Addr.parse(dst);
            this.id = id;
            payload.writeZero(56);
        }

        void start(AtomicBoolean running) {
            s.scheduler().execute(() -> s.icmp().openPing(id, this::reply));
            tick(running);
        }

        private void reply(int from, int seq, ByteBuf data, int off, int len) {
            Long t = outstanding.remove(seq);
            if (t != null && measuring) {
                received++;
                rtt.recordValue(Math.max(0, s.now() - t));
            }
        }

        private void tick(AtomicBoolean running) {
            s.scheduler().schedule(() -> {
                if (!running.get()) {
                    return;
                }
                int seq = (int) (sentTotal++ & 0xffff);
                // Only requests sent while measuring are timed; late replies to warm-up pings are ignored.
                if (measuring) {
                    outstanding.put(seq, s.now());
                    sent++;
                } else {
                    outstanding.remove(seq);
                }
                s.icmp().sendEcho(dst, id, seq, payload, 0, 56, 0);
                tick(running);
            }, 10_000_000L);
        }

        void close() {
            s.icmp().closePing(id);
        }
    }

    /** A paced UDP sender whose socket keeps clones of recent datagrams (TCP-like sharing). */
    private static final class Streamer {
        final NetStack s;
        final int dst;
        final Options o;
        final AtomicBoolean running;
        final ByteBuf data;
        final Pacer pacer;
        UdpSocket sock;
        volatile long sent;
        volatile long skipped;

        Streamer(NetStack s, String dst, Options o, AtomicBoolean running) {
            this.s = s;
            this.dst = Ipv4Addr.parse(dst);
            this.o = o;
            this.running = running;
            this.data = Unpooled.buffer(o.payload).writeZero(o.payload);
            this.pacer = new Pacer(o.ratePps);
        }

        void start() {
            s.scheduler().execute(() -> {
                sock = s.udp().bind(0, 0);
                sock.setKeepClones(o.keepClones);
                pacer.start(s.now());
                tick();
            });
        }

        private void tick() {
            if (!running.get()) {
                return;
            }
            for (long n = pacer.due(s.now()); n > 0; n--) {
                sock.sendTo(dst, STREAM_PORT, data, 0, o.payload);
                sent++;
            }
            skipped = pacer.skipped();
            s.scheduler().schedule(this::tick, 1_000_000L);
        }

        void close() {
            if (sock != null) {
                sock.close();
            }
        }
    }
}
