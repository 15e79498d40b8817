package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.errors;
import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet run --check} reports every problem of a file in one run: parse errors do not hide knob errors,
 * a knob naming a missing device does not hide its bad value, command-line arguments are judged with the file;
 * and the checks across namespaces (addresses on one segment, subnets of a veth pair, reachability of apps).
 */
class CheckInOnePassTest {
    /** Independent problems of many kinds, each on its own line; c3/c4 only draw a warning and the both-sides error. */
    static final String MANY = """
                namespaces:
                  host:
                    knobs:
                      net.ipv4.ip_forward: 2
                      net.ipv4.conf.eth9.proxy_arp: 1
                      net.ipv4.conf.eth8.proxy_arp: 7
                      net.ipv4.tcp_congestion_contrl: cubic
                      usnet.netem.hb1.delay: 5
                    devices:
                      - name: br0
                        kind: bridge
                        ports: [hb1, hb2, hb9]
                        addresses: [198.18.0.1/24]
                      - name: hb1
                        kind: veth
                        mtuu: 1500
                        netem: "delay 10 loss 1%"
                        peer: {namespace: ctr1, name: eth0, addresses: [198.18.0.2/24]}
                    routes:
                      - 198.18.9.0/24 via 198.18.7.1
                  ctr1:
                    apps:
                      - {kind: ping, to: 198.18.0.1}
                      - {kind: ping, to: 198.18.6.1}
                      - {kind: stream, server: nowhere}
                  ctr2:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.0.2/24]
                        peer: {namespace: host, name: hb2}
                  lone:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.0.300/24]
                        peer: {name: eth1}
                  c3:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.4.1/24]
                        peer: {namespace: c4, name: eth0, addresses: [198.18.5.1/24]}
                  c4:
                    devices:
                      - name: eth0
                        kind: veth
                        peer: {namespace: c3, name: eth0}
                """;

    @Test
    void oneCheckRunReportsEveryProblemOfTheFileAndTheCommandLine(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("all.yaml");
        Files.writeString(file, MANY);
        String f = "usnet: " + file;
        Result r = RunCommandTest.run("run", "--check", file.toString(), "--set", "foo=1", "--set",
                "ctr1:net.ipv4.ip_default_ttl=0", "--capture", "host/lo=lo.pcap");
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertEquals(List.of(
                    f + ":40: namespaces.c3.devices[0].addresses: warning: veth c3/eth0 (198.18.4.1/24) and its peer c4/eth0 (198.18.5.1/24) share no subnet: neither reaches the other without a route",
                    f + ":4: namespaces.host.knobs.net.ipv4.ip_forward: net.ipv4.ip_forward: 2 is out of range 0..1",
                    f + ":5: namespaces.host.knobs.net.ipv4.conf.eth9.proxy_arp: knob names device eth9, which namespace host does not have (has: lo, br0, hb1, hb2)",
                    f + ":6: namespaces.host.knobs.net.ipv4.conf.eth8.proxy_arp: knob names device eth8, which namespace host does not have (has: lo, br0, hb1, hb2)",
                    f + ":6: namespaces.host.knobs.net.ipv4.conf.eth8.proxy_arp: net.ipv4.conf.eth8.proxy_arp: 7 is out of range 0..1",
                    f + ":7: namespaces.host.knobs.net.ipv4.tcp_congestion_contrl: unknown knob 'net.ipv4.tcp_congestion_contrl' (did you mean 'net.ipv4.tcp_congestion_control'?)",
                    f + ":8: namespaces.host.knobs.usnet.netem.hb1.delay: usnet.netem.hb1.delay: '5' needs a unit (expected a time with its unit like 100ns, 50us, 1.5ms, 2s (ns, us, ms, s); or 0)",
                    f + ":12: namespaces.host.devices[0].ports[2]: no device hb9 in namespace host (has: lo, br0, hb1, hb2); a port must be in its bridge's namespace",
                    f + ":16: namespaces.host.devices[1].mtuu: unknown key (did you mean 'mtu'?); expected one of: addresses, gro, gso, kind, mac, master, mtu, name, needed_headroom, netem, peer, tx_checksumming, up",
                    f + ":17: namespaces.host.devices[1].netem: '10' needs a unit (expected a time with its unit like 100ns, 50us, 1.5ms, 2s (ns, us, ms, s); or 0)",
                    f + ":20: namespaces.host.routes[0]: route '198.18.9.0/24 via 198.18.7.1': gateway 198.18.7.1 is not on a connected network (Nexthop has invalid gateway)",
                    f + ":24: namespaces.ctr1.apps[1].to: ping app: namespace ctr1 has no route to 198.18.6.1 (connected: 198.18.0.0/24; no routes)",
                    f + ":25: namespaces.ctr1.apps[2].server: no usnet namespace nowhere (declared: host, ctr1, ctr2, lone, c3, c4)",
                    f + ":30: namespaces.ctr2.devices[0].addresses[0]: 198.18.0.2 is already the address of ctr1/eth0 (line 18) on the same link; two ends of one segment cannot share an address (both would answer ARP for it)",
                    f + ":36: namespaces.lone.devices[0].addresses[0]: expected an IPv4 address with prefix length like 198.18.0.1/24, got \"198.18.0.300/24\"",
                    f + ":46: namespaces.c4.devices[0].name: veth pair c3/eth0 - c4/eth0 is declared from both sides (line 40 in c3, line 46 in c4); declare a pair once, with its other end under peer:, e.g. in c3: {name: eth0, kind: veth, peer: {namespace: c4, name: eth0}}, and move this entry's settings (addresses, mac, netem...) into that peer:",
                    "usnet: --set foo=1: unknown knob 'foo' (no known knob has a similar name)",
                    "usnet: --set ctr1:net.ipv4.ip_default_ttl=0: net.ipv4.ip_default_ttl: 0 is out of range 1..255",
                    f + ": 17 problems"), r.err().lines().toList());
    }

