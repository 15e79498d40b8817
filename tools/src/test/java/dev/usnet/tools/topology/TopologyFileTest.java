package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.errors;
import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.core.knob.DeviceKnob;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Parsing and validation: every class of error names the file, the line and the key path. */
class TopologyFileTest {

    private static final String GOOD = """
            namespaces:
              host:
                knobs:
                  net.ipv4.ip_forward: 1
                devices:
                  - name: br0
                    kind: bridge
                    ports: [hb1]
                    addresses: [198.18.0.1/24]
              ctr1:
                devices:
                  - name: eth0
                    kind: veth
                    mtu: 1400
                    addresses: [198.18.0.11/24]
                    peer: {namespace: host, name: hb1}
                routes:
                  - default via 198.18.0.1
            """;

    /** Parses and builds (as --check does) and returns the errors, or an empty list. */

    @Test
    void aGoodFileParsesWithThePeerEndInItsNamespace() {
        TopologySpec spec = TopologyFile.parse("t.yaml", GOOD);
        assertEquals(List.of("host", "ctr1"), spec.namespaces().stream().map(TopologySpec.Ns::name).toList());
        assertEquals(3, spec.deviceCount());
        Veth peer = (Veth) spec.namespace("host").device("hb1");
        assertTrue(peer.peerSide());
        assertEquals("ctr1", peer.peerNamespace());
        assertEquals(1400, ((Veth) spec.namespace("ctr1").device("eth0")).link().mtu());
        assertEquals("hb1", ((BridgeDev) spec.namespace("host").device("br0")).ports().get(0).name());
        assertEquals("t", spec.name());
        TopologyBuilder.check(spec);
    }

    @Test
    void aBadValueNamesLineKeyPathAndWhatWasExpected() {
        String e = onlyError(GOOD.replace("mtu: 1400", "mtu: big"));
        assertEquals("t.yaml:14: namespaces.ctr1.devices[0].mtu: expected an integer 68..65535, got \"big\"", e);
        e = onlyError(GOOD.replace("mtu: 1400", "mtu: 40"));
        assertEquals("t.yaml:14: namespaces.ctr1.devices[0].mtu: expected an integer 68..65535, got 40", e);
    }

    @Test
    void unknownKeysAreErrorsWithTheirLineAndANearbySuggestion() {
        String e = onlyError(GOOD.replace("mtu: 1400", "mtuu: 1400"));
        assertTrue(e.startsWith("t.yaml:14: namespaces.ctr1.devices[0].mtuu: unknown key (did you mean 'mtu'?)"), e);
        e = onlyError("routers: {}\n" + GOOD);
        assertTrue(e.startsWith("t.yaml:1: routers: unknown key; expected one of: "), e);
        e = onlyError(GOOD.replace("    routes:", "    neighbors: []\n    routes:"));
        assertTrue(e.startsWith("t.yaml:17: namespaces.ctr1.neighbors: unknown key (did you mean 'neighbours'?)"), e);
        e = onlyError(GOOD.replace("mtu: 1400", "ports: [x]"));
        assertEquals("t.yaml:14: namespaces.ctr1.devices[0].ports: 'ports' applies to kind bridge, not veth", e);
    }

    @Test
    void aBadCidrIsReportedAtItsListItem() {
        String e = onlyError(GOOD.replace("[198.18.0.11/24]", "[198.18.0.11/24, 198.18.0.300/24]"));
        assertEquals("t.yaml:15: namespaces.ctr1.devices[0].addresses[1]: expected an IPv4 address with prefix length"
                + " like 198.18.0.1/24, got \"198.18.0.300/24\"", e);
        e = onlyError(GOOD.replace("[198.18.0.11/24]", "[198.18.0.11]"));
        assertTrue(e.startsWith("t.yaml:15: namespaces.ctr1.devices[0].addresses[0]: expected an IPv4 address"), e);
    }

    @Test
    void aRouteToAnUnknownDeviceOrAnUnconnectedGatewayIsReportedByTheBuild() {
        String e = onlyError(GOOD.replace("default via 198.18.0.1", "198.18.7.0/24 dev eth9"));
        assertTrue(e.startsWith("t.yaml:18: namespaces.ctr1.routes[0]: route '198.18.7.0/24 dev eth9': no device 'eth9'"), e);
        assertTrue(e.contains("have: lo, eth0"), e);
        e = onlyError(GOOD.replace("default via 198.18.0.1", "default via 198.18.5.1"));
        assertTrue(e.startsWith("t.yaml:18: namespaces.ctr1.routes[0]: route 'default via 198.18.5.1': gateway 198.18.5.1"
                + " is not on a connected network"), e);
        e = onlyError(GOOD.replace("default via 198.18.0.1", "default vai 198.18.0.1"));
        assertTrue(e.startsWith("t.yaml:18: namespaces.ctr1.routes[0]: route 'default vai 198.18.0.1': unknown keyword 'vai'"), e);
    }

