package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.ns.NetNamespace;
import dev.usnet.ns.pid.Task;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.app.AppConfig;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tcp.app.BurstApp;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tcp.app.RrApp;
import dev.usnet.tcp.app.StreamApp;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.HdrHistogram.Histogram;

/**
 * {@code kind: stream | rr | burst}: a TCP test app from {@code dev.usnet.tcp.app}, its client in this
 * namespace and its server in another (or the same). The server listens before the client connects; at the
 * end each end reports an {@link AppResult}, and the client's latency (rr) or burst completion (burst)
 * histogram goes to the output directory.
 */
public final class TcpApp extends App {
    final TopologySpec.TcpApp spec;
    final String serverNs;
    private final int to;
    final dev.usnet.tcp.app.App client;
    final dev.usnet.tcp.app.App server;
    /** The client socket's cwnd trace ({@code trace:}), or null. */
    private final TcpTrace trace;
    /** The client's completed bursts ({@code bursts:} of a burst app), or null. */
    private final List<BurstApp.Burst> bursts;
    private volatile long startNanos;
    /** The server's namespace, for the server's process; null outside a topology. */
    NetNamespace serverNetns;
    private volatile Task serverProcess;

    public TcpApp(String ns, NetStack stack, TopologySpec.TcpApp spec, String serverNs, NetStack serverStack, int to) {
        super(ns, stack);
        this.spec = spec;
        this.serverNs = serverNs;
        this.to = to;
        TopologySpec.TcpCommon c = spec.common();
        AppConfig cfg = AppConfig.defaults().withPort(c.port()).withCount(c.count()).withDurationNanos(c.durationNanos())
                .withCongestionControl(c.congestion()).withNoDelay(c.noDelay())
                .withBuffers(c.sendBufferBytes(), c.receiveBufferBytes());
        List<BurstApp.Burst> burstLog = null;
        // An IPv6 to: makes both ends IPv6 sockets: the client connects to it, the server listens on [::].
        Ipv6Addr to6 = c.to6() == null ? null : c.to6().address();
        switch (spec) {
            case TopologySpec.TcpStream st -> {
                StreamApp.Params p = new StreamApp.Params(st.writeBytes(), st.intervalNanos());
                client = to6 != null ? StreamApp.client(stack, to6, cfg, p) : StreamApp.client(stack, to, cfg, p);
                server = to6 != null ? StreamApp.server(serverStack, cfg, Ipv6Addr.ANY) : StreamApp.server(serverStack, cfg);
            }
            case TopologySpec.TcpRr rr -> {
                RrApp.Params p = new RrApp.Params(rr.requestBytes(), rr.responseBytes());
                client = to6 != null ? RrApp.client(stack, to6, cfg, p) : RrApp.client(stack, to, cfg, p);
                server = to6 != null ? RrApp.server(serverStack, cfg, p, Ipv6Addr.ANY) : RrApp.server(serverStack, cfg, p);
            }
            case TopologySpec.TcpBurst b -> {
                BurstApp.Params p = new BurstApp.Params(b.burstBytes(), b.computeNanos(), b.ackBytes(), b.writeBytes());
                BurstApp.Client bc = to6 != null ? BurstApp.client(stack, to6, cfg, p) : BurstApp.client(stack, to, cfg, p);
                if (b.bursts() != null) {
                    burstLog = java.util.Collections.synchronizedList(new ArrayList<>());
                    bc.observer(burstLog::add);
                }
                client = bc;
                server = to6 != null ? BurstApp.server(serverStack, cfg, p, Ipv6Addr.ANY) : BurstApp.server(serverStack, cfg, p);
            }
        }
        bursts = burstLog;
        trace = c.trace() == null ? null : new TcpTrace();
        if (trace != null) {
            client.setTrace(trace);
        }
    }

    /**
     * The client connection's congestion trace (one row per ACK and congestion event: snd_cwnd, ssthresh,
     * snd_cwnd_cnt, srtt, in flight, CA state), recorded when the entry has {@code trace:}; null when it has
     * not. Rows are added on the client namespace's thread: read it once {@link #isDone()} (or on that thread).
     * Its times are the namespace clock's; {@link #startNanos()} is the client's start on that clock.
     */
    public TcpTrace trace() {
        return trace;
    }

