package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.ipv6.Inet6Ifaddr;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** IPv6 in the topology file: addresses, {@code ip -6 route} routes, neighbours, knobs, and what is wrong with them. */
class Ipv6TopologyTest {
    /** Namespaces a (eth0, veth to b's eth0) and b; ADDR_A, ADDR_B, ROUTES_A filled in. */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - {name: eth0, kind: veth, addresses: [ADDR_A], peer: {namespace: b, name: eth0, addresses: [ADDR_B]}}
                routes: [ROUTES_A]
              b: {}
            """;

    private static String file(String a, String b, String routes) {
        return FILE.replace("ADDR_A", a).replace("ADDR_B", b).replace("ROUTES_A", routes);
    }

    private static List<String> warnings(String yaml) {
        return TopologyFile.check("t.yaml", yaml, List.of(), List.of()).warnings();
    }

    private static Topology build(String yaml) {
        TopologySpec spec = TopologyFile.parse("t.yaml", yaml);
        return TopologyBuilder.build(spec, n -> new VirtualScheduler(), TopologyBuilder.ExternalDevices.placeholders());
    }

    private static Ipv6Addr v6(String s) {
        return Ipv6Addr.parse(s);
    }

    @Test
    void theDualStackExampleChecksCleanAndBuildsBothFamilies() throws Exception {
        String yaml = Files.readString(Path.of("../examples/dual-stack.yaml"));
        TopologyFile.Checked c = TopologyFile.check("dual-stack.yaml", yaml, List.of(), List.of());
        assertEquals(List.of(), c.warnings());
        try (Topology t = build(yaml)) {
            NetStack r = t.stack("router");
            // Both families' connected routes, and the file's knobs: IPv6 is on, forwarding too.
            assertEquals("1", r.knobs().get("net.ipv6.conf.all.forwarding"));
            assertEquals("0", r.knobs().get("net.ipv6.conf.all.disable_ipv6"));
            assertNotNull(r.ipv6().fib().get(v6("2001:db8:0:1::"), 64));
            assertNotNull(r.ipv6().fib().get(v6("2001:db8:0:2::"), 64));
            NetStack ctr2 = t.stack("ctr2");
            Route6 viaRouter = ctr2.ipv6().fib().get(v6("2001:db8:0:2::"), 64);
            assertEquals(v6("2001:db8:0:1::1"), viaRouter.gateway());
            assertEquals("eth0", viaRouter.dev().name());
            assertEquals(Route6.METRIC_USER, viaRouter.metric());
            // The server's default route goes by the router's link-local address.
            Route6 def = t.stack("server").ipv6().fib().get(Ipv6Addr.ANY, 0);
            assertEquals(v6("fe80::1"), def.gateway());
            // The IPv4 side is as before.
            assertNotNull(ctr2.routes().lookup(dev.usnet.core.wire.Ipv4Addr.parse("198.18.1.2")));
            // lo has ::1 once IPv6 is on; a namespace given nothing IPv6 keeps it off.
            assertTrue(ctr2.ipv6().addrconf().list(ctr2.loopback()).stream().anyMatch(x -> x.address().isLoopback()));
        }
    }

    @Test
    void aNamespaceGivenNoIpv6KeepsItOff() {
        try (Topology t = build(file("198.18.0.1/24", "198.18.0.2/24", "198.18.5.0/24 via 198.18.0.2"))) {
            NetStack a = t.stack("a");
            assertEquals("1", a.knobs().get("net.ipv6.conf.all.disable_ipv6"));
            assertEquals(List.of(), a.ipv6().addrconf().list());
        }
    }

    @Test
    void addressesTakeNodadAndStartTentativeWithout() {
        try (Topology t = build(file("2001:db8:1::1/64 nodad", "2001:db8:1::2/64", "2001:db8:3::/64 via 2001:db8:1::2"))) {
            Inet6Ifaddr a = t.stack("a").ipv6().addrconf().local(v6("2001:db8:1::1").hi(), v6("2001:db8:1::1").lo());
            assertTrue(a.nodad());
            assertEquals(Inet6Ifaddr.DadState.PREFERRED, a.state());
            Inet6Ifaddr b = t.stack("b").ipv6().addrconf().local(v6("2001:db8:1::2").hi(), v6("2001:db8:1::2").lo());
            assertEquals(Inet6Ifaddr.DadState.TENTATIVE, b.state());
            // Both ends come up with a link-local address as well.
            assertTrue(t.stack("a").ipv6().addrconf().list(t.device("a", "eth0")).stream()
                    .anyMatch(x -> x.address().isLinkLocal()));
        }
    }

    @Test
    void theFilesOwnDisableIpv6Wins() {
        String yaml = file("2001:db8:1::1/64", "198.18.0.2/24", "2001:db8:3::/64 dev eth0").replace("    routes:", "    knobs: {net.ipv6.conf.default.disable_ipv6: 1}\n    routes:");
        try (Topology t = build(yaml)) {
            assertEquals("1", t.stack("a").knobs().get("net.ipv6.conf.default.disable_ipv6"));
            assertEquals("0", t.stack("a").knobs().get("net.ipv6.conf.all.disable_ipv6"));
        }
        String off = file("2001:db8:1::1/64", "198.18.0.2/24", "2001:db8:3::/64 dev eth0")
                .replace("    routes:", "    knobs: {net.ipv6.conf.all.disable_ipv6: 1}\n    routes:");
        assertEquals("t.yaml:5: namespaces.a.devices[0].addresses[0]: IPv6 is off on a/eth0 (net.ipv6.conf.eth0.disable_ipv6"
                + " = 1), so it takes no IPv6 address (Linux: Permission denied); leave the knob at 0",
                TopologyErrors.onlyError(off));
    }

    @Test
    void badAddressesNameTheirLineAndKey() {
        assertEquals("t.yaml:5: namespaces.a.devices[0].addresses[0]: expected an IPv6 address with prefix length 0..128 like"
                + " 2001:db8:1::1/64, got \"2001:db8:1::1\"", TopologyErrors.onlyError(file("2001:db8:1::1", "198.18.0.2/24",
                "198.18.5.0/24 via 198.18.0.2")));
        assertEquals("t.yaml:5: namespaces.a.devices[0].addresses[0]: expected an IPv6 address with prefix length like"
                + " 2001:db8:1::1/64, got \"2001:db8:1:::1/64\"", TopologyErrors.onlyError(file("2001:db8:1:::1/64",
                "198.18.0.2/24", "198.18.5.0/24 via 198.18.0.2")));
        assertEquals("t.yaml:5: namespaces.a.devices[0].addresses[0]: \"2001:db8:1::1/64 dad\": unknown flag 'dad' (an IPv6"
                + " address takes only nodad)", TopologyErrors.onlyError(file("2001:db8:1::1/64 dad", "198.18.0.2/24",
                "198.18.5.0/24 via 198.18.0.2")));
        assertEquals("t.yaml:5: namespaces.a.devices[0].addresses[0]: ff02::1/64 is a multicast address, which no device can"
                + " have (Linux: Cannot assign requested address)", TopologyErrors.onlyError(file("ff02::1/64",
                "198.18.0.2/24", "198.18.5.0/24 via 198.18.0.2")));
        // The peer's list is read the same way.
        assertTrue(TopologyErrors.onlyError(file("198.18.0.1/24", "2001:db8::2/129", "198.18.5.0/24 via 198.18.0.2"))
                .startsWith("t.yaml:5: namespaces.a.devices[0].peer.addresses[0]: expected an IPv6 address with prefix"
                        + " length 0..128"));
    }

    @Test
    void badRoutesNameTheirLine() {
        String base = "2001:db8:1::1/64";
        assertEquals("t.yaml:6: namespaces.a.routes[0]: route '2001:db8:3::1/64 via 2001:db8:1::2': 2001:db8:3::1/64 has"
                + " host bits set (the prefix is 2001:db8:3::/64; Linux would cut it there without a word)",
                TopologyErrors.onlyError(file(base, "2001:db8:1::2/64", "2001:db8:3::1/64 via 2001:db8:1::2")));
        assertEquals("t.yaml:6: namespaces.a.routes[0]: route '2001:db8:3::/64 via 198.18.0.2': gateway 198.18.0.2 is not an"
                + " IPv6 address, and an IPv6 route needs an IPv6 gateway (Linux: inet6 address is expected rather than"
                + " \"198.18.0.2\")", TopologyErrors.onlyError(file(base, "2001:db8:1::2/64", "2001:db8:3::/64 via 198.18.0.2")));
        assertEquals("t.yaml:6: namespaces.a.routes[0]: route '198.18.3.0/24 via 2001:db8:1::2': gateway 2001:db8:1::2 is an"
                + " IPv6 address, and an IPv4 route needs an IPv4 gateway (Linux's 'via inet6' is not modelled)",
                TopologyErrors.onlyError(file(base, "2001:db8:1::2/64", "198.18.3.0/24 via 2001:db8:1::2")));
        assertEquals("t.yaml:6: namespaces.a.routes[0]: route 'default via fe80::2': gateway fe80::2 is link-local, so the"
                + " route needs 'dev DEV' to say which link (Egress device not specified)",
                TopologyErrors.onlyError(file(base, "2001:db8:1::2/64", "default via fe80::2")));
        assertEquals("t.yaml:6: namespaces.a.routes[0]: route '2001:db8:3::/64 via 2001:db8:9::2': gateway 2001:db8:9::2 is"
                + " not on a connected network (Nexthop has invalid gateway)",
                TopologyErrors.onlyError(file(base, "2001:db8:1::2/64", "2001:db8:3::/64 via 2001:db8:9::2")));
        assertEquals("t.yaml:6: namespaces.a.routes[0]: route '2001:db8:3::/64 via 2001:db8:1::1': gateway 2001:db8:1::1 is"
                + " an address of this namespace (Gateway can not be a local address)",
                TopologyErrors.onlyError(file(base, "2001:db8:1::2/64", "2001:db8:3::/64 via 2001:db8:1::1")));
    }

    @Test
    void routesOfEveryTypeAndMetricAreBuiltAsLinuxHasThem() {
        String routes = "'2001:db8:3::/64 via 2001:db8:1::2', 'default via fe80::2 dev eth0 metric 5', "
                + "'unreachable 2001:db8:9::/64', 'blackhole 2001:db8:a::/48', 'prohibit 2001:db8:b::/64 metric 7'";
        try (Topology t = build(file("2001:db8:1::1/64", "2001:db8:1::2/64", routes))) {
            var fib = t.stack("a").ipv6().fib();
            Route6 r = fib.get(v6("2001:db8:3::"), 64);
            assertEquals("eth0", r.dev().name());
            assertEquals(1024, r.metric());
            assertEquals(5, fib.get(Ipv6Addr.ANY, 0).metric());
            Route6 u = fib.get(v6("2001:db8:9::"), 64);
            assertEquals(RouteType.UNREACHABLE, u.type());
            assertEquals("lo", u.dev().name());
            assertEquals(RouteType.BLACKHOLE, fib.get(v6("2001:db8:a::"), 48).type());
            assertEquals(7, fib.get(v6("2001:db8:b::"), 64).metric());
            assertNull(t.stack("a").routes().get(0, 0), "no IPv4 route came from the IPv6 ones");
        }
    }

    @Test
    void ipv6NeighboursArePermanentEntriesOfTheNdTable() throws Exception {
        String yaml = file("2001:db8:1::1/64", "2001:db8:1::2/64", "2001:db8:3::/64 via 2001:db8:1::2")
                .replace("  b: {}", "    neighbours: ['2001:db8:1::2 lladdr 02:00:00:00:00:02 dev eth0']\n  b: {}");
        try (Topology t = build(yaml)) {
            var nd = t.stack("a").ipv6().neigh();
            var dev = t.stack("a").device("eth0");
            Ipv6Addr gw = v6("2001:db8:1::2");
            var n = nd.lookup(dev, gw.hi(), gw.lo());
            assertEquals("PERMANENT", n.state().name());
            assertEquals(0x0200_0000_0002L, n.mac());
            assertEquals("2001:db8:1::2", n.address());
            assertNull(t.stack("a").neigh().lookup(dev, 0), "nothing went into the ARP table");
        }
        String bad = yaml.replace("2001:db8:1::2 lladdr", "ff02::1 lladdr");
        assertEquals("t.yaml:7: namespaces.a.neighbours[0]: neighbour \"ff02::1 lladdr 02:00:00:00:00:02 dev eth0\": ff02::1 is"
                + " a multicast address; a neighbour entry is for one unicast address", TopologyErrors.onlyError(bad));
    }

    @Test
    void anUnknownIpv6KnobIsNamedByTheRegistry() {
        String yaml = file("2001:db8:1::1/64", "2001:db8:1::2/64", "2001:db8:3::/64 via 2001:db8:1::2")
                .replace("    routes:", "    knobs: {net.ipv6.conf.eth0.acept_dad: 0}\n    routes:");
        String e = TopologyErrors.onlyError(yaml);
        assertTrue(e.startsWith("t.yaml:6: namespaces.a.knobs.net.ipv6.conf.eth0.acept_dad: "), e);
        assertTrue(e.contains("accept_dad"), e);
    }

    @Test
    void ipv6InAnIpv4OnlyFieldNamesTheFieldAndTheKernelEndOfATapTakesBothFamilies() {
        List<String> e = TopologyErrors.errors("""
                version: 1
                namespaces:
                  a:
                    devices:
                      - name: tap0
                        kind: tap
                        addresses: [2001:db8:1::1/64]
                        kernel:
                          name: k0
                          addresses: [2001:db8:1::2/64]
                          routes: [2001:db8:3::/64 via 2001:db8:1::1]
                    apps:
                      - {kind: stream, server: a, to: "2001:db8:1::2", port: 9}
                """);
        // A TCP app takes an IPv6 to: as well now, and the kernel end's address is reachable through the TAP.
        assertEquals(List.of(), e);
    }

    @Test
    void anIpv6DeviceKnobForAMissingDeviceIsAnError() {
        String yaml = file("2001:db8:1::1/64", "2001:db8:1::2/64", "2001:db8:3::/64 via 2001:db8:1::2")
                .replace("    routes:", "    knobs: {net.ipv6.conf.eth9.forwarding: 1, net.ipv6.conf.eth0.forwarding: 1}\n"
                        + "    routes:");
        assertEquals("t.yaml:6: namespaces.a.knobs.net.ipv6.conf.eth9.forwarding: knob names device eth9, which namespace a"
                + " does not have (has: lo, eth0)", TopologyErrors.onlyError(yaml));
    }

    @Test
    void aDuplicateAddressOnOneLinkIsAnError() {
        assertEquals("t.yaml:5: namespaces.a.devices[0].peer.addresses[0]: 2001:db8:1::1 is already the address of a/eth0"
                + " (line 5) on the same link; two ends of one segment cannot share an address (both would answer neighbour"
                + " solicitations for it, and duplicate address detection would take it from one)",
                TopologyErrors.onlyError(file("2001:db8:1::1/64", "2001:db8:1::1/64", "2001:db8:3::/64 dev eth0")));
    }

    @Test
    void aTapsKernelEndWithTheTapsOwnIpv6AddressIsADuplicateOnTheLinkAsOverIpv4() {
        String tap = """
                version: 1
                namespaces:
                  a:
                    devices:
                      - name: tap0
                        kind: tap
                        addresses: [OURS]
                        kernel:
                          name: k0
                          addresses: [KERNELS]
                """;
        assertEquals("t.yaml:10: namespaces.a.devices[0].kernel.addresses[0]: 2001:db8:1::1 is already the address of a/tap0"
                + " (line 7) on the same link; two ends of one segment cannot share an address (both would answer neighbour"
                + " solicitations for it, and duplicate address detection would take it from one)",
                TopologyErrors.onlyError(tap.replace("OURS", "2001:db8:1::1/64").replace("KERNELS", "2001:db8:1::1/64")));
        assertEquals("t.yaml:10: namespaces.a.devices[0].kernel.addresses[0]: 198.18.1.1 is already the address of a/tap0"
                + " (line 7) on the same link; two ends of one segment cannot share an address (both would answer ARP for"
                + " it)", TopologyErrors.onlyError(tap.replace("OURS", "198.18.1.1/24").replace("KERNELS", "198.18.1.1/24")));
    }

    @Test
    void anUnreachableAppIsReportedWithItsOwnFamilysNetworksAndRoutes() {
        List<String> e = TopologyErrors.errors("""
                version: 1
                namespaces:
                  a:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.1.1/24, 2001:db8:1::1/64]
                        peer: {namespace: b, name: eth0, addresses: [198.18.1.2/24, 2001:db8:1::2/64]}
                    routes:
                      - 198.18.9.0/24 via 198.18.1.2
                      - 2001:db8:9::/64 via 2001:db8:1::2
                    apps:
                      - {kind: ping, to: "fd00::9"}
                      - {kind: udp-send, to: "198.18.7.7", port: 9}
                  b: {}
                """);
        assertEquals(List.of(
                "t.yaml:13: namespaces.a.apps[0].to: ping app: namespace a has no IPv6 route to fd00::9 (connected:"
                        + " 2001:db8:1::/64; routes: 2001:db8:9::/64 via 2001:db8:1::2)",
                "t.yaml:14: namespaces.a.apps[1].to: udp-send app: namespace a has no route to 198.18.7.7 (connected:"
                        + " 198.18.1.0/24; routes: 198.18.9.0/24 via 198.18.1.2)"), e);
    }

    @Test
    void overlapsTwoLengthsAnycastAndUnsharedPrefixesAreWarnedAbout() {
        String two = """
                version: 1
                namespaces:
                  a:
                    devices:
                      - {name: eth0, kind: veth, addresses: [2001:db8:1::1/64], peer: {namespace: b, name: eth0, addresses: [2001:db8:1::2/64]}}
                      - {name: eth1, kind: veth, addresses: [EXTRA], peer: {namespace: c, name: eth0, addresses: [PEER]}}
                  b: {}
                  c: {}
                """;
        List<String> w = warnings(two.replace("EXTRA", "2001:db8:1::1/48").replace("PEER", "2001:db8:1::3/48"));
        assertEquals(2, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: 2001:db8:1::1 is on a/eth1 as"
                + " /48 and on a/eth0 as /64 (line 5): one address with two prefix lengths"), w.get(0));
        assertTrue(w.get(1).startsWith("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: prefix 2001:db8:1::/48 of"
                + " a/eth1 overlaps 2001:db8:1::/64 of a/eth0 (line 5), a device on another link: packets to"
                + " 2001:db8:1::/64 leave by one of them only"), w.get(1));
        w = warnings(two.replace("EXTRA", "2001:db8:2::/64").replace("PEER", "2001:db8:5::3/64"));
        assertEquals(2, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("t.yaml:6: namespaces.a.devices[1].addresses: warning: veth a/eth1 (2001:db8:2::/64)"
                + " and its peer c/eth0 (2001:db8:5::3/64) share no IPv6 prefix"), w.get(0));
        assertTrue(w.get(1).contains("2001:db8:2::/64 on a/eth1 is the subnet-router anycast address of 2001:db8:2::/64"),
                w.get(1));
        w = warnings(two.replace("EXTRA", "2001:db8:1::7/64").replace("PEER", "2001:db8:1::8/64"));
        assertEquals(List.of("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: prefix 2001:db8:1::/64 of a/eth1 is"
                + " also on a/eth0 (line 5), a device on another link: packets to 2001:db8:1::/64 leave by one of them only;"
                + " give each link its own prefix"), w);
        // Different prefixes that share a link: nothing to say.
        assertEquals(List.of(), warnings(two.replace("EXTRA", "2001:db8:2::1/64").replace("PEER", "2001:db8:2::3/64")));
    }
}
