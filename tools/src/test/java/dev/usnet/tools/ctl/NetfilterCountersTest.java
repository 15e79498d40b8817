package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.Device;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.metrics.UsnetCollector;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.topology.TopologyBuilder;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.build.Topology;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A router masquerading its inside host, run in virtual time: the results, {@code /metrics} and {@code ctl stats}
 * carry its connection tracking and NAT counters, equal to what the hosts' own counters say happened; the hosts,
 * where connection tracking never ran, carry none.
 */
class NetfilterCountersTest {
    /**
     * a -- r -- c; c has no route back to a's network, so only masquerading lets its answers reach a. a pings c,
     * sends UDP to c's sink, and sends UDP to a port where nothing listens (c answers port unreachable).
     */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.1.2/24]
                    peer: {namespace: r, name: eth0, addresses: [198.18.1.1/24]}
                routes:
                  - default via 198.18.1.1
                apps:
                  - {kind: ping, to: "198.18.2.2", interval: 0.1, start: 1s}
                  - {kind: udp-send, to: "198.18.2.2", port: 7000, rate: 100, size: 200, start: 1s}
                  - {kind: udp-send, to: "198.18.2.2", port: 7001, rate: 10, size: 100, start: 1s}
              r:
                knobs: {net.ipv4.ip_forward: 1, net.netfilter.nf_conntrack_max: 4096}
                devices:
                  - name: eth1
                    kind: veth
                    addresses: [198.18.2.1/24]
                    peer: {namespace: c, name: eth0, addresses: [198.18.2.2/24]}
              c:
                apps:
                  - {kind: udp-sink, port: 7000}
            """;

    private static Map<String, Object> ns(List<Map<String, Object>> l, String name) {
        return l.stream().filter(n -> name.equals(n.get("name")) || name.equals(n.get("ns"))).findFirst().orElseThrow();
    }

    /** The samples of the exposition, {@code name{labels}} to value, for the lines naming {@code prefix}. */
    private static Map<String, Double> samples(String text, String prefix) {
        Map<String, Double> m = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.startsWith(prefix)) {
                int sp = line.lastIndexOf(' ');
                m.put(line.substring(0, sp), Double.parseDouble(line.substring(sp + 1)));
            }
        }
        return m;
    }

    @Test
    void masqueradedTrafficIsCountedAlikeInResultsMetricsAndCtlStats() throws Exception {
        VirtualScheduler vs = new VirtualScheduler();
        Topology topo = TopologyBuilder.build(TopologyFile.parse("t.yaml", FILE), n -> vs,
                TopologyBuilder.ExternalDevices.placeholders());
        try {
            NetStack r = topo.stack("r");
            NatCore nat = NatCore.of(r.ipv4());
            Device outside = topo.device("r", "eth1");
            topo.onLoop("r", () -> {
                nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC, (p, st) -> st.out() == outside
                        ? nat.masquerade(p, NfNatRange.NONE, st.out()) : NfVerdict.ACCEPT);
                return null;
            });
            Apps apps = Apps.of(topo);
            apps.start();
            vs.runFor(4_000_000_000L);
            apps.stop();
            vs.runFor(100_000_000L);
            List<NetStack> stacks = topo.namespaces().stream().map(NetNamespace::stack).toList();
            NetStack a = topo.stack("a");
            NetStack c = topo.stack("c");

            long echoReplies = a.mib().get(Mib.IcmpInEchoReps);
            long unreachables = c.mib().get(Mib.IcmpOutDestUnreachs);
            long forwarded = r.mib().get(Mib.IpForwDatagrams);
            assertTrue(echoReplies >= 25, "c's answers reach a only through the masquerade: " + echoReplies);
            assertTrue(unreachables >= 1, "c answered the closed port: " + unreachables);

            Results res = Results.collect("t", "virtual", 1, 4.1, apps.list(), stacks, new LinkedHashMap<>());
            @SuppressWarnings("unchecked")
            Map<String, Object> nf = (Map<String, Object>) ns(res.namespaces(), "r").get("netfilter");
            assertTrue(nf != null, "r ran connection tracking: " + ns(res.namespaces(), "r").keySet());
            // Three connections: the echoes (one identifier), and each sender's one socket.
            assertEquals(3L, nf.get("entries"));
            assertEquals(4096L, nf.get("max"));
            @SuppressWarnings("unchecked")
            Map<String, Long> stats = (Map<String, Long>) nf.get("stats");
            assertEquals(List.of("found", "invalid", "insert", "insert_failed", "drop", "early_drop", "error",
                    "search_restart", "clash_resolve", "chaintoolong"), List.copyOf(stats.keySet()));
            assertEquals(0L, stats.get("invalid"), stats.toString());
            assertEquals(Map.of(), nf.get("invalid"));
            @SuppressWarnings("unchecked")
            Map<String, Long> natCounts = (Map<String, Long>) nf.get("nat");
            assertEquals(3L, natCounts.get("snat_bindings"), natCounts.toString());
            assertEquals(0L, natCounts.get("dnat_bindings"));
            assertEquals(0L, natCounts.get("null_bindings_moved"));
            // Every forwarded packet was rewritten once (sources out, destinations back), except the ICMP errors,
            // whose quoted header was translated instead.
            assertEquals(unreachables, natCounts.get("icmp_translated"));
            assertEquals(forwarded - unreachables, natCounts.get("rewrites"));
            assertEquals(0L, natCounts.get("no_free_tuple"));
            for (String host : new String[] {"a", "c"}) {
                assertFalse(ns(res.namespaces(), host).containsKey("netfilter"), host + " never ran connection tracking");
            }
            assertTrue(res.toJson().contains("\"netfilter\""));

            String text = PrometheusTextFormatWriter.create().toDebugString(new UsnetCollector(topo, () -> apps).collect());
            Map<String, Double> m = samples(text, "usnet_nf_");
            assertEquals(3.0, m.get("usnet_nf_conntrack_entries{namespace=\"r\"}"), text);
            assertEquals(4096.0, m.get("usnet_nf_conntrack_max{namespace=\"r\"}"));
            assertEquals(0.0, m.get("usnet_nf_conntrack_stat_total{namespace=\"r\",stat=\"invalid\"}"));
            assertEquals(0.0, m.get("usnet_nf_conntrack_stat_total{namespace=\"r\",stat=\"drop\"}"));
            assertEquals(3.0, m.get("usnet_nf_nat_bindings_total{kind=\"snat\",namespace=\"r\"}"), m.toString());
            assertEquals(0.0, m.get("usnet_nf_nat_bindings_total{kind=\"dnat\",namespace=\"r\"}"));
            assertEquals((double) (forwarded - unreachables), m.get("usnet_nf_nat_rewrites_total{namespace=\"r\"}"));
            assertEquals((double) unreachables, m.get("usnet_nf_nat_icmp_translated_total{namespace=\"r\"}"));
            assertFalse(m.keySet().stream().anyMatch(k -> k.contains("namespace=\"a\"") || k.contains("namespace=\"c\"")),
                    "only r has netfilter samples: " + m.keySet());
            if (MetricsEndpointTest.parserAvailable()) {
                // The Prometheus client's own parser reads the same values.
                java.nio.file.Path f = java.nio.file.Files.createTempFile("nf-metrics", ".txt");
                try {
                    java.nio.file.Files.writeString(f, text);
                    Map<String, Double> parsed = MetricsEndpointTest.parse(f);
                    assertEquals(3.0, parsed.get("usnet_nf_nat_bindings_total{kind=snat, namespace=r}"), parsed.keySet()
                            .stream().filter(k -> k.startsWith("usnet_nf")).toList().toString());
                    assertEquals((double) unreachables, parsed.get("usnet_nf_nat_icmp_translated_total{namespace=r}"));
                } finally {
                    java.nio.file.Files.delete(f);
                }
            }

            Map<String, Object> ctl = StatsVerbs.of(r);
            assertEquals(nf, ctl.get("netfilter"), "ctl stats shows the same counters");
            assertFalse(StatsVerbs.of(a).containsKey("netfilter"));
            String shown = StatsVerbs.text(List.of(ctl));
            assertTrue(shown.contains("conntrack: 3 entries (max 4096)"), shown);
            assertTrue(shown.contains("nat: snat_bindings=3 dnat_bindings=0 null_bindings_moved=0 rewrites="
                    + (forwarded - unreachables) + " icmp_translated=" + unreachables), shown);
        } finally {
            topo.close();
        }
    }
}