    /**
     * The bursts the client completed so far, in order, when a burst entry has {@code bursts:}; null otherwise
     * (and for stream and rr).
     */
    public List<BurstApp.Burst> bursts() {
        return bursts == null ? null : List.copyOf(bursts);
    }

    /** When the client started, on its namespace's clock (0 before it has). */
    public long startNanos() {
        return startNanos;
    }

    @Override
    public String kind() {
        return spec.kind();
    }

    /** The process the server end runs as, in the server's namespace; null before it starts. */
    public Task serverProcess() {
        return serverProcess;
    }

    public String serverNamespace() {
        return serverNs;
    }

    /** The server's address:port ({@code [ADDR]:PORT} over IPv6). */
    public String to() {
        TopologySpec.TcpCommon c = spec.common();
        return c.to6() != null ? "[" + c.to6().address() + "]:" + c.port() : Ipv4Addr.format(to) + ":" + c.port();
    }

    /** The client end (connects from this namespace). */
    public dev.usnet.tcp.app.App client() {
        return client;
    }

    /** The server end (listens in {@link #serverNamespace()}). */
    public dev.usnet.tcp.app.App server() {
        return server;
    }

    /** Until both its ends are done. */
    @Override
    public boolean isRunning() {
        return !isDone();
    }

    /** The client's completion: the app ends by itself once the client has moved its bytes (or failed). */
    @Override
    public CompletionStage<?> completion() {
        return client.completion();
    }

    /** The client's CPU time, once it has a result. */
    @Override
    public java.util.Map<String, Long> measuredNanos() {
        AppResult r = client.result();
        return r == null ? java.util.Map.of() : java.util.Map.of("app_cpu_ns", r.cpuNanos());
    }

    /** The client is done, by itself or stopped (the server may still be closing). */
    @Override
    public boolean completed() {
        return client.isDone();
    }

    /** Both ends are done: their results are final. */
    public boolean isDone() {
        return client.isDone() && server.isDone();
    }

    /** The client's process, then the server's in the server's namespace. */
    @Override
    public void startProcess() {
        super.startProcess();
        if (serverNetns != null && serverProcess == null) {
            serverProcess = startProcessIn(serverNetns, spec.kind() + "-server", label() + " (server)");
        }
    }

    /** Listens (on the server namespace's thread). */
    public void startServer() {
        server.start();
    }

    @Override
    public void endProcess() {
        super.endProcess();
        Task p = serverProcess;
        if (p != null) {
            p.exit(0);
        }
    }

    /** Connects (on this namespace's thread). */
    @Override
    public void start() {
        running = true;
        startNanos = stack.now();
        client.start();
    }

    /** Writes the {@code trace:} and {@code bursts:} files this entry names into {@code dir}; returns them. */
    public List<Path> writeLogs(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        TopologySpec.AppLog t = spec.common().trace();
        if (trace != null && t.file() != null) {
            Path f = dir.resolve(t.file());
            try (Writer w = open(f)) {
                trace.writeCsv(w);
            }
            files.add(f);
        }
        if (bursts != null && spec instanceof TopologySpec.TcpBurst b && b.bursts().file() != null) {
            Path f = dir.resolve(b.bursts().file());
            try (Writer w = open(f)) {
                BurstApp.writeCsv(bursts(), startNanos, w);
            }
            files.add(f);
        }
        return files;
    }

    private static Writer open(Path f) throws IOException {
        if (f.getParent() != null) {
            Files.createDirectories(f.getParent());
        }
        return Files.newBufferedWriter(f, StandardCharsets.UTF_8);
    }

    /** Nothing to do on the loop: {@link Apps#stop} ends TCP apps through their own stop and abort. */
    @Override
    public void stop() {
        running = false;
    }

    /** The client's histogram once it is done (rr: transaction latency; burst: completion time), else null. */
    @Override
    public Histogram histogram() {
        AppResult r = client.result();
        return r == null ? null : r.histogram();
    }

