package dev.usnet.perf.floods;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.ipv4.IcmpSysctl;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.neigh.NeighSysctl;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.perf.MiniJson;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Scenario benchmark floods: five hostile floods, each at a namespace built for it in virtual time (deterministic,
 * seeded), each with a legitimate flow beside it. For each: the retained heap's peak above the pre-flood baseline
 * (sampled with full GCs), drops by reason over the DUT's namespaces, the state the bound keeps small, and whether
 * the legitimate flow stayed within its stated bound. {@code perf-tests/floods.sh} runs it.
 *
 * <p>Arguments: {@code JSON_FILE [SCALE [NAMES]]}; SCALE (default 1) multiplies every flood's size, for a quick
 * look; NAMES (comma-separated, default all) picks floods by name.
 *
 * <table>
 * <caption>The floods</caption>
 * <tr><th>name</th><th>at</th><th>bounded by</th></tr>
 * <tr><td>mac-flood</td><td>a bridge port</td><td>fdb_max_learned</td></tr>
 * <tr><td>syn-flood</td><td>a listener</td><td>its backlog, SYN cookies</td></tr>
 * <tr><td>fragment-flood</td><td>a host</td><td>ipfrag_high_thresh, ipfrag_time</td></tr>
 * <tr><td>neighbour-flood</td><td>a router</td><td>gc_thresh1/2/3, unres_qlen_bytes</td></tr>
 * <tr><td>icmp-storm</td><td>a router</td><td>icmp_msgs_per_sec</td></tr>
 * <tr><td>conntrack-syn-flood</td><td>a port published by DNAT through a NAT router</td><td>nf_conntrack_max,
 * early_drop</td></tr>
 * </table>
 */
public final class Floods {
    private static final long MS = 1_000_000L;
    private static final long SEC = 1_000_000_000L;
    /** Full-GC heap samples per flood. */
    private static final int SAMPLES = 8;

    private Floods() {
    }

