package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tap.HostCommand;
import dev.usnet.tools.metrics.UsnetCollector;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /metrics} scraped over HTTP and parsed by the Prometheus client's own text-format parser (Python's
 * prometheus_client, Debian's python3-prometheus-client): every value equals what {@code usnet ctl stats} and
 * {@code link show} report. Needs /usr/bin/python3 with prometheus_client: skipped without it, a failure when CI=true.
 */
class MetricsEndpointTest {
    private static final String PARSER = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            out = []
            for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in fam.samples:
                    out.append({"family": fam.name, "type": fam.type, "name": s.name, "labels": s.labels, "value": s.value})
            print(json.dumps(out))
            """;

    static boolean parserAvailable() {
        return Files.isExecutable(Path.of("/usr/bin/python3"))
                && HostCommand.run(20, "/usr/bin/python3", "-c", "import prometheus_client.parser").ok();
    }

    /** Every sample as {@code name{k=v,...}} (labels sorted) to its value. */
    static Map<String, Double> parse(Path text) throws Exception {
        Path script = Files.createTempFile("prom-parse", ".py");
        try {
            Files.writeString(script, PARSER);
            HostCommand.Result r = HostCommand.run(30, "/usr/bin/python3", script.toString(), text.toString());
            assertTrue(r.ok(), "the Prometheus parser refused the exposition: " + r.output());
            Map<String, Double> m = new HashMap<>();
            for (JsonNode s : new ObjectMapper().readTree(r.output())) {
                java.util.TreeMap<String, String> labels = new java.util.TreeMap<>();
                s.get("labels").fields().forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
                m.put(s.get("name").asText() + labels, s.get("value").asDouble());
            }
            return m;
        } finally {
            Files.deleteIfExists(script);
        }
    }

    static String key(String name, String... kv) {
        java.util.TreeMap<String, String> labels = new java.util.TreeMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            labels.put(kv[i], kv[i + 1]);
        }
        return name + labels;
    }

    @Test
    void scrapedValuesEqualCtlStats(@TempDir Path dir) throws Exception {
        boolean ci = "true".equals(System.getenv("CI"));
        if (ci) {
            assertTrue(parserAvailable(), "CI must provide /usr/bin/python3 with prometheus_client (python3-prometheus-client)");
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(parserAvailable(), "python3-prometheus-client");
        }
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology("", ""), dir,
                new DaemonControl.Options(dir.resolve("ctl.sock"), "127.0.0.1:0", null, EventHub.DEFAULT_DROP_RATE))) {
            // Traffic, then quiet: datagrams routed to ctr3 and bridged to ctr2 (closed ports: ICMP port unreachable back).
            NetStack ctr1 = d.topology().stack("ctr1");
            UdpSocket s = d.topology().onLoop("ctr1", () -> ctr1.udp().bind(0, 0));
            ByteBuf data = Unpooled.buffer(300).writeZero(300);
            try {
                for (int i = 0; i < 30; i++) {
                    d.topology().onLoop("ctr1", () -> s.sendTo(Ipv4Addr.parse("198.18.1.13"), 7000, data, 0, 300));
                    d.topology().onLoop("ctr1", () -> s.sendTo(Ipv4Addr.parse("198.18.0.12"), 7000, data, 0, 100));
                    Thread.sleep(5);
                }
            } finally {
                data.release();
                d.topology().onLoop("ctr1", () -> {
                    s.close();
                    return null;
                });
            }
            Thread.sleep(500);
            String url = d.control.metricsUrl();
            HttpResponse<String> resp = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, resp.statusCode());
            assertTrue(resp.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"));
            Path text = dir.resolve("metrics.txt");
            Files.writeString(text, resp.body());
            Map<String, Double> m = parse(text);
            JsonNode stats = d.ok(null, "stats");
            int compared = 0;
            for (JsonNode ns : stats) {
                String n = ns.path("ns").asText();
                for (Mib mib : Mib.values()) {
                    assertEquals(ns.path("mib").path(mib.name()).asDouble(0),
                            m.get(key(UsnetCollector.netstatName(mib) + "_total", "namespace", n)), n + " " + mib);
                    compared++;
                }
                var it = ns.path("drops").fields();
                while (it.hasNext()) {
                    var e = it.next();
                    assertEquals(e.getValue().asDouble(), m.get(key("usnet_drops_total", "namespace", n, "reason", e.getKey())),
                            n + " drop " + e.getKey());
                    compared++;
                }
                assertEquals(ns.path("cow").path("copies").asDouble(), m.get(key("usnet_cow_copies_total", "namespace", n)));
                assertEquals(ns.path("cow").path("bytes").asDouble(), m.get(key("usnet_cow_copied_bytes_total", "namespace", n)));
                var neigh = ns.path("neigh").fields();
                while (neigh.hasNext()) {
                    var e = neigh.next();
                    assertEquals(e.getValue().asDouble(), m.get(key("usnet_neighbours", "namespace", n, "state", e.getKey())));
                    compared++;
                }
                for (JsonNode f : ns.path("fdb")) {
                    String br = f.path("bridge").asText();
                    assertEquals(f.path("learned").asDouble(), m.get(key("usnet_bridge_fdb_entries", "namespace", n, "bridge", br, "kind", "learned")));
                    assertEquals(f.path("local").asDouble(), m.get(key("usnet_bridge_fdb_entries", "namespace", n, "bridge", br, "kind", "local")));
                }
                for (JsonNode p : ns.path("paths")) {
                    String[] io = p.path("path").asText().split("->");
                    String[] l = {"namespace", n, "ingress", io[0], "egress", io[1]};
                    assertEquals(p.path("packets").asDouble(), m.get(key("usnet_forward_latency_seconds_count", l)), p.toString());
                    assertEquals(p.path("packets").asDouble(), m.get(key("usnet_forward_latency_seconds_bucket",
                            "namespace", n, "ingress", io[0], "egress", io[1], "le", "+Inf")));
                    assertEquals(p.path("bytes").asDouble(), m.get(key("usnet_forward_bytes_total", l)));
                    compared++;
                }
                for (JsonNode link : d.ok(n, "link", "show")) {
                    String[] l = {"namespace", n, "device", link.path("ifname").asText()};
                    JsonNode st = link.path("stats64");
                    assertEquals(st.path("rx").path("packets").asDouble(), m.get(key("usnet_network_receive_packets_total", l)));
                    assertEquals(st.path("rx").path("bytes").asDouble(), m.get(key("usnet_network_receive_bytes_total", l)));
                    assertEquals(st.path("tx").path("packets").asDouble(), m.get(key("usnet_network_transmit_packets_total", l)));
                    assertEquals(st.path("tx").path("dropped").asDouble(), m.get(key("usnet_network_transmit_drop_total", l)));
                    assertEquals(link.path("mtu").asDouble(), m.get(key("usnet_network_mtu_bytes", l)));
                    compared++;
                }
            }
            assertTrue(m.get(key("usnet_netstat_Ip_ForwDatagrams_total", "namespace", "host")) >= 30, "the router forwarded");
            assertTrue(m.get(key("usnet_netstat_Udp_NoPorts_total", "namespace", "ctr3")) >= 30);
            assertTrue(compared > 350, "compared " + compared);
        }
    }
}