    @Test
    void knobsAreValidatedByTheStackWithTheirLine() {
        String e = onlyError(GOOD.replace("net.ipv4.ip_forward: 1", "net.ipv4.ip_forward: 2"));
        assertEquals("t.yaml:4: namespaces.host.knobs.net.ipv4.ip_forward: net.ipv4.ip_forward: 2 is out of range 0..1", e);
        e = onlyError(GOOD.replace("net.ipv4.ip_forward: 1", "net.ipv4.ip_forwarding: 1"));
        assertTrue(e.startsWith("t.yaml:4: namespaces.host.knobs.net.ipv4.ip_forwarding: unknown knob 'net.ipv4.ip_forwarding'"), e);
        e = onlyError(GOOD.replace("net.ipv4.ip_forward: 1", "net.ipv4.conf.hb9.proxy_arp: 1"));
        assertTrue(e.startsWith("t.yaml:4: namespaces.host.knobs.net.ipv4.conf.hb9.proxy_arp: knob names device hb9, which"
                + " namespace host does not have"), e);
        assertEquals(List.of(), errors(GOOD.replace("net.ipv4.ip_forward: 1", "net.ipv4.conf.hb1.proxy_arp: true")));
        // A per-device family declared anywhere (here, by this test) is checked the same way, with no change here.
        e = onlyError(GOOD.replace("net.ipv4.ip_forward: 1", "usnet.example.tools.hb9.widgets: 1"));
        assertTrue(e.startsWith("t.yaml:4: namespaces.host.knobs.usnet.example.tools.hb9.widgets: knob names device hb9,"
                + " which namespace host does not have"), e);
        assertEquals(List.of(), errors(GOOD.replace("net.ipv4.ip_forward: 1", "usnet.example.tools.hb1.widgets: 3")));
        e = onlyError(GOOD.replace("net.ipv4.ip_forward: 1", "usnet.netem.hb9: delay 1ms"));
        assertTrue(e.startsWith("t.yaml:4: namespaces.host.knobs.usnet.netem.hb9: knob names device hb9,"), e);
    }

    // A per-device knob family of this test's own, unknown to tools' code.
    static final DeviceKnob WIDGETS = DeviceKnob.define("usnet.example.tools.", "widgets", 0, 0, 9,
            DeviceKnob.Combine.DEVICE);

    @Test
    void duplicateDeviceNamesNameBothPlaces() {
        String dup = GOOD.replace("        peer: {namespace: host, name: hb1}\n",
                "        peer: {namespace: host, name: hb1}\n      - name: eth0\n        kind: bridge\n");
        String e = onlyError(dup);
        assertEquals("t.yaml:17: namespaces.ctr1.devices[1].name: duplicate device name eth0 in namespace ctr1"
                + " (first declared at line 12)", e);
        // A veth's peer end that collides with a device declared in its namespace is reported where the peer is.
        e = onlyError(GOOD.replace("      - name: br0\n", "      - name: hb1\n        kind: bridge\n      - name: br0\n")
                .replace("ports: [hb1]", "ports: []"));
        assertEquals("t.yaml:18: namespaces.ctr1.devices[0].peer.name: duplicate device name hb1 in namespace host"
                + " (first declared at line 6)", e);
        // Two veths whose peer ends share a name: the second is told whose peer the first is.
        e = onlyError(GOOD + """
                  ctr2:
                    devices:
                      - name: eth0
                        kind: veth
                        peer: {namespace: host, name: hb1}
                """);
        assertEquals("t.yaml:23: namespaces.ctr2.devices[0].peer.name: duplicate device name hb1 in namespace host"
                + " (already the peer end of veth eth0 in namespace ctr1, line 16)", e);
    }

    @Test
    void referencesMustResolve() {
        String e = onlyError(GOOD.replace("ports: [hb1]", "ports: [hb1, eth0]"));
        assertTrue(e.startsWith("t.yaml:8: namespaces.host.devices[0].ports[1]: no device eth0 in namespace host"), e);
        e = onlyError(GOOD.replace("{namespace: host, name: hb1}", "{namespace: hots, name: hb1}").replace("ports: [hb1]", "ports: []"));
        assertTrue(e.startsWith("t.yaml:16: namespaces.ctr1.devices[0].peer.namespace: no usnet namespace hots"), e);
        e = onlyError(GOOD + """
                    captures:
                      - device: eth1
                """);
        assertTrue(e.startsWith("t.yaml:20: namespaces.ctr1.captures[0].device: no device eth1 in namespace ctr1"), e);
        e = onlyError(GOOD + """
                    neighbours:
                      - 198.18.0.1 lladdr 02:00:00:00:00:01 dev eth7
                """);
        assertTrue(e.startsWith("t.yaml:20: namespaces.ctr1.neighbours[0]: no device eth7"), e);
        assertEquals(List.of(), errors(GOOD + """
                    neighbours:
                      - 198.18.0.1 lladdr 02:00:00:00:00:01 dev eth0
                """));
    }