    /** One flood's outcome. */
    record Result(String name, String clock, long peakHeapBytes, String heapSamples, Map<String, Long> drops,
            boolean legitOk, String bound, Map<String, Object> legit, Map<String, Object> state) {
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "perf-tests/target/floods.json");
        double scale = args.length > 1 ? Double.parseDouble(args[1]) : 1.0;
        Map<String, java.util.function.DoubleFunction<Result>> floods = new LinkedHashMap<>();
        floods.put("mac-flood", Floods::macFlood);
        floods.put("syn-flood", Floods::synFlood);
        floods.put("fragment-flood", Floods::fragmentFlood);
        floods.put("neighbour-flood", Floods::neighbourFlood);
        floods.put("icmp-storm", Floods::icmpStorm);
        floods.put("conntrack-syn-flood", ConntrackSynFlood::run);
        List<String> names = args.length > 2 ? List.of(args[2].split(",")) : List.copyOf(floods.keySet());
        for (String name : names) {
            if (!floods.containsKey(name)) {
                throw new IllegalArgumentException("no flood named '" + name + "'; there are " + floods.keySet());
            }
        }
        List<Result> results = new ArrayList<>();
        for (String name : names) {
            results.add(floods.get(name).apply(scale));
        }
        StringBuilder b = new StringBuilder("{\"benchmark\": \"floods\", \"scale\": ").append(MiniJson.num(scale))
                .append(", \"floods\": [\n");
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            b.append("  {\"name\": ").append(MiniJson.quote(r.name)).append(", \"clock\": ").append(MiniJson.quote(r.clock))
                    .append(", \"peak_heap_bytes\": ").append(r.peakHeapBytes)
                    .append(", \"heap_samples_bytes\": [").append(r.heapSamples).append(']')
                    .append(", \"drops\": ").append(json(r.drops))
                    .append(", \"legit_ok\": ").append(r.legitOk)
                    .append(", \"bound\": ").append(MiniJson.quote(r.bound))
                    .append(", \"legit\": ").append(json(r.legit))
                    .append(", \"state\": ").append(json(r.state)).append('}')
                    .append(i < results.size() - 1 ? ",\n" : "\n");
        }
        b.append("]}\n");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, b.toString());
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-20s peak heap %8.1f KB  legit %s  drops %s%n", r.name,
                    r.peakHeapBytes / 1024.0, r.legitOk ? "ok" : "NOT OK", r.drops);
        }
        System.out.println("wrote " + out);
    }

    private static String json(Map<String, ?> m) {
        StringBuilder b = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, ?> e : m.entrySet()) {
            if (!first) {
                b.append(", ");
            }
            first = false;
            b.append(MiniJson.quote(e.getKey())).append(": ");
            Object v = e.getValue();
            if (v instanceof Map<?, ?> sub) {
                @SuppressWarnings("unchecked")
                Map<String, ?> s = (Map<String, ?>) sub;
                b.append(json(s));
            } else if (v instanceof Double d) {
                b.append(MiniJson.num(d));
            } else if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else {
                b.append(MiniJson.quote(String.valueOf(v)));
            }
        }
        return b.append('}').toString();
    }

    /**
     * Drives a flood of {@code n} frames spread evenly over {@code durationNanos}: {@code send} makes frame i; the
     * heap is sampled {@link #SAMPLES} times along the way.
     */
    static void drive(FloodNet net, long n, long durationNanos, HeapProbe heap, java.util.function.LongConsumer send) {
        long start = net.now();
        long every = Math.max(1, n / SAMPLES);
        // One early sample as well, to show where the growth stops.
        long early = Math.max(1, n / (8 * SAMPLES));
        for (long i = 0; i < n; i++) {
            net.vs.runUntil(start + durationNanos * i / n);
            send.accept(i);
            if ((i + 1) % every == 0 || i + 1 == early) {
                net.vs.runUntil(net.now());
                heap.sample();
            }
        }
        net.vs.runUntil(start + durationNanos);
    }

    private static boolean udpOk(UdpProbeFlow f) {
        return f.sent() > 0 && f.lossFraction() <= 0.001 && f.p99Us() <= 1000;
    }

    private static final String UDP_BOUND = "legit UDP: loss <= 0.1% and one-way p99 latency <= 1 ms (virtual time)";

    // ---------------------------------------------------------------------------------------------------------
    // MAC flood into a bridge

    /**
     * 10^6 frames from random source MACs to random unicast destinations into a port of br0, while host a sends to
     * host b across it. The FDB stops learning at fdb_max_learned (usnet's default 65 536); what it could not learn
     * is counted (FDB_FULL) and still flooded.
     */
    static Result macFlood(double scale) {
        try (FloodNet net = new FloodNet()) {
            NetStack sw = net.ns("sw");
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            Bridge br = new Bridge("br0", NamespaceRegistry.macFor("sw/br0"));
            sw.register(br);
            br.setUp(true);
            VethEnd[] la = net.link(a, "eth0", "198.18.10.1/24", sw, "pa", null);
            VethEnd[] lb = net.link(b, "eth0", "198.18.10.2/24", sw, "pb", null);
            VethEnd x = net.attacker(sw, "px", null);
            br.addPort(la[1]);
            br.addPort(lb[1]);
            br.addPort(sw.device("px"));
            UdpProbeFlow legit = new UdpProbeFlow(a, b, "198.18.10.2", 7001, MS, 1000);
            legit.start();
            net.vs.runFor(500 * MS);
            legit.reset();
            HeapProbe heap = new HeapProbe();
            long n = (long) (1_000_000 * scale);
            long duration = 10 * SEC;
            SplittableRandom rnd = new SplittableRandom(1);
            ByteBuf f = Unpooled.buffer(64);
            drive(net, n, duration, heap, i -> {
                long src = rnd.nextLong() & 0xfeff_ffff_ffffL | 0x0200_0000_0000L;
                long dst = rnd.nextLong() & 0xfeff_ffff_ffffL | 0x0200_0000_0000L;
                f.clear();
                f.writerIndex(60);
                f.setZero(0, 60);
                EthernetFrame.write(f, 0, dst, src, EthernetFrame.ETH_P_IP);
                FloodNet.inject(x, f, 60);
            });
            legit.stop();
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("frames", n);
            state.put("fdb_max_learned", br.fdbMaxLearned());
            state.put("fdb_learned", br.fdb().learnedCount());
            state.put("fdb_entries", br.fdb().size());
            state.put("learn_failures", br.fdb().learnFailures());
            legit.close();
            return new Result("mac-flood", "virtual", heap.peak(), heap.samples(), net.drops(), udpOk(legit), UDP_BOUND,
                    legit.report(duration), state);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // SYN flood at a listener

    /**
     * 10^6 SYNs from spoofed sources (198.18.128.0/17, random ports, Linux's options) at a listener with backlog 128,
     * while a client opens a connection every 100 ms and sends 10 KB on it. The SYN queue fills with the first 129
     * and stays full (their SYN-ACKs go unanswered for a minute); every later SYN, the client's included, is
     * answered with a cookie and the client's final ACK makes its connection.
     */
    static Result synFlood(double scale) {
        try (FloodNet net = new FloodNet()) {
            NetStack srv = net.ns("srv");
            NetStack cli = net.ns("cli");
            net.link(cli, "eth0", "198.18.20.2/24", srv, "eth0", "198.18.20.1/24");
            VethEnd x = net.attacker(srv, "eth1", "198.18.21.1/24");
            FloodNet.route(srv, "198.18.128.0/17", "198.18.21.2", srv.device("eth1") instanceof VethEnd v ? v : null);
            srv.neigh().addPermanent(srv.device("eth1"), Ipv4Addr.parse("198.18.21.2"), x.mac());
            Tcp stcp = Tcp.of(srv);
            int[] accepted = {0};
            long[] received = {0};
            TcpListener l = stcp.listen(0, 80, 128, c -> {
                accepted[0]++;
                c.setCallbacks(new TcpSock.Callbacks() {
                    @Override
                    public void readable(TcpSock s) {
                        int k;
                        while ((k = s.skip(1 << 20)) > 0) {
                            received[0] += k;
                        }
                        if (k < 0) {
                            s.close();
                        }
                    }
                });
            });
            Tcp ctcp = Tcp.of(cli);
            int bytesPer = 10_000;
            ByteBuf data = Unpooled.wrappedBuffer(new byte[bytesPer]);
            List<long[]> conns = new ArrayList<>();
            // A connection every 100 ms: [start, connected-at or -1]; it writes 10 KB and closes.
            Runnable[] opener = new Runnable[1];
            boolean[] opening = {true};
            opener[0] = () -> {
                if (!opening[0]) {
                    return;
                }
                long[] c = {cli.now(), -1};
                conns.add(c);
                ctcp.connect(Ipv4Addr.parse("198.18.20.1"), 80, new TcpSock.Callbacks() {
                    @Override
                    public void connected(TcpSock s) {
                        c[1] = cli.now();
                        s.write(data, 0, bytesPer);
                        s.shutdownOutput();
                    }
                });
                cli.schedule(opener[0], 100 * MS);
            };
            net.vs.runFor(200 * MS);
            HeapProbe heap = new HeapProbe();
            cli.schedule(opener[0], 0);
            long n = (long) (1_000_000 * scale);
            long duration = 10 * SEC;
            SplittableRandom rnd = new SplittableRandom(2);
            ByteBuf f = Unpooled.buffer(128);
            int dst = Ipv4Addr.parse("198.18.21.1");
            long dstMac = srv.device("eth1").mac();
            drive(net, n, duration, heap, i -> {
                int src = Ipv4Addr.parse("198.18.128.0") + rnd.nextInt(1 << 15);
                int len = synFrame(f, x.mac(), dstMac, src, dst, 1024 + rnd.nextInt(60000), 80, rnd.nextInt());
                FloodNet.inject(x, f, len);
            });
            opening[0] = false;
            net.vs.runFor(2 * SEC);
            int complete = 0;
            long worstHandshake = 0;
            for (long[] c : conns) {
                if (c[1] >= 0) {
                    complete++;
                    worstHandshake = Math.max(worstHandshake, c[1] - c[0]);
                }
            }
            Map<String, Object> legit = new LinkedHashMap<>();
            legit.put("kind", "a TCP connection every 100 ms, 10 KB each, then close");
            legit.put("connections", conns.size());
            legit.put("handshakes_completed", complete);
            legit.put("accepted", accepted[0]);
            legit.put("bytes_received", received[0]);
            legit.put("bytes_expected", (long) conns.size() * bytesPer);
            legit.put("worst_handshake_ms", worstHandshake / 1e6);
            boolean ok = !conns.isEmpty() && complete == conns.size() && accepted[0] == conns.size()
                    && received[0] == (long) conns.size() * bytesPer && worstHandshake < SEC;
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("syns", n);
            state.put("backlog", l.backlog());
            state.put("syn_queue", l.synQueueLength());
            state.put("sockets", stcp.sockets().size());
            for (Mib m : new Mib[] {Mib.TcpExtSyncookiesSent, Mib.TcpExtSyncookiesRecv, Mib.TcpExtSyncookiesFailed,
                    Mib.TcpExtTCPReqQFullDoCookies, Mib.TcpExtListenOverflows, Mib.TcpExtListenDrops}) {
                state.put(m.name(), srv.mib().get(m));
            }
            return new Result("syn-flood", "virtual", heap.peak(), heap.samples(), net.drops(), ok,
                    "every legit connection completes its handshake in under 1 s (no SYN retransmission) and "
                            + "delivers its 10 KB", legit, state);
        }
    }

    /** A SYN with Linux's options (MSS 1460, SACK, timestamps, window scale 7); returns the frame's length. */
    static int synFrame(ByteBuf f, long srcMac, long dstMac, int src, int dst, int sport, int dport, int seq) {
        int tcpLen = TcpSegment.MIN_HEADER_LEN + 20;
        int len = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + tcpLen;
        f.clear();
        f.writerIndex(len);
        EthernetFrame.write(f, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        int ip = EthernetFrame.HEADER_LEN;
        writeIp(f, ip, Ipv4Packet.MIN_HEADER_LEN + tcpLen, 0, 0x4000, Ipv4Packet.PROTO_TCP, src, dst);
        int t = ip + Ipv4Packet.MIN_HEADER_LEN;
        int i = TcpSegment.writeHeader(f, t, sport, dport, seq & 0xffff_ffffL, 0, tcpLen, TcpSegment.SYN, 64240);
        f.setByte(i++, 2).setByte(i++, 4).setShort(i, 1460);
        i += 2;
        f.setByte(i++, 4).setByte(i++, 2);
        f.setByte(i++, 8).setByte(i++, 10).setInt(i, seq).setInt(i + 4, 0);
        i += 8;
        f.setByte(i++, 1).setByte(i++, 3).setByte(i++, 3).setByte(i, 7);
        long ph = Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_TCP, tcpLen);
        f.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(f, t, tcpLen, ph)));
        return len;
    }

    private static void writeIp(ByteBuf f, int ip, int totalLen, int id, int frag, int proto, int src, int dst) {
        f.setByte(ip, 0x45).setByte(ip + 1, 0).setShort(ip + 2, totalLen).setShort(ip + 4, id)
                .setShort(ip + 6, frag).setByte(ip + 8, 64).setByte(ip + 9, proto).setShort(ip + 10, 0)
                .setInt(ip + 12, src).setInt(ip + 16, dst);
        f.setShort(ip + Ipv4Packet.CHECKSUM, Checksum.compute(f, ip, Ipv4Packet.MIN_HEADER_LEN));
    }

    // ---------------------------------------------------------------------------------------------------------
    // Fragment flood

    /**
     * 10^6 fragments at a host, in turn: a first fragment that never gets its rest, a tiny 8-byte fragment at a
     * random offset, and a pair overlapping each other. Reassembly memory stops at ipfrag_high_thresh (4 MiB as
     * counted); above it every fragment is refused until ipfrag_time (30 s) expires queues, as in Linux since 4.17.
     * The legit flow is unfragmented; a fragmented probe (3000-byte datagrams every 100 ms) is reported beside it.
     */
    static Result fragmentFlood(double scale) {
        try (FloodNet net = new FloodNet()) {
            NetStack dstNs = net.ns("dst");
            NetStack cli = net.ns("cli");
            net.link(cli, "eth0", "198.18.31.2/24", dstNs, "eth0", "198.18.31.1/24");
            VethEnd x = net.attacker(dstNs, "eth1", "198.18.30.1/24");
            dstNs.neigh().addPermanent(dstNs.device("eth1"), Ipv4Addr.parse("198.18.30.2"), x.mac());
            UdpProbeFlow legit = new UdpProbeFlow(cli, dstNs, "198.18.31.1", 7001, MS, 1000);
            UdpProbeFlow fragmented = new UdpProbeFlow(cli, dstNs, "198.18.31.1", 7002, 100 * MS, 3000);
            legit.start();
            fragmented.start();
            net.vs.runFor(500 * MS);
            legit.reset();
            fragmented.reset();
            HeapProbe heap = new HeapProbe();
            long n = (long) (1_000_000 * scale);
            long duration = 10 * SEC;
            SplittableRandom rnd = new SplittableRandom(3);
            ByteBuf f = Unpooled.buffer(128);
            int src = Ipv4Addr.parse("198.18.30.2");
            int dst = Ipv4Addr.parse("198.18.30.1");
            long dstMac = dstNs.device("eth1").mac();
            long[] maxMemory = {0};
            drive(net, n, duration, heap, i -> {
                int id = (int) (i / 3) & 0xffff;
                int kind = (int) (i % 3);
                int len;
                switch (kind) {
                    case 0 -> len = fragment(f, x.mac(), dstMac, src, dst, id, 0, true, 64);
                    case 1 -> len = fragment(f, x.mac(), dstMac, src, dst, id ^ 0x5555, 8 * (1 + rnd.nextInt(1000)),
                            true, 8);
                    default -> {
                        // Two overlapping fragments of one datagram: the second discards the queue.
                        int ol = fragment(f, x.mac(), dstMac, src, dst, id ^ 0xaaaa, 0, true, 32);
                        FloodNet.inject(x, f, ol);
                        len = fragment(f, x.mac(), dstMac, src, dst, id ^ 0xaaaa, 16, true, 32);
                    }
                }
                FloodNet.inject(x, f, len);
                maxMemory[0] = Math.max(maxMemory[0], dstNs.ipDefrag().memory());
            });
            legit.stop();
            fragmented.stop();
            long memoryAtEnd = dstNs.ipDefrag().memory();
            Map<String, Object> l = legit.report(duration);
            Map<String, Object> fr = new LinkedHashMap<>();
            fr.put("sent", fragmented.sent());
            fr.put("reassembled", fragmented.received());
            fr.put("note", "fragmented datagrams are refused while the flood holds reassembly memory above "
                    + "ipfrag_high_thresh, as in Linux");
            l.put("fragmented_probe", fr);
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("fragments", n + n / 3);
            state.put("ipfrag_high_thresh", dstNs.knobs().get(Ipv4Sysctl.IPFRAG_HIGH_THRESH));
            state.put("reasm_memory_peak", maxMemory[0]);
            state.put("reasm_memory_end", memoryAtEnd);
            state.put("reasm_queues_end", dstNs.ipDefrag().pending());
            // ipfrag_time later every queue has expired and the memory is free again.
            net.vs.runFor((dstNs.knobs().get(Ipv4Sysctl.IPFRAG_TIME) + 1) * SEC);
            state.put("reasm_memory_after_ipfrag_time", dstNs.ipDefrag().memory());
            state.put("reasm_queues_after_ipfrag_time", dstNs.ipDefrag().pending());
            for (Mib m : new Mib[] {Mib.IpReasmReqds, Mib.IpReasmOKs, Mib.IpReasmFails, Mib.IpReasmTimeout,
                    Mib.IpExtReasmOverlaps}) {
                state.put(m.name(), dstNs.mib().get(m));
            }
            legit.close();
            fragmented.close();
            return new Result("fragment-flood", "virtual", heap.peak(), heap.samples(), net.drops(), udpOk(legit),
                    UDP_BOUND + " (the unfragmented flow)", l, state);
        }
    }

    /** A UDP fragment with {@code dataLen} bytes at {@code offset}; returns the frame's length. */
    static int fragment(ByteBuf f, long srcMac, long dstMac, int src, int dst, int id, int offset, boolean more,
            int dataLen) {
        int len = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + dataLen;
        f.clear();
        f.writerIndex(len);
        f.setZero(0, len);
        EthernetFrame.write(f, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        writeIp(f, EthernetFrame.HEADER_LEN, Ipv4Packet.MIN_HEADER_LEN + dataLen, id, (more ? 0x2000 : 0) | offset / 8,
                Ipv4Packet.PROTO_UDP, src, dst);
        return len;
    }

    // ---------------------------------------------------------------------------------------------------------
    // ARP / neighbour flood

    /**
     * A router between a client (r1) and a LAN (r2, 198.18.0.0/15, through a bridge) takes 10^5 ARP requests for its
     * address from random sources on the LAN and 10^5 packets (from a third port) to random unresolved addresses of
     * the LAN, while the client sends to a server on the LAN. The table stays at gc_thresh3 (1024): requests beyond
     * it go unanswered, packets beyond it are dropped (NEIGH_CREATEFAIL), each resolving entry queues at most
     * unres_qlen_bytes, and the forced GC makes room from entries 5 s old or failed.
     */
    static Result neighbourFlood(double scale) {
        try (FloodNet net = new FloodNet()) {
            NetStack rtr = net.ns("rtr");
            NetStack lan = net.ns("lan");
            NetStack srv = net.ns("srv");
            NetStack cli = net.ns("cli");
            rtr.knobs().set("net.ipv4.ip_forward", "1");
            Bridge br = new Bridge("br0", NamespaceRegistry.macFor("lan/br0"));
            // The LAN switch learns the flood's source MACs too; a small cap keeps its FDB out of the heap figure,
            // which should show the router's neighbour table.
            br.setFdbMaxLearned(1024);
            lan.register(br);
            br.setUp(true);
            VethEnd[] r2 = net.link(rtr, "r2", "198.18.0.1/15", lan, "lr", null);
            VethEnd[] s = net.link(srv, "eth0", "198.18.0.2/15", lan, "ls", null);
            VethEnd[] r1 = net.link(cli, "eth0", "198.19.254.2/24", rtr, "r1", "198.19.254.1/24");
            VethEnd arpAttacker = net.attacker(lan, "lx", null);
            VethEnd pktAttacker = net.attacker(rtr, "r3", "198.19.253.1/24");
            br.addPort(r2[1]);
            br.addPort(s[1]);
            br.addPort(lan.device("lx"));
            FloodNet.route(cli, "0.0.0.0/0", "198.19.254.1", r1[0]);
            FloodNet.route(srv, "198.19.254.0/24", "198.18.0.1", s[0]);
            // The packet attacker's address is known, so the host unreachables for its packets reach it.
            rtr.neigh().addPermanent(rtr.device("r3"), Ipv4Addr.parse("198.19.253.2"), pktAttacker.mac());
            UdpProbeFlow legit = new UdpProbeFlow(cli, srv, "198.18.0.2", 7001, MS, 1000);
            legit.start();
            net.vs.runFor(500 * MS);
            legit.reset();
            HeapProbe heap = new HeapProbe();
            long n = (long) (100_000 * scale);
            long duration = 10 * SEC;
            SplittableRandom rnd = new SplittableRandom(4);
            ByteBuf f = Unpooled.buffer(128);
            int lanBase = Ipv4Addr.parse("198.18.1.0");
            int routerIp = Ipv4Addr.parse("198.18.0.1");
            long r3Mac = rtr.device("r3").mac();
            int[] maxTable = {0};
            long[] maxQueued = {0};
            drive(net, 2 * n, duration, heap, i -> {
                // 198.18.1.0 to 198.19.128.255: the LAN's /15 away from the router's other subnets.
                int host = lanBase + rnd.nextInt(98_304);
                if (i % 2 == 0) {
                    long mac = rnd.nextLong() & 0xfeff_ffff_ffffL | 0x0200_0000_0000L;
                    f.clear();
                    f.writerIndex(42);
                    EthernetFrame.write(f, 0, MacAddr.BROADCAST, mac, EthernetFrame.ETH_P_ARP);
                    dev.usnet.core.wire.ArpPacket.write(f, 14, dev.usnet.core.wire.ArpPacket.OP_REQUEST, mac, host, 0,
                            routerIp);
                    FloodNet.inject(arpAttacker, f, 42);
                } else {
                    int len = udpFrame(f, pktAttacker.mac(), r3Mac, Ipv4Addr.parse("198.19.253.2"), host, 64);
                    FloodNet.inject(pktAttacker, f, len);
                }
                if (i % 1000 == 0) {
                    maxTable[0] = Math.max(maxTable[0], rtr.neigh().size());
                    maxQueued[0] = Math.max(maxQueued[0], rtr.neigh().queuedBytes());
                }
            });
            legit.stop();
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("arp_requests", n);
            state.put("packets_to_unresolved", n);
            state.put("gc_thresh1", (int) rtr.knobs().get(NeighSysctl.GC_THRESH1));
            state.put("gc_thresh2", (int) rtr.knobs().get(NeighSysctl.GC_THRESH2));
            state.put("gc_thresh3", (int) rtr.knobs().get(NeighSysctl.GC_THRESH3));
            state.put("table_peak", maxTable[0]);
            state.put("table_end", rtr.neigh().size());
            state.put("queued_bytes_peak", maxQueued[0]);
            state.put("forced_gc_runs", rtr.neigh().forcedGcRuns());
            state.put("NeighTableOverflow", rtr.mib().get(Mib.NeighTableOverflow));
            state.put("ArpOutReplies", rtr.mib().get(Mib.ArpOutReplies));
            state.put("lan_fdb_max_learned", br.fdbMaxLearned());
            legit.close();
            return new Result("neighbour-flood", "virtual", heap.peak(), heap.samples(), net.drops(), udpOk(legit),
                    UDP_BOUND, legit.report(duration), state);
        }
    }

    /** A UDP datagram with {@code payload} zero bytes; returns the frame's length. */
    static int udpFrame(ByteBuf f, long srcMac, long dstMac, int src, int dst, int payload) {
        int udpLen = 8 + payload;
        int len = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + udpLen;
        f.clear();
        f.writerIndex(len);
        f.setZero(0, len);
        EthernetFrame.write(f, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        int ip = EthernetFrame.HEADER_LEN;
        writeIp(f, ip, Ipv4Packet.MIN_HEADER_LEN + udpLen, 0, 0, Ipv4Packet.PROTO_UDP, src, dst);
        int u = ip + Ipv4Packet.MIN_HEADER_LEN;
        f.setShort(u, 9).setShort(u + 2, 9).setShort(u + 4, udpLen).setShort(u + 6, 0);
        return len;
    }

    // ---------------------------------------------------------------------------------------------------------
    // ICMP error storm

    /**
     * A router takes traffic to an unreachable prefix at 1 GbE line rate for minimum frames (1.488 Mpps) for 2 s
     * from 16 384 sources, while a client sends through it to a server. Each packet earns an ICMP host unreachable
     * (ip_error); the per-source limits do not bind with so many sources, so icmp_msgs_per_sec (1000/s, burst 50)
     * is what holds the rate of errors.
     */
    static Result icmpStorm(double scale) {
        try (FloodNet net = new FloodNet()) {
            NetStack rtr = net.ns("rtr");
            NetStack srv = net.ns("srv");
            NetStack cli = net.ns("cli");
            rtr.knobs().set("net.ipv4.ip_forward", "1");
            VethEnd[] a = net.link(cli, "eth0", "198.19.252.2/24", rtr, "r3", "198.19.252.1/24");
            VethEnd[] b = net.link(srv, "eth0", "198.19.251.2/24", rtr, "r2", "198.19.251.1/24");
            VethEnd x = net.attacker(rtr, "r1", "198.19.250.1/24");
            FloodNet.route(cli, "0.0.0.0/0", "198.19.252.1", a[0]);
            FloodNet.route(srv, "0.0.0.0/0", "198.19.251.1", b[0]);
            FloodNet.route(rtr, "198.19.128.0/17", "198.19.250.2", (VethEnd) rtr.device("r1"));
            rtr.neigh().addPermanent(rtr.device("r1"), Ipv4Addr.parse("198.19.250.2"), x.mac());
            FloodNet.unreachable(rtr, "198.19.64.0/18");
            long[] icmpBack = {0};
            long[] perWindow = new long[64];
            long[] t0 = {0};
            x.addTap((dev, p, tx, now) -> {
                if (!tx && p.length() > 34 && p.buf().getUnsignedByte(p.start() + 23) == Ipv4Packet.PROTO_ICMP) {
                    icmpBack[0]++;
                    int w = (int) ((now - t0[0]) / (100 * MS));
                    if (w >= 0 && w < perWindow.length) {
                        perWindow[w]++;
                    }
                }
            });
            UdpProbeFlow legit = new UdpProbeFlow(cli, srv, "198.19.251.2", 7001, MS, 1000);
            legit.start();
            net.vs.runFor(500 * MS);
            legit.reset();
            HeapProbe heap = new HeapProbe();
            long duration = 2 * SEC;
            long n = (long) (1_488_095L * 2 * scale);
            t0[0] = net.now();
            SplittableRandom rnd = new SplittableRandom(5);
            ByteBuf f = Unpooled.buffer(128);
            long r1Mac = rtr.device("r1").mac();
            int srcBase = Ipv4Addr.parse("198.19.128.0");
            int dstBase = Ipv4Addr.parse("198.19.64.0");
            drive(net, n, duration, heap, i -> {
                int len = udpFrame(f, x.mac(), r1Mac, srcBase + rnd.nextInt(1 << 14), dstBase + rnd.nextInt(1 << 14), 18);
                FloodNet.inject(x, f, len);
            });
            legit.stop();
            net.vs.runFor(10 * MS);
            long worstSecond = 0;
            int windows = (int) Math.min(perWindow.length, duration / (100 * MS));
            for (int w = 0; w + 10 <= windows; w++) {
                long sum = 0;
                for (int k = w; k < w + 10; k++) {
                    sum += perWindow[k];
                }
                worstSecond = Math.max(worstSecond, sum);
            }
            long perSec = rtr.knobs().get(IcmpSysctl.MSGS_PER_SEC);
            long burst = rtr.knobs().get(IcmpSysctl.MSGS_BURST);
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("packets", n);
            state.put("offered_pps", (long) (n / (duration / 1e9)));
            state.put("icmp_errors_sent", icmpBack[0]);
            state.put("icmp_errors_worst_1s_window", worstSecond);
            state.put("icmp_msgs_per_sec", perSec);
            state.put("icmp_msgs_burst", burst);
            state.put("IcmpOutRateLimitGlobal", rtr.mib().get(Mib.IcmpOutRateLimitGlobal));
            state.put("IcmpOutRateLimitHost", rtr.mib().get(Mib.IcmpOutRateLimitHost));
            state.put("IcmpOutDestUnreachs", rtr.mib().get(Mib.IcmpOutDestUnreachs));
            boolean rateHeld = worstSecond <= perSec + 2 * burst;
            state.put("error_rate_held", rateHeld);
            legit.close();
            return new Result("icmp-storm", "virtual", heap.peak(), heap.samples(), net.drops(), udpOk(legit) && rateHeld,
                    UDP_BOUND + "; and ICMP errors in any 1 s window <= icmp_msgs_per_sec + 2 x icmp_msgs_burst",
                    legit.report(duration), state);
        }
    }
}
