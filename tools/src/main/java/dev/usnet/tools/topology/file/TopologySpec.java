package dev.usnet.tools.topology.file;

import dev.usnet.core.knob.NearestNames;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.tools.topology.file.PcapReplay;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.Where;
import java.util.List;

/**
 * A parsed topology file (see docs/topology.md): what to build, with where each part was declared so that
 * later errors can still name the line. Optional settings are null when the file leaves them out.
 */
public record TopologySpec(String file, String name, long seed, Output output, List<KernelNs> kernelNamespaces,
                           List<Ns> namespaces, List<Expectation> expectations, List<Param> parameters) {

    public TopologySpec {
        parameters = parameters == null ? List.of() : List.copyOf(parameters);
    }

    /** A topology without parameters. */
    public TopologySpec(String file, String name, long seed, Output output, List<KernelNs> kernelNamespaces,
                        List<Ns> namespaces, List<Expectation> expectations) {
        this(file, name, seed, output, kernelNamespaces, namespaces, expectations, List.of());
    }

    /**
     * A parameter declared under {@code params:}: the value it took (its default unless {@code --param} or
     * {@link TopologyFile#read(java.nio.file.Path, java.util.Map)} set another), its default, its doc.
     */
    public record Param(String name, String value, String defaultValue, String doc, Where where) {}

    /** The effective value of every declared parameter, in declaration order. */
    public java.util.Map<String, String> params() {
        return java.util.Collections.unmodifiableMap(TopologyParams.values(parameters));
    }

    /** A topology without {@code expect:} lines. */
    public TopologySpec(String file, String name, long seed, Output output, List<KernelNs> kernelNamespaces,
                        List<Ns> namespaces) {
        this(file, name, seed, output, kernelNamespaces, namespaces, List.of(), List.of());
    }

    /** The same topology with another seed. */
    public TopologySpec withSeed(long s) {
        return new TopologySpec(file, name, s, output, kernelNamespaces, namespaces, expectations, parameters);
    }

    /**
     * This topology with extra captures, given on the command line as {@code NS/DEV[:in|out|inout]=FILE};
     * {@code lo} is there in every namespace, declared or not. Throws a UsageException naming the argument.
     */
    public TopologySpec withCaptures(List<String> args) {
        Problems p = new Problems();
        TopologySpec t = withCaptures(args, p);
        throwUsage(p);
        return t;
    }

    /** As {@link #withCaptures(List)}, collecting what is wrong with the arguments into {@code p}. */
    public TopologySpec withCaptures(List<String> args, Problems p) {
        if (args.isEmpty()) {
            return this;
        }
        List<Ns> out = new java.util.ArrayList<>(namespaces);
        for (String a : args) {
            Where w = new Where("--capture " + a, 0, "");
            int eq = a.indexOf('=');
            int slash = a.indexOf('/');
            if (eq < 0 || slash < 0 || slash > eq) {
                p.add(w, "expected NS/DEV[:in|out|inout]=FILE");
                continue;
            }
            String ns = a.substring(0, slash);
            String devPart = a.substring(slash + 1, eq);
            String file = a.substring(eq + 1);
            PcapTap.Direction dir = PcapTap.Direction.INOUT;
            int colon = devPart.indexOf(':');
            if (colon >= 0) {
                String d = devPart.substring(colon + 1);
                dir = switch (d) {
                    case "in" -> PcapTap.Direction.IN;
                    case "out" -> PcapTap.Direction.OUT;
                    case "inout" -> PcapTap.Direction.INOUT;
                    default -> null;
                };
                if (dir == null) {
                    p.add(w, "direction '" + d + "' is not in, out or inout");
                    continue;
                }
                devPart = devPart.substring(0, colon);
            }
            int idx = -1;
            for (int i = 0; i < out.size(); i++) {
                if (out.get(i).name().equals(ns)) {
                    idx = i;
                }
            }
            if (idx < 0) {
                p.add(w, "no namespace '" + ns + "' in " + file());
                continue;
            }
            Ns n = out.get(idx);
            if (!devPart.equals("lo") && n.device(devPart) == null) {
                p.add(w, "no device '" + devPart + "' in namespace " + ns);
                continue;
            }
            List<Capture> caps = new java.util.ArrayList<>(n.captures());
            caps.add(new Capture(devPart, dir, file, Long.MAX_VALUE, new Where("--capture", 0, a)));
            out.set(idx, new Ns(n.name(), n.where(), n.knobs(), n.devices(), n.routes(), n.neighbours(), caps,
                    n.histograms(), n.apps(), n.nftables()));
        }
        return new TopologySpec(this.file, name, seed, output, kernelNamespaces, out, expectations, parameters);
    }

    /**
     * This topology with extra knobs, given on the command line as {@code [NS:]KEY=VALUE}: for namespace NS, or
     * for every namespace when NS is left out. They apply after the file's own knobs; their values are judged
     * when the topology is built, with errors naming the argument. Throws a UsageException for a malformed one.
     */
    public TopologySpec withKnobs(List<String> args) {
        Problems p = new Problems();
        TopologySpec t = withKnobs(args, p);
        throwUsage(p);
        return t;
    }

    /** As {@link #withKnobs(List)}, collecting what is wrong with the arguments into {@code p}. */
    public TopologySpec withKnobs(List<String> args, Problems p) {
        if (args.isEmpty()) {
            return this;
        }
        List<Ns> out = new java.util.ArrayList<>(namespaces);
        for (String a : args) {
            Where w = new Where("--set " + a, 0, "");
            int eq = a.indexOf('=');
            if (eq <= 0) {
                p.add(w, "expected [NS:]KEY=VALUE");
                continue;
            }
            String key = a.substring(0, eq).trim();
            String value = a.substring(eq + 1).trim();
            String ns = null;
            int colon = key.indexOf(':');
            if (colon >= 0) {
                ns = key.substring(0, colon);
                key = key.substring(colon + 1);
                if (namespace(ns) == null) {
                    p.add(w, "no namespace '" + ns + "' in " + file + " (have: "
                            + NearestNames.listing(ns, namespaces.stream().map(Ns::name).toList()) + ")");
                    continue;
                }
            }
            if (key.isEmpty()) {
                p.add(w, "expected [NS:]KEY=VALUE");
                continue;
            }
            if (ns != null) {
                String dev = KnobDevices.of(key);
                if (dev != null && !dev.equals("all") && !dev.equals("default") && !dev.equals("lo")
                        && namespace(ns).device(dev) == null) {
                    p.add(w, "no device '" + dev + "' in namespace " + ns);
                    continue;
                }
            }
            for (int i = 0; i < out.size(); i++) {
                Ns n = out.get(i);
                if (ns == null || n.name().equals(ns)) {
                    List<Knob> knobs = new java.util.ArrayList<>(n.knobs());
                    knobs.add(new Knob(key, value, w));
                    out.set(i, new Ns(n.name(), n.where(), knobs, n.devices(), n.routes(), n.neighbours(), n.captures(),
                            n.histograms(), n.apps(), n.nftables()));
                }
            }
        }
        return new TopologySpec(file, name, seed, output, kernelNamespaces, out, expectations, parameters);
    }

    private static void throwUsage(Problems p) {
        if (!p.isEmpty()) {
            throw new dev.usnet.tools.cli.UsageException(String.join("\n", p.errors()));
        }
    }

    /** Where captures and histograms go, and how often histograms are rewritten (0: at exit and SIGUSR1 only). */
    public record Output(String dir, double histogramIntervalSeconds) {}

    /** A Linux network namespace usnet creates at start ({@code ip netns add}) and deletes at exit. */
    public record KernelNs(String name, Where where) {}

    /**
     * One usnet namespace (struct net): its knobs, devices, routes, neighbours, captures, histograms, apps, and its
     * nftables ruleset (null: none; its {@code where} is the line before the ruleset's first line).
     */
    public record Ns(String name, Where where, List<Knob> knobs, List<DeviceSpec> devices, List<Text> routes,
                     List<Neigh> neighbours, List<Capture> captures, boolean histograms, List<App> apps, Text nftables) {

        /** A namespace without a ruleset. */
        public Ns(String name, Where where, List<Knob> knobs, List<DeviceSpec> devices, List<Text> routes,
                  List<Neigh> neighbours, List<Capture> captures, boolean histograms, List<App> apps) {
            this(name, where, knobs, devices, routes, neighbours, captures, histograms, apps, null);
        }

        /** The device declared (or created as a veth peer) here under {@code name}, or null. */
        public DeviceSpec device(String devName) {
            for (DeviceSpec d : devices) {
                if (d.link().name().equals(devName)) {
                    return d;
                }
            }
            return null;
        }
    }

    /** A sysctl-style knob: {@code net.ipv4.ip_forward: 1}. */
    public record Knob(String key, String value, Where where) {}

    /** A line of text with its place: a route in {@code ip route} syntax. */
    public record Text(String text, Where where) {}

    /** An address with its prefix length, as {@code ip addr add 198.18.0.1/24} takes it. */
    public record Addr(int ip, int prefixLen, String text, Where where) {}

    /**
     * An IPv6 address with its prefix length, as {@code ip -6 addr add 2001:db8:1::1/64 [nodad]} takes it; with
     * {@code nodad} it is usable at once, without duplicate address detection.
     */
    public record Addr6(dev.usnet.core.wire.Ipv6Addr ip, int prefixLen, boolean nodad, String text, Where where) {}

    /** A reference to a device by name (a bridge port). */
    public record Ref(String name, Where where) {}

    /**
     * What every device kind can set: name, MAC, MTU, up, IPv4 addresses ({@code addresses6}: the IPv6 ones of the same
     * {@code addresses:} list), the tx-checksumming offload, link
     * emulation on its transmit side ({@code netem:}), kept as the {@code usnet.netem.<dev>.*} knobs it means,
     * generic segmentation offload ({@code gso:}), dev->needed_headroom ({@code needed_headroom:}) and generic
     * receive offload ({@code gro:}); null when not set.
     */
    public record Link(String name, Where where, Long mac, Integer mtu, boolean up, List<Addr> addresses,
                       Boolean txChecksumming, List<Knob> netem, Boolean gso, Integer neededHeadroom, Boolean gro,
                       List<Addr6> addresses6) {
        public Link {
            netem = netem == null ? List.of() : List.copyOf(netem);
            addresses6 = addresses6 == null ? List.of() : List.copyOf(addresses6);
        }

        /** A link without IPv6 addresses. */
        public Link(String name, Where where, Long mac, Integer mtu, boolean up, List<Addr> addresses,
                    Boolean txChecksumming, List<Knob> netem, Boolean gso, Integer neededHeadroom, Boolean gro) {
            this(name, where, mac, mtu, up, addresses, txChecksumming, netem, gso, neededHeadroom, gro, List.of());
        }

        /** A link without a GRO setting of its own. */
        public Link(String name, Where where, Long mac, Integer mtu, boolean up, List<Addr> addresses,
                    Boolean txChecksumming, List<Knob> netem, Boolean gso, Integer neededHeadroom) {
            this(name, where, mac, mtu, up, addresses, txChecksumming, netem, gso, neededHeadroom, null);
        }

        /** A link without a needed_headroom of its own. */
        public Link(String name, Where where, Long mac, Integer mtu, boolean up, List<Addr> addresses,
                    Boolean txChecksumming, List<Knob> netem, Boolean gso) {
            this(name, where, mac, mtu, up, addresses, txChecksumming, netem, gso, null);
        }

        /** A link without link emulation. */
        public Link(String name, Where where, Long mac, Integer mtu, boolean up, List<Addr> addresses, Boolean txChecksumming) {
            this(name, where, mac, mtu, up, addresses, txChecksumming, List.of(), null);
        }

        /** A link with the device's own generic segmentation offload setting. */
        public Link(String name, Where where, Long mac, Integer mtu, boolean up, List<Addr> addresses, Boolean txChecksumming,
                    List<Knob> netem) {
            this(name, where, mac, mtu, up, addresses, txChecksumming, netem, null);
        }

        /** This link with the gso and tx-checksumming offloads set ({@code ethtool -K DEV gso on tx on}). */
        public Link withOffloads(boolean on) {
            return new Link(name, where, mac, mtu, up, addresses, on, netem, on, neededHeadroom, gro, addresses6);
        }
    }

    /**
     * A {@code devices:} entry of one kind, read and built by its {@link LinkKind} (the kinds are listed in
     * {@link LinkKinds}); {@link #link()} holds the common settings.
     */
    public interface DeviceSpec {
        Link link();

        String kind();
    }

    /**
     * A veth pair ({@code ip link add NAME type veth peer name PEER netns PEERNS}). The peer end is created
     * in {@code peerNamespace} with its own settings; {@link #peerSide()} is true for that end's entry,
     * which the parser adds to the peer namespace's device list. A {@code kind: replay} device is such a pair
     * whose declared end sends the frames of a pcap file ({@code replay}, null for a plain veth).
     */
    public record Veth(Link link, String peerNamespace, Link peer, boolean peerSide, PcapReplay replay)
            implements DeviceSpec {
        /** A plain veth end, sending what its namespace gives it. */
        public Veth(Link link, String peerNamespace, Link peer, boolean peerSide) {
            this(link, peerNamespace, peer, peerSide, null);
        }

        /** {@code replay} for the end that sends a pcap file's frames ({@link PcapReplay}), else {@code veth}. */
        @Override
        public String kind() {
            return replay != null && !peerSide ? "replay" : "veth";
        }
    }

    /** A learning bridge with its ports (devices of the same namespace). Ageing in seconds. */
    public record BridgeDev(Link link, List<Ref> ports, Double ageingTimeSeconds, Integer fdbMaxLearned,
                            Integer groupFwdMask) implements DeviceSpec {
        @Override
        public String kind() {
            return "bridge";
        }
    }

    /**
     * A TAP device: usnet holds the file descriptor, the kernel sees a network interface {@code ifname} in
     * the kernel namespace {@code kernel.namespace} (null: the namespace usnet itself runs in).
     */
    public record Tap(Link link, boolean vnetHdr, KernelSide kernel) implements DeviceSpec {
        @Override
        public String kind() {
            return "tap";
        }
    }

    /**
     * The kernel's end of a TAP, configured with {@code ip} when usnet starts: its IPv4 {@code addresses} and IPv6
     * {@code addresses6} (added with {@code nodad}, so the kernel uses them at once), and its routes of both families.
     */
    public record KernelSide(String namespace, String ifname, Long mac, Integer mtu, boolean up, List<Addr> addresses,
                             List<Addr6> addresses6, List<Text> routes, Where where) {}

    /** A live NIC reached through pcap (capture and inject). */
    public record Pcap(Link link, String iface, boolean promisc) implements DeviceSpec {
        @Override
        public String kind() {
            return "pcap";
        }
    }

    /** The namespace's existing {@code lo}, to give it addresses. */
    public record Loopback(Link link) implements DeviceSpec {
        @Override
        public String kind() {
            return "loopback";
        }
    }

    /**
     * A static neighbour: {@code ip neigh replace IP lladdr MAC dev DEV nud permanent}; {@code ip6} is its IPv6 address
     * ({@code ip} then 0), null for an IPv4 neighbour.
     */
    public record Neigh(int ip, dev.usnet.core.wire.Ipv6Addr ip6, long mac, String dev, Where where) {
        /** An IPv4 neighbour. */
        public Neigh(int ip, long mac, String dev, Where where) {
            this(ip, null, mac, dev, where);
        }
    }

    /** A pcap capture of one device, like {@code tcpdump -i DEV -Q DIR -w FILE}. */
    public record Capture(String device, PcapTap.Direction direction, String file, long maxFrames, Where where) {}

    /**
     * A small traffic source or sink running inside a namespace, or the client end of a TCP app: one entry of
     * {@code apps:}, read by its {@link AppKind} (the kinds are listed in {@link AppKinds}).
     */
    public interface App {
        Where where();

        /** The entry's {@code kind:}: the name of the {@link AppKind} that reads it. */
        String kind();

        /** The UDP port the app binds for the whole run (a sink's, an echo server's), 0 for none: one per namespace. */
        default int udpPort() {
            return 0;
        }

        /**
         * When the app (a TCP app's client) starts, in nanoseconds after the run's start ({@code start:}); 0: at once.
         * Kinds without the key (sinks, which start before every sender, and mpi) start at once.
         */
        default long startNanos() {
            return 0;
        }
    }

    /**
     * {@code kind: mpi}: an MPI job launched from this namespace, like mpirun ({@link MpiApp} reads, checks and runs
     * it; docs/topology.md, "MPI jobs").
     *
     * @param hosts namespace names or globs ({@code node*}) in file order; each matched namespace is one host
     * @param ranksPerHost ranks on each host
     * @param placement {@code block} (ranks 0..n-1 on the first host, as mpirun --map-by slot) or {@code cyclic}
     *     (rank r on host r mod hosts, --map-by node)
     * @param port rank r listens on port + r
     * @param size bytes per vector message; 0: the pattern's default (cg: NAS CG class B's share per rank)
     * @param localTcp ranks of one host talk over TCP (true) or shared memory (false, the default)
     * @param congestion TCP_CONGESTION of every socket, or null for the namespaces' default
     */
    public record Mpi(List<String> hosts, Where hostsWhere, int ranksPerHost, String placement, int port,
                      dev.usnet.tcp.app.MpiPattern pattern, int size, int iterations, long computeNanos,
                      boolean localTcp, String congestion, int sendBufferBytes, int receiveBufferBytes, Where where)
            implements App {
        @Override
        public String kind() {
            return "mpi";
        }
    }

    /**
     * {@code kind: spawn}: short-lived processes, {@code rate} per second, each living {@code lifetimeNanos} (0: it
     * exits at once) and then reaped by the app, {@code count} in all (0: no limit); their pids come from the
     * namespace's pid namespaces ({@code usnet.pidns.*}).
     */
    public record Spawn(int rate, long lifetimeNanos, long count, Where where, long startNanos) implements App {
        @Override
        public String kind() {
            return "spawn";
        }

        /** Starting with the run. */
        public Spawn(int rate, long lifetimeNanos, long count, Where where) {
            this(rate, lifetimeNanos, count, where, 0);
        }
    }

    /**
     * Echo requests to {@code to} every {@code intervalSeconds}, RTTs in a histogram; to {@code to6} instead (ICMPv6)
     * when that is not null.
     */
    public record Ping(int to, double intervalSeconds, int size, Where where, long startNanos,
                       EntryValues.Ip6Destination to6) implements App {
        @Override
        public String kind() {
            return "ping";
        }

        /** To an IPv4 address. */
        public Ping(int to, double intervalSeconds, int size, Where where, long startNanos) {
            this(to, intervalSeconds, size, where, startNanos, null);
        }

        /** To an IPv4 address, starting with the run. */
        public Ping(int to, double intervalSeconds, int size, Where where) {
            this(to, intervalSeconds, size, where, 0);
        }
    }

    /**
     * UDP datagrams to {@code to:port} at {@code rate} per second; to {@code to6} instead when that is not null.
     *
     * @param keepClones the socket keeps clones of its last this many datagrams (0: none), so forwarders share
     *     their bytes as they share a TCP segment in the retransmission queue ({@code keep_clones:})
     * @param maxBurstNanos the most a late tick catches up on, as time at the rate; the rest is skipped and
     *     counted (0: everything owed is sent at once) ({@code max_burst:})
     * @param startNanos when it starts after the run's start ({@code start:})
     */
    public record UdpSend(int to, int port, int rate, int size, Where where, int keepClones, long maxBurstNanos,
                          long startNanos, EntryValues.Ip6Destination to6) implements App {
        @Override
        public String kind() {
            return "udp-send";
        }

        /** To an IPv4 address. */
        public UdpSend(int to, int port, int rate, int size, Where where, int keepClones, long maxBurstNanos,
                       long startNanos) {
            this(to, port, rate, size, where, keepClones, maxBurstNanos, startNanos, null);
        }
        /** A sender that keeps no clones and catches up on everything it owes. */
        public UdpSend(int to, int port, int rate, int size, Where where) {
            this(to, port, rate, size, where, 0, 0, 0);
        }

        /** Starting with the run. */
        public UdpSend(int to, int port, int rate, int size, Where where, int keepClones, long maxBurstNanos) {
            this(to, port, rate, size, where, keepClones, maxBurstNanos, 0);
        }
    }

    /** A UDP socket on {@code port} that counts what arrives. */
    public record UdpSink(int port, Where where) implements App {
        @Override
        public String kind() {
            return "udp-sink";
        }

        @Override
        public int udpPort() {
            return port;
        }
    }

    /**
     * A TCP test app ({@code dev.usnet.tcp.app}): declared in the client's namespace, with its server in
     * namespace {@link TcpCommon#server()}. The kinds differ only in their parameters.
     */
    public sealed interface TcpApp extends App permits TcpStream, TcpRr, TcpBurst {
        TcpCommon common();

        /** {@code stream}, {@code rr} or {@code burst}: the {@code kind:} in the file and the app's own name. */
        String kind();

        @Override
        default Where where() {
            return common().where();
        }

        /** When the client starts (the server listens from the run's start). */
        @Override
        default long startNanos() {
            return common().startNanos();
        }
    }

    /**
     * What every TCP app entry sets.
     *
     * @param server the server's usnet namespace
     * @param to the address the client connects to; null: derived from the server's addresses
     *     ({@link TopologySpec#serverAddress})
     * @param port the server's port
     * @param count stream: bytes, rr: transactions, burst: bursts; 0: no limit
     * @param durationNanos how long the client runs; 0: no limit (either limit ends the run; with none it runs
     *     until {@code usnet run} stops)
     * @param congestion TCP_CONGESTION for both ends' sockets; null: each namespace's
     *     {@code net.ipv4.tcp_congestion_control}
     * @param noDelay TCP_NODELAY; null: the app's default
     * @param sendBufferBytes SO_SNDBUF, 0: not set (autotuned from tcp_wmem, usnet.tcp.buffers)
     * @param receiveBufferBytes SO_RCVBUF, 0: not set (autotuned from tcp_rmem, usnet.tcp.buffers)
     * @param serverWhere where {@code server:} is
     * @param toWhere where {@code to:} is (the entry when it is left out)
     * @param portWhere where {@code port:} is (the entry when it is left out)
     * @param trace the client's congestion trace ({@code trace:}), or null
     * @param startNanos when the client starts, after the run's start ({@code start:}); its {@code durationNanos}
     *     counts from there
     * @param to6 an IPv6 {@code to:}: the client connects over IPv6 and the server listens on [::]; then
     *     {@code to} is null
     */
    public record TcpCommon(String server, Integer to, int port, long count, long durationNanos, String congestion,
                            Boolean noDelay, int sendBufferBytes, int receiveBufferBytes, Where where, Where serverWhere,
                            Where toWhere, Where portWhere, AppLog trace, long startNanos,
                            EntryValues.Ip6Destination to6) {

        /** Over IPv4 (or to the server's address). */
        public TcpCommon(String server, Integer to, int port, long count, long durationNanos, String congestion,
                         Boolean noDelay, int sendBufferBytes, int receiveBufferBytes, Where where, Where serverWhere,
                         Where toWhere, Where portWhere, AppLog trace, long startNanos) {
            this(server, to, port, count, durationNanos, congestion, noDelay, sendBufferBytes, receiveBufferBytes, where,
                    serverWhere, toWhere, portWhere, trace, startNanos, null);
        }

        /** Starting with the run. */
        public TcpCommon(String server, Integer to, int port, long count, long durationNanos, String congestion,
                         Boolean noDelay, int sendBufferBytes, int receiveBufferBytes, Where where, Where serverWhere,
                         Where toWhere, Where portWhere, AppLog trace) {
            this(server, to, port, count, durationNanos, congestion, noDelay, sendBufferBytes, receiveBufferBytes, where,
                    serverWhere, toWhere, portWhere, trace, 0);
        }

        /** Without a cwnd trace. */
        public TcpCommon(String server, Integer to, int port, long count, long durationNanos, String congestion,
                         Boolean noDelay, int sendBufferBytes, int receiveBufferBytes, Where where, Where serverWhere,
                         Where toWhere, Where portWhere) {
            this(server, to, port, count, durationNanos, congestion, noDelay, sendBufferBytes, receiveBufferBytes, where,
                    serverWhere, toWhere, portWhere, null);
        }
    }

    /**
     * A log an app keeps of its run ({@code trace:}, {@code bursts:}): in memory for the run's code to read, and,
     * when {@code file} is not null, written as CSV into the output directory at the end.
     *
     * @param file relative to the output directory; null: kept in memory only ({@code trace: true})
     * @param where where the key is
     */
    public record AppLog(String file, Where where) {}

    /**
     * {@code kind: stream}: bulk transfer (netperf TCP_STREAM), {@code writeBytes} per write; with
     * {@code intervalNanos} above 0 ({@code interval:}) one write every interval instead, an
     * application-limited stream.
     */
    public record TcpStream(TcpCommon common, int writeBytes, long intervalNanos) implements TcpApp {
        /** A stream that writes as fast as TCP takes it. */
        public TcpStream(TcpCommon common, int writeBytes) {
            this(common, writeBytes, 0);
        }

        @Override
        public String kind() {
            return "stream";
        }
    }

    /** {@code kind: rr}: request/response with one transaction in flight (netperf TCP_RR). */
    public record TcpRr(TcpCommon common, int requestBytes, int responseBytes) implements TcpApp {
        @Override
        public String kind() {
            return "rr";
        }
    }

    /** {@code kind: burst}: MPI-like: a burst, the receiver's answer, compute time, repeat. */
    public record TcpBurst(TcpCommon common, int burstBytes, long computeNanos, int ackBytes, int writeBytes,
                           AppLog bursts) implements TcpApp {
        /** Without a per-burst log. */
        public TcpBurst(TcpCommon common, int burstBytes, long computeNanos, int ackBytes, int writeBytes) {
            this(common, burstBytes, computeNanos, ackBytes, writeBytes, null);
        }

        @Override
        public String kind() {
            return "burst";
        }
    }

    /** Every address declared in namespace {@code ns} (veth ends declared from the other side included), lo's last. */
    public List<Addr> addresses(String ns) {
        Ns n = namespace(ns);
        List<Addr> l = new java.util.ArrayList<>();
        if (n == null) {
            return l;
        }
        for (int pass = 0; pass < 2; pass++) {
            for (DeviceSpec d : n.devices()) {
                if (d instanceof Loopback == (pass == 1)) {
                    l.addAll(d.link().addresses());
                }
            }
        }
        return l;
    }

    /**
     * The address the client of {@code app} (declared in namespace {@code clientNs}) connects to: its {@code to:},
     * else the server namespace's first address on a network the client namespace has an address on, else the
     * server's first address (lo's last). Null when the server namespace has no address.
     */
    public Integer serverAddress(String clientNs, TcpApp app) {
        TcpCommon c = app.common();
        if (c.to() != null) {
            return c.to();
        }
        List<Addr> server = addresses(c.server());
        for (Addr s : server) {
            for (Addr mine : addresses(clientNs)) {
                // On the client's connected network (a /32 or /0 is not one).
                int len = mine.prefixLen();
                int mask = len == 0 ? 0 : -1 << (32 - len);
                if (len > 0 && len < 32 && (s.ip() & mask) == (mine.ip() & mask) && s.ip() != mine.ip()) {
                    return s.ip();
                }
            }
        }
        return server.isEmpty() ? null : server.get(0).ip();
    }

    public Ns namespace(String n) {
        for (Ns ns : namespaces) {
            if (ns.name().equals(n)) {
                return ns;
            }
        }
        return null;
    }

    /** Devices usnet creates (every veth end, bridges, TAPs, pcap ports; not the loopbacks). */
    public int deviceCount() {
        int n = 0;
        for (Ns ns : namespaces) {
            for (DeviceSpec d : ns.devices()) {
                if (!(d instanceof Loopback)) {
                    n++;
                }
            }
        }
        return n;
    }

    public boolean needsPrivileges() {
        if (!kernelNamespaces.isEmpty()) {
            return true;
        }
        for (Ns ns : namespaces) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Tap || d instanceof Pcap) {
                    return true;
                }
            }
        }
        return false;
    }
}