    @Test
    void everyProblemIsReportedInOnePass() {
        List<String> e = errors(GOOD.replace("mtu: 1400", "mtu: big").replace("[198.18.0.11/24]", "[nope]")
                .replace("kind: bridge", "kind: switch"));
        assertEquals(3, e.size(), e.toString());
        assertTrue(e.get(0).startsWith("t.yaml:7: namespaces.host.devices[0].kind: expected one of veth, bridge, tap, pcap,"
                + " loopback, replay, got \"switch\""), e.get(0));
        assertTrue(e.get(1).startsWith("t.yaml:14: namespaces.ctr1.devices[0].mtu:"), e.get(1));
        assertTrue(e.get(2).startsWith("t.yaml:15: namespaces.ctr1.devices[0].addresses[0]:"), e.get(2));
    }

    @Test
    void yamlSyntaxAndShapeErrorsHaveLinesToo() {
        String e = onlyError("namespaces:\n  host:\n    devices: [\n");
        assertTrue(e.startsWith("t.yaml:4: YAML syntax: "), e);
        e = onlyError("namespaces:\n  host:\n    devices: {name: x}\n");
        assertTrue(e.startsWith("t.yaml:3: namespaces.host.devices: expected a list"), e);
        e = onlyError("namespaces:\n  host: {}\n  host: {}\n");
        assertEquals("t.yaml:3: namespaces.host: duplicate key (first at line 2)", e);
        e = onlyError("");
        assertTrue(e.startsWith("t.yaml:1: the file is empty"), e);
        e = onlyError("name: x\n");
        assertEquals("t.yaml:1: namespaces: missing (required)", e);
    }

    @Test
    void kindSpecificChecks() {
        String tap = """
                kernel:
                  namespaces: [usnet-a]
                namespaces:
                  r:
                    devices:
                      - name: tap-a
                        kind: tap
                        addresses: [198.18.1.1/24]
                        kernel:
                          namespace: usnet-a
                          name: usnet-a0
                          addresses: [198.18.1.2/24]
                          routes: [default via 198.18.1.1]
                """;
        assertEquals(List.of(), errors(tap));
        String e = onlyError(tap.replace("default via 198.18.1.1", "default via 198.18.9.1"));
        assertTrue(e.startsWith("t.yaml:13: namespaces.r.devices[0].kernel.routes[0]: route 'default via 198.18.9.1': gateway"
                + " 198.18.9.1 is not on a connected network"), e);
        assertTrue(e.endsWith("in kernel namespace usnet-a (which usnet creates empty)"), e);
        // An existing kernel namespace is the user's: anything may be connected there.
        assertEquals(List.of(), errors(tap.replace("  namespaces: [usnet-a]", "  namespaces: []")
                .replace("default via 198.18.1.1", "default via 198.18.9.1")));
        e = onlyError(tap.replace("name: usnet-a0", "name: a-very-long-ifname"));
        assertTrue(e.startsWith("t.yaml:11: namespaces.r.devices[0].kernel.name: not an interface name"), e);
        e = onlyError(tap.replace("kind: tap", "kind: tap\n        mac: 01:00:5e:00:00:01"));
        assertTrue(e.startsWith("t.yaml:8: namespaces.r.devices[0].mac: expected a unicast MAC"), e);
        e = onlyError(GOOD.replace("kind: bridge", "kind: bridge\n        group_fwd_mask: 1"));
        assertTrue(e.startsWith("t.yaml:8: namespaces.host.devices[0].group_fwd_mask: bits 0-2"), e);
        e = onlyError(GOOD.replace("ports: [hb1]", "ports: [br0]"));
        assertTrue(e.startsWith("t.yaml:8: namespaces.host.devices[0].ports[0]: a bridge cannot be its own port"), e);
        e = onlyError(GOOD.replace("[198.18.0.1/24]", "[198.18.0.1/24, 198.18.0.1/24]"));
        assertTrue(e.startsWith("t.yaml:9: namespaces.host.devices[0].addresses[1]: 198.18.0.1 already on br0"), e);
        e = onlyError(GOOD + """
                    apps:
                      - kind: ping
                        to: 198.18.0.1
                        interval: 0
                """);
        assertTrue(e.startsWith("t.yaml:22: namespaces.ctr1.apps[0].interval: expected a number 0.001..3600, got 0"), e);
    }

    @Test
    void parseThrowsTopologyExceptionWithAllErrors() {
        TopologyException ex = assertThrows(TopologyException.class, () -> TopologyFile.parse("t.yaml", "namespaces: [a]\n"));
        assertEquals(List.of("t.yaml:1: namespaces: expected a mapping (key: value lines), got a list"), ex.errors());
    }
}