    @Override
    public String histogramName() {
        TopologySpec.TcpCommon c = spec.common();
        // An IPv6 address with its colons as underscores, as ping's histogram names it: a file name on every system.
        String dst = c.to6() != null ? c.to6().address().toString().replace(':', '_') : Ipv4Addr.format(to);
        return ns + "." + spec.kind() + "-" + dst + "-" + c.port();
    }

    @Override
    public String summary() {
        return String.join("\n", summaryLines());
    }

    /**
     * {@link AppResult#format()} of the client, then of the server, each after its namespace and ending in that
     * end's {@link AppResult#outcome()}.
     */
    @Override
    public List<String> summaryLines() {
        return List.of(line(ns, client), line(serverNs, server));
    }

    private String line(String where, dev.usnet.tcp.app.App a) {
        AppResult r = a.result();
        if (r != null) {
            return where + ": " + r.format() + "; " + r.outcome().format();
        }
        return where + ": " + spec.kind() + " " + a.role().name().toLowerCase(java.util.Locale.ROOT) + " "
                + Ipv4Addr.format(to) + ":" + spec.common().port() + ": no result (" + a + "); "
                + outcome(a).format();
    }

    /** The client's outcome when it failed (the cause is on its side), else the server's, else ok. */
    @Override
    public Outcome outcome() {
        Outcome c = outcome(client);
        if (!c.ok()) {
            return c;
        }
        Outcome s = outcome(server);
        return s.ok() ? s : Outcome.failed("server: " + s.reason());
    }

    private static Outcome outcome(dev.usnet.tcp.app.App a) {
        AppResult r = a.result();
        return r != null ? r.outcome() : Outcome.failed("no result: " + a);
    }

    @Override
    public boolean histogramAlways() {
        return true;
    }

    @Override
    public String peer() {
        return to();
    }

    /** The client's result: bytes, rate, operations, latency, retransmissions; null until the client has one. */
    @Override
    public AppCounters counters() {
        AppResult r = client.result();
        return r == null ? null : new AppCounters(r.bytes(), r.mbps(), r.operations(), r.latency(), r.retransmits(),
                r.timeouts());
    }

    /** What its two ends have received so far: the payload that got through. */
    @Override
    public long bytesSoFar() {
        return client.bytesReceived() + server.bytesReceived();
    }

    /** Its outcome is its ends' results, which come when it finishes. */
    @Override
    public boolean outcomePending() {
        return !isDone();
    }

    @Override
    public List<String> namespaces() {
        return List.of(ns, serverNs);
    }

    @Override
    public void putResultFields(java.util.Map<String, Object> m) {
        m.put("server_pids", ResultValues.pids(serverProcess()));
    }

    /**
     * With no result yet (its ends report when they close): what it has moved so far, and the rate since its client
     * started, instead of its ends' "no result".
     */
    @Override
    public void putProgress(java.util.Map<String, Object> m, long bytes, java.util.function.ToLongFunction<String> clock) {
        long started = startNanos();
        String so = bytes + " bytes received so far (client " + client.bytesReceived() + ", server "
                + server.bytesReceived() + ")";
        if (clock == null || started == 0) {
            m.put("summary", (started == 0 ? "starting: " : "running: ") + so);
            return;
        }
        double seconds = (clock.applyAsLong(ns) - started) / 1e9;
        if (seconds > 0) {
            double mbit = bytes * 8 / seconds / 1e6;
            m.put("elapsed_s", Math.round(seconds * 1000) / 1000.0);
            m.put("mbit_s_so_far", Math.round(mbit * 1000) / 1000.0);
            m.put("summary", String.format(java.util.Locale.ROOT, "running for %.1f s: %s, %.1f Mbit/s so far", seconds, so, mbit));
        } else {
            m.put("summary", "running: " + so);
        }
    }

    @Override
    public String label() {
        return ns + ": " + spec.kind() + " to " + Ipv4Addr.format(to) + ":" + spec.common().port() + " (server in "
                + serverNs + ")";
    }
}