    @Test
    void aSetWithoutNamespaceIsReportedOnceNamingTheOption(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("three.yaml");
        Files.writeString(file, "namespaces: {a: {}, b: {}, c: {}}\n");
        Result r = RunCommandTest.run("run", "--check", file.toString(), "--set", "net.ipv4.ip_fowrard=1");
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertEquals(List.of("usnet: --set net.ipv4.ip_fowrard=1: unknown knob 'net.ipv4.ip_fowrard' (did you mean"
                + " 'net.ipv4.ip_forward'?)", "usnet: " + file + ": 1 problem"), r.err().lines().toList());
    }

    @Test
    void warningsArePrintedAndAloneKeepTheCheckPassing(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("subnets.yaml");
        Files.writeString(file, """
                namespaces:
                  a:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.4.1/24]
                        peer: {namespace: b, name: eth0, addresses: [198.18.5.1/24]}
                  b: {}
                """);
        Result r = RunCommandTest.run("run", "--check", file.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals("usnet: " + file + ":4: namespaces.a.devices[0].addresses: warning: veth a/eth0 (198.18.4.1/24) and its"
                + " peer b/eth0 (198.18.5.1/24) share no subnet: neither reaches the other without a route\n", r.err());
        assertTrue(r.out().contains(": ok (2 namespaces, 2 devices"), r.out());
        // On one subnet, or with a /32 (a point-to-point link routed by device), nothing is said.
        Files.writeString(file, Files.readString(file).replace("198.18.5.1/24", "198.18.4.2/24"));
        assertEquals("", RunCommandTest.run("run", "--check", file.toString()).err());
        Files.writeString(file, Files.readString(file).replace("198.18.4.2/24", "198.18.5.1/32"));
        assertEquals("", RunCommandTest.run("run", "--check", file.toString()).err());
    }

    @Test
    void aVethDeclaredFromBothSidesSaysHowToDeclareAPair() {
        String e = onlyError("""
                namespaces:
                  a:
                    devices:
                      - {name: eth0, kind: veth, peer: {namespace: b, name: veth-a}}
                  b:
                    devices:
                      - name: veth-a
                        kind: veth
                        peer: {namespace: a, name: eth0}
                """);
        assertEquals("t.yaml:7: namespaces.b.devices[0].name: veth pair a/eth0 - b/veth-a is declared from both sides (line 4"
                + " in a, line 7 in b); declare a pair once, with its other end under peer:, e.g. in a: {name: eth0, kind: veth,"
                + " peer: {namespace: b, name: veth-a}}, and move this entry's settings (addresses, mac, netem...) into that peer:",
                e);
        // Both namespaces keep the device, so their routes are still judged in the same run.
        List<String> all = errors("""
                namespaces:
                  a:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: b, name: veth-a}}
                    routes: [default via 198.18.9.9]
                  b:
                    devices:
                      - {name: veth-a, kind: veth, peer: {namespace: a, name: eth0}}
                """);
        assertEquals(2, all.size(), all.toString());
        assertTrue(all.get(0).startsWith("t.yaml:5: namespaces.a.routes[0]: route 'default via 198.18.9.9': gateway 198.18.9.9"
                + " is not on a connected network"), all.toString());
        assertTrue(all.get(1).startsWith("t.yaml:8: namespaces.b.devices[0].name: veth pair a/eth0 - b/veth-a is declared from"
                + " both sides"), all.toString());
    }

    @Test
    void anEntryThatCannotBeReadIsReportedItselfNotThroughWhatNamesIt() {
        // The peer end's name is misspelt, so the pair cannot be made: the knob, the bridge port and the rr app that
        // depend on host/hb1 and its address would all fail too, but the entry is the one thing to fix.
        List<String> e = errors("""
                namespaces:
                  host:
                    knobs:
                      net.ipv4.conf.hb1.proxy_arp: 1
                    devices:
                      - {name: br0, kind: bridge, ports: [hb1]}
                  ctr1:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.2/24], peer: {namespace: host, nam: hb1, addresses: [198.18.0.1/24]}}
                    apps:
                      - {kind: rr, server: host}
                """);
        assertEquals(List.of("t.yaml:9: namespaces.ctr1.devices[0].peer.nam: unknown key (did you mean 'name'?); expected one"
                + " of: addresses, gro, gso, mac, master, mtu, name, namespace, needed_headroom, netem, tx_checksumming, up",
                "t.yaml:9: namespaces.ctr1.devices[0].peer.name: missing (required)"), e);
    }

    @Test
    void anAddressTwiceOnOneSegmentIsAnErrorAcrossNamespacesButNotOnDifferentSegments() {
        String bridged = """
                namespaces:
                  host:
                    devices:
                      - {name: br0, kind: bridge, ports: [p1, p2]}
                  c1:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.2/24], peer: {namespace: host, name: p1}}
                  c2:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.2/24], peer: {namespace: host, name: p2}}
                """;
        assertEquals("t.yaml:10: namespaces.c2.devices[0].addresses[0]: 198.18.0.2 is already the address of c1/eth0 (line 7)"
                + " on the same link; two ends of one segment cannot share an address (both would answer ARP for it)",
                onlyError(bridged));
        // Not bridged: two separate links may reuse an address (as two isolated container networks do).
        assertEquals(List.of(), errors(bridged.replace("ports: [p1, p2]", "ports: [p1]")));
    }

    @Test
    void pingsAndUdpSendersNeedARouteToTheirDestination() {
        String file = """
                namespaces:
                  a:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}}
                    apps:
                      - {kind: ping, to: 198.18.0.2}
                      - {kind: udp-send, to: 198.18.7.7, port: 9}
                  b: {}
                """;
        assertEquals("t.yaml:7: namespaces.a.apps[1].to: udp-send app: namespace a has no route to 198.18.7.7 (connected:"
                + " 198.18.0.0/24; no routes)", onlyError(file));
        // A misspelt routes: key is the one problem then, not the route it would have given.
        assertEquals("t.yaml:8: namespaces.a.rotes: unknown key (did you mean 'routes'?); expected one of: apps, captures,"
                + " devices, histograms, knobs, neighbours, nftables, routes",
                onlyError(file.replace("  b: {}", "    rotes: [default via 198.18.0.2]\n  b: {}")));
        // A default route reaches it: the tables are judged as they would be built.
        assertEquals(List.of(), errors(file.replace("  b: {}", "    routes: [default via 198.18.0.2]\n  b: {}")));
    }

    /** Two TAPs with one kernel name in one kernel namespace: an error on the second, not a crash of the check. */
    @Test
    void aTapKernelNameUsedTwiceInOneKernelNamespaceIsAnErrorNotACrash() {
        String yaml = """
                kernel:
                  namespaces: [usnet-x]
                namespaces:
                  r:
                    devices:
                      - name: t1
                        kind: tap
                        kernel: {namespace: usnet-x, name: kx0}
                      - name: t2
                        kind: tap
                        kernel: {namespace: usnet-x, name: kx0}
                """;
        List<String> errors = errors(yaml);
        assertEquals(1, errors.size(), errors.toString());
        assertTrue(errors.get(0).contains(":11: namespaces.r.devices[1].kernel: TAP interface name kx0 is used twice"),
                errors.toString());
    }

}
