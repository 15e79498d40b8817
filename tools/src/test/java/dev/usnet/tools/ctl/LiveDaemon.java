package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A real-time daemon in this JVM, built from a topology text, with its control socket (and, when asked, /metrics and
 * an event log) wired as {@code usnet run} wires them; {@link #ctl} asks it as {@code usnet ctl} does. No privileges.
 */
final class LiveDaemon implements AutoCloseable {
    /**
     * Three containers and a host: ctr1 and ctr2 on bridge br0 (198.18.0.0/24), ctr3 routed behind hr3
     * (198.18.1.0/24). {@code apps} is YAML for ctr1's {@code apps:} (may be empty).
     */
    static String topology(String ctr1Apps, String ctr3Apps) {
        return """
                name: ctltest
                namespaces:
                  host:
                    knobs: {net.ipv4.ip_forward: 1}
                    histograms: true
                    devices:
                      - {name: br0, kind: bridge, ports: [hb1, hb2], addresses: [198.18.0.1/24]}
                  ctr1:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.11/24], peer: {namespace: host, name: hb1}}
                    routes: [default via 198.18.0.1]
                """ + (ctr1Apps.isEmpty() ? "" : "    apps:\n" + ctr1Apps.indent(6)) + """
                  ctr2:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.12/24], peer: {namespace: host, name: hb2}}
                    routes: [default via 198.18.0.1]
                  ctr3:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.1.13/24]
                        peer: {namespace: host, name: hr3, addresses: [198.18.1.1/24]}
                    routes: [default via 198.18.1.1]
                """ + (ctr3Apps.isEmpty() ? "" : "    apps:\n" + ctr3Apps.indent(6));
    }

    final Daemon daemon;
    final DaemonControl control;
    final Path socket;

    private LiveDaemon(Daemon daemon, DaemonControl control, Path socket) {
        this.daemon = daemon;
        this.control = control;
        this.socket = socket;
    }

    static LiveDaemon start(String yaml, Path dir) {
        return start(yaml, dir, new DaemonControl.Options(dir.resolve("ctl.sock"), null, null, EventHub.DEFAULT_DROP_RATE));
    }

    static LiveDaemon start(String yaml, Path dir, DaemonControl.Options o) {
        TopologySpec spec = TopologyFile.parse("ctltest.yaml", yaml);
        DaemonControl[] c = new DaemonControl[1];
        Daemon d = Daemon.start(spec, new Daemon.Options(dir, 2), Daemon.Providers.forThisBuild(), new Daemon.Startup() {
            @Override
            public boolean stopRequested() {
                return false;
            }

            @Override
            public void appsStarting(Topology topology) {
                c[0] = DaemonControl.begin(topology, false, System.nanoTime(), o);
            }

            @Override
            public void appsStopped(Apps apps) {
                c[0].appsStopped(apps);
                c[0].close();
            }
        });
        try {
            c[0].started(new ControlPlane.Host(spec.name(), "real", d.topology(), d::apps, dir, NsLoops.realTime(),
                    d::writeHistograms, d.kernelTaps()));
        } catch (RuntimeException e) {
            d.stop();
            c[0].close();
            throw e;
        }
        return new LiveDaemon(d, c[0], o.ctlSocket());
    }

    Topology topology() {
        return daemon.topology();
    }

    /** One request on a connection of its own; the reply object. */
    JsonNode ctl(String ns, String... args) throws IOException {
        try (CtlClient c = CtlClient.connect(socket)) {
            return c.request(ns, Arrays.asList(args));
        }
    }

    /** One request that must succeed; its data. */
    JsonNode ok(String ns, String... args) throws IOException {
        JsonNode r = ctl(ns, args);
        assertTrue(r.path("ok").asBoolean(), String.join(" ", args) + ": " + r);
        return r.get("data");
    }

    /** One request that must fail; its error message. */
    String error(String ns, String... args) throws IOException {
        JsonNode r = ctl(ns, args);
        assertTrue(!r.path("ok").asBoolean(), String.join(" ", args) + " should have been refused: " + r);
        return r.path("error").asText();
    }

    String text(String ns, String... args) throws IOException {
        JsonNode r = ctl(ns, args);
        assertTrue(r.path("ok").asBoolean(), String.join(" ", args) + ": " + r);
        return r.path("text").asText();
    }

    /** Waits up to {@code ms} for {@code cond}, polling; false when it never held. */
    static boolean eventually(long ms, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) {
            if (cond.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return cond.getAsBoolean();
    }

    /** An app's counter ({@code ops} or {@code bytes}) as {@code apps} reports it. */
    long app(String name, String field) throws IOException {
        for (JsonNode a : ok(null, "apps")) {
            if (a.path("name").asText().equals(name)) {
                return a.path(field).asLong();
            }
        }
        throw new AssertionError("no app " + name);
    }

    /** An app's {@code ops}, for polling; -1 when it cannot be read. */
    long app(String name) {
        try {
            return app(name, "ops");
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    List<String> names(JsonNode arr, String field) {
        return java.util.stream.StreamSupport.stream(arr.spliterator(), false).map(n -> n.path(field).asText()).toList();
    }

    @Override
    public void close() {
        daemon.stop();
        control.close();
    }
}
