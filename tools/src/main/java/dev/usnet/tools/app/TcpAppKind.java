package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code kind: stream | rr | burst}: the TCP test apps ({@link TcpApp}), a client in the entry's namespace and its
 * server in the namespace {@code server:} names. The three share their keys and their reader and differ in their
 * own keys. Sizes and times take the units link emulation takes ({@code 64k}, {@code 1m}; {@code 500us}, {@code 2s}).
 */
public final class TcpAppKind<S extends TopologySpec.TcpApp> implements AppKind<S> {
    /** Keys every TCP app entry may have. */
    public static final Set<String> COMMON_KEYS = Set.of("kind", "server", "to", "port", "duration", "congestion", "nodelay",
            "send_buffer", "receive_buffer", "trace", "start");

    public static final TcpAppKind<TopologySpec.TcpStream> STREAM = new TcpAppKind<>("stream", TopologySpec.TcpStream.class,
            Set.of("bytes", "write_size", "interval"));
    public static final TcpAppKind<TopologySpec.TcpRr> RR = new TcpAppKind<>("rr", TopologySpec.TcpRr.class,
            Set.of("count", "request_size", "response_size"));
    public static final TcpAppKind<TopologySpec.TcpBurst> BURST = new TcpAppKind<>("burst", TopologySpec.TcpBurst.class,
            Set.of("count", "burst_size", "compute", "ack_size", "write_size", "bursts"));

    /** The three, for what one kind's entry says of a key that belongs to another. */
    private static final List<TcpAppKind<?>> ALL = List.of(STREAM, RR, BURST);

    private final String name;
    private final Class<S> specType;
    /** This kind's own keys, beyond {@link #COMMON_KEYS}. */
    private final Set<String> own;
    private final Set<String> keys;

