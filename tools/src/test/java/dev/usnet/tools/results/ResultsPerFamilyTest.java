package dev.usnet.tools.results;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.Mib;
import dev.usnet.tools.metrics.UsnetCollector;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.TopologyFile;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Results of a dual-stack run say each app's family, carry both families' MIB counters, and record the router's
 * forwarding latency for IPv6 packets on the device-pair paths IPv4 packets take; /metrics names IPv6's counters as
 * node_exporter names /proc/net/snmp6's.
 */
class ResultsPerFamilyTest {
    /** a -- r -- c, both families; a pings c and sends UDP to c over each. Traffic starts after DAD (up to 2 s). */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.1.2/24, 2001:db8:1::a/64]
                    peer: {namespace: r, name: eth0, addresses: [198.18.1.1/24, 2001:db8:1::1/64]}
                routes:
                  - default via 198.18.1.1
                  - default via 2001:db8:1::1
                apps:
                  - {kind: ping, to: "198.18.2.2", interval: 0.1, start: 3s}
                  - {kind: ping, to: "2001:db8:2::c", interval: 0.1, start: 3s}
                  - {kind: udp-send, to: "198.18.2.2", port: 7000, rate: 100, size: 500, start: 3s}
                  - {kind: udp-send, to: "2001:db8:2::c", port: 7000, rate: 100, size: 500, start: 3s}
              r:
                knobs: {net.ipv4.ip_forward: 1, net.ipv6.conf.all.forwarding: 1}
                devices:
                  - name: eth1
                    kind: veth
                    addresses: [198.18.2.1/24, 2001:db8:2::1/64]
                    peer: {namespace: c, name: eth0, addresses: [198.18.2.2/24, 2001:db8:2::c/64]}
              c:
                routes:
                  - default via 198.18.2.1
                  - default via 2001:db8:2::1
                apps:
                  - {kind: udp-sink, port: 7000}
            """;

    @Test
    void appsSayTheirFamilyAndIpv6IsCountedAndTimedAsIpv4Is() {
        VirtualRun.RunResult run = VirtualRun.run(TopologyFile.parse("t.yaml", FILE),
                new VirtualRun.Options(5_000_000_000L, null, null));
        Results res = run.results();
        List<Map<String, Object>> apps = res.apps();
        assertEquals(List.of("inet", "inet6", "inet", "inet6"),
                apps.subList(0, 4).stream().map(m -> m.get("family")).toList());
        assertFalse(apps.get(4).containsKey("family"), "a sink's :port is reached over both families: " + apps.get(4));
        assertEquals("2001:db8:2::c", apps.get(1).get("to"));
        assertEquals(List.of("ok", "ok", "ok", "ok", "ok"), apps.stream().map(m -> m.get("outcome")).toList());
        assertEquals(402L, apps.get(4).get("ops"), "the sink took both senders' datagrams");

        Map<String, Object> r = res.namespaces().stream().filter(n -> n.get("name").equals("r")).findFirst().orElseThrow();
        @SuppressWarnings("unchecked")
        Map<String, Long> mib = (Map<String, Long>) r.get("mib");
        long v4 = mib.get(Mib.IpForwDatagrams.name());
        long v6 = mib.get(Mib.Ip6OutForwDatagrams.name());
        assertTrue(v4 >= 201 + 20 * 2 && v6 >= 201 + 20 * 2, "forwarded: IPv4 " + v4 + ", IPv6 " + v6);

        // r's paths are its device pairs, whatever the family: both families' forwarded packets are on them.
        Map<String, Object> toC = res.paths().stream().filter(p -> p.get("ns").equals("r") && p.get("name").equals("eth0->eth1"))
                .findFirst().orElseThrow();
        long onPath = (Long) toC.get("packets");
        assertTrue(onPath >= (201 + 21) * 2, "both families' datagrams and echoes towards c: " + onPath);
        long towardsC = mib.get(Mib.IpForwDatagrams.name()) + mib.get(Mib.Ip6OutForwDatagrams.name());
        Map<String, Object> back = res.paths().stream().filter(p -> p.get("ns").equals("r") && p.get("name").equals("eth1->eth0"))
                .findFirst().orElseThrow();
        assertEquals(towardsC, onPath + (Long) back.get("packets"), "every forward of either family is on a path");
    }

    @Test
    void ipv6CountersAreExportedUnderSnmp6GroupNames() {
        assertEquals("usnet_netstat_Ip6_InReceives", UsnetCollector.netstatName(Mib.Ip6InReceives));
        assertEquals("usnet_netstat_Ip6_OutForwDatagrams", UsnetCollector.netstatName(Mib.Ip6OutForwDatagrams));
        assertEquals("usnet_netstat_Icmp6_InEchos", UsnetCollector.netstatName(Mib.Icmp6InEchos));
        assertEquals("usnet_netstat_Udp6_NoPorts", UsnetCollector.netstatName(Mib.Udp6NoPorts));
        // IPv4's are as they were.
        assertEquals("usnet_netstat_Ip_ForwDatagrams", UsnetCollector.netstatName(Mib.IpForwDatagrams));
        assertEquals("usnet_netstat_Icmp_InEchos", UsnetCollector.netstatName(Mib.IcmpInEchos));
        assertEquals("usnet_netstat_Udp_NoPorts", UsnetCollector.netstatName(Mib.UdpNoPorts));
        assertEquals("usnet_netstat_IpExt_InNoRoutes", UsnetCollector.netstatName(Mib.IpExtInNoRoutes));
    }

    @Test
    void theFamilyOfADestinationIsReadFromItsAddress() {
        assertEquals("inet", AppFamily.of("198.18.0.2"));
        assertEquals("inet", AppFamily.of("198.18.0.2:5001"));
        assertEquals("inet6", AppFamily.of("2001:db8::2"));
        assertEquals("inet6", AppFamily.of("fe80::1%eth0"));
        assertEquals("inet6", AppFamily.of("[2001:db8::2]:7000"));
        assertNull(AppFamily.of(":7000"));
        assertNull(AppFamily.of("host0,host1"));
        assertNull(AppFamily.of(""));
    }
}
