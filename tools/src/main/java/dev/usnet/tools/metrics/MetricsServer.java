package dev.usnet.tools.metrics;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.build.Topology;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.function.Supplier;

/**
 * {@code usnet run --metrics ADDR:PORT}: the Prometheus text format at {@code /metrics}, served by the Prometheus
 * Java client's HTTP exporter from a registry holding only {@link UsnetCollector} (no JVM metrics: they are the
 * client's to add, not usnet's to decide).
 */
public final class MetricsServer implements AutoCloseable {
    private final HTTPServer server;
    private final String host;

    private MetricsServer(HTTPServer server, String host) {
        this.server = server;
        this.host = host;
    }

    /** {@code spec}: {@code ADDR:PORT}, {@code [V6ADDR]:PORT} or {@code PORT} (on 127.0.0.1); port 0 picks a free one. */
    public static MetricsServer start(String spec, Topology topology, Supplier<Apps> apps) {
        String host = "127.0.0.1";
        String port = spec;
        int colon = spec.lastIndexOf(':');
        if (colon >= 0) {
            host = spec.substring(0, colon);
            port = spec.substring(colon + 1);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isEmpty()) {
                host = "127.0.0.1";
            }
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            p = -1;
        }
        if (p < 0 || p > 65535) {
            throw new UsageException("--metrics must be ADDR:PORT or PORT (0..65535), got '" + spec + "'");
        }
        PrometheusRegistry reg = new PrometheusRegistry();
        reg.register(new UsnetCollector(topology, apps));
        try {
            HTTPServer s = HTTPServer.builder().hostname(host).port(p).registry(reg).buildAndStart();
            return new MetricsServer(s, host.contains(":") ? "[" + host + "]" : host);
        } catch (IOException | RuntimeException e) {
            throw new UsageException("--metrics " + spec + ": cannot listen: " + e.getMessage(), e);
        }
    }

    public int port() {
        return server.getPort();
    }

    /** {@code http://HOST:PORT/metrics}. */
    public String url() {
        return "http://" + host + ":" + port() + "/metrics";
    }

    @Override
    public void close() {
        server.close();
    }
}