    private TcpAppKind(String name, Class<S> specType, Set<String> own) {
        this.name = name;
        this.specType = specType;
        this.own = own;
        Set<String> k = new java.util.HashSet<>(COMMON_KEYS);
        k.addAll(own);
        this.keys = Set.copyOf(k);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<String> keys() {
        return keys;
    }

    @Override
    public Class<S> specType() {
        return specType;
    }

    @Override
    public Order order() {
        return Order.CLIENT_SERVER;
    }

    @Override
    public S read(YamlMap m) {
        Map<String, String> elsewhere = new LinkedHashMap<>();
        elsewhere.put("kernel", "is not a per-socket setting: set usnet.tcp.kernel (3.18, 3.19, 4.0, 4.3) in the knobs"
                + " of the client's and the server's namespaces");
        for (TcpAppKind<?> other : ALL) {
            for (String key : other.own) {
                if (!keys.contains(key)) {
                    elsewhere.merge(key, "applies to kind " + other.name, (a, b) -> a + ", " + other.name);
                }
            }
        }
        elsewhere.replaceAll((key, note) -> key.equals("kernel") ? note : note + ", not " + name
                + (name.equals("stream") && key.equals("count") ? " (a stream's amount is bytes:)" : ""));
        m.allow(keys, elsewhere);
        boolean ok = true;
        String server = null;
        if (m.require("server")) {
            server = m.string("server");
        }
        ok &= server != null;
        Integer to = null;
        EntryValues.Ip6Destination to6 = null;
        if (m.has("to")) {
            // IPv4 or IPv6, as ping's to: an IPv6 one makes both ends IPv6 sockets.
            Object either = EntryValues.ipEitherFamily(m, "to");
            ok &= either != null;
            if (either instanceof EntryValues.Ip6Destination d) {
                if (d.dev() != null) {
                    // A socket address's scope id is not modelled: TCP connects to global and unique local ones.
                    m.problems().add(m.where("to"), "a TCP app cannot connect to a link-local address (" + d
                            + "): give a global or unique local one");
                    ok = false;
                }
                to6 = d;
            } else if (either != null) {
                to = (Integer) either;
            }
        }
        Long port = m.integer("port", 1, 65535);
        ok &= port != null || !m.has("port");
        Long start = EntryValues.start(m);
        ok &= start != null;
        Long duration = null;
        if (m.has("duration")) {
            duration = EntryValues.time(m, "duration", 1);
            ok &= duration != null;
        }
        String cc = null;
        if (m.has("congestion")) {
            cc = m.choice("congestion", dev.usnet.tcp.cc.CongestionControls.available().toArray(new String[0]));
            ok &= cc != null;
        }
        Boolean noDelay = m.bool("nodelay");
        ok &= noDelay != null || !m.has("nodelay");
        Long sndbuf = EntryValues.size(m, "send_buffer", 1, Integer.MAX_VALUE);
        Long rcvbuf = EntryValues.size(m, "receive_buffer", 1, Integer.MAX_VALUE);
        ok &= (sndbuf != null || !m.has("send_buffer")) && (rcvbuf != null || !m.has("receive_buffer"));
        // Only this kind's keys are read: the others were reported above.
        Long count = null;
        if (own.contains("bytes")) {
            count = EntryValues.size(m, "bytes", 1, Long.MAX_VALUE);
            ok &= count != null || !m.has("bytes");
        }
        if (own.contains("count")) {
            count = m.integer("count", 1, Long.MAX_VALUE);
            ok &= count != null || !m.has("count");
        }
        Long write = own.contains("write_size") ? EntryValues.size(m, "write_size", 1, Integer.MAX_VALUE) : null;
        // stream only: one write every interval (an application-limited stream) instead of as fast as TCP takes.
        Long interval = own.contains("interval") && m.has("interval") ? EntryValues.time(m, "interval", 1) : null;
        ok &= interval != null || !own.contains("interval") || !m.has("interval");
        ok &= write != null || !own.contains("write_size") || !m.has("write_size");
        Long request = own.contains("request_size") ? EntryValues.size(m, "request_size", 1, Integer.MAX_VALUE) : null;
        Long response = own.contains("response_size") ? EntryValues.size(m, "response_size", 1, Integer.MAX_VALUE) : null;
        ok &= (request != null || !own.contains("request_size") || !m.has("request_size"))
                && (response != null || !own.contains("response_size") || !m.has("response_size"));
        Long burst = null;
        Long compute = 0L;
        Long ack = null;
        if (this == BURST) {
            if (m.require("burst_size")) {
                burst = EntryValues.size(m, "burst_size", 1, Integer.MAX_VALUE);
            }
            compute = m.has("compute") ? EntryValues.time(m, "compute", 0) : Long.valueOf(0);
            ack = EntryValues.size(m, "ack_size", 1, Integer.MAX_VALUE);
            ok &= burst != null && compute != null && (ack != null || !m.has("ack_size"));
        }
        TopologySpec.AppLog trace = EntryValues.appLog(m, "trace");
        ok &= trace != null || !m.has("trace");
        TopologySpec.AppLog bursts = this == BURST ? EntryValues.appLog(m, "bursts") : null;
        ok &= bursts != null || this != BURST || !m.has("bursts");
        if (!ok) {
            return null;
        }
        TopologySpec.TcpCommon c = new TopologySpec.TcpCommon(server.trim(), to,
                port == null ? dev.usnet.tcp.app.AppConfig.DEFAULT_PORT : port.intValue(), count == null ? 0 : count,
                duration == null ? 0 : duration, cc, noDelay, sndbuf == null ? 0 : sndbuf.intValue(),
                rcvbuf == null ? 0 : rcvbuf.intValue(), m.where(), m.where("server"), m.where("to"), m.where("port"),
                trace == EntryValues.OFF ? null : trace, start, to6);
        TopologySpec.TcpApp entry;
        if (this == STREAM) {
            entry = new TopologySpec.TcpStream(c, write == null ? 64 * 1024 : write.intValue(), interval == null ? 0 : interval);
        } else if (this == RR) {
            entry = new TopologySpec.TcpRr(c, request == null ? 1 : request.intValue(), response == null ? 1 : response.intValue());
        } else {
            entry = new TopologySpec.TcpBurst(c, burst.intValue(), compute, ack == null ? 1 : ack.intValue(),
                    write == null ? 64 * 1024 : write.intValue(), bursts == EntryValues.OFF ? null : bursts);
        }
        return specType.cast(entry);
    }

    /**
     * The client in {@code ns}, connecting to the server's address: from the file, the address the checks found
     * (a spec built in code may lack it); started live, that or the entry's {@code to:}.
     */
    @Override
    public App create(AppContext c, String ns, S tcp) {
        Topology t = c.topology();
        NetStack stack = t.stack(ns);
        String server = tcp.common().server();
        if (tcp.common().to6() != null) {
            // An IPv6 to: is the address itself (no derivation from the server's addresses).
            return withServerNs(new TcpApp(ns, stack, tcp, server, t.stack(server), 0), t, server);
        }
        if (c.live()) {
            NetStack serverStack = t.stack(server);
            Integer to = t.spec().namespace(server) != null && t.spec().namespace(ns) != null
                    ? t.spec().serverAddress(ns, tcp) : tcp.common().to();
            if (to == null) {
                throw new UsageException("namespace " + server + " has no address in the topology file for the "
                        + tcp.kind() + " client to connect to: give 'to A.B.C.D'");
            }
            return withServerNs(new TcpApp(ns, stack, tcp, server, serverStack, to), t, server);
        }
        Integer to = t.spec().serverAddress(ns, tcp);
        if (to == null) {
            throw new UsageException(tcp.common().serverWhere().error("namespace " + server
                    + " has no address for the " + tcp.kind() + " client to connect to"));
        }
        return withServerNs(new TcpApp(ns, stack, tcp, server, t.stack(server), to), t, server);
    }

    private static TcpApp withServerNs(TcpApp app, Topology t, String server) {
        app.serverNetns = t.registry().get(server);
        return app;
    }
}
