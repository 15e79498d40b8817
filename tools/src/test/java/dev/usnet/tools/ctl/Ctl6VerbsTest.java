package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ctl -6 addr|route|neigh}: IPv6 as {@code ip -6} shows and changes it, on a running daemon. */
class Ctl6VerbsTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;

    private static final String TOPOLOGY = """
            version: 1
            name: ctl6
            namespaces:
              r:
                # Duplicate address detection sends 10 probes 1 s apart (not one), so the tentative state the tests
                # read cannot end while they run, however slowly a loaded machine runs them.
                knobs: {net.ipv6.conf.default.dad_transmits: 10}
                devices:
                  - name: eth0
                    kind: veth
                    mac: 02:00:00:00:00:01
                    addresses: [198.18.0.1/24, 2001:db8:1::1/64 nodad]
                    peer: {namespace: h, name: eth0, mac: 02:00:00:00:00:02, addresses: [198.18.0.2/24, 2001:db8:1::2/64]}
                routes:
                  - 2001:db8:3::/64 via 2001:db8:1::2
                  - unreachable 2001:db8:9::/64
                  - 2001:db8:1::5/128 dev eth0
                  - 2001:db8::/32 dev eth0 metric 5
              h:
                knobs: {net.ipv6.conf.default.dad_transmits: 10}
                routes:
                  - default via fe80::ff:fe00:1 dev eth0
              v4only:
                devices:
                  - {name: eth0, kind: veth, addresses: [198.18.1.1/24], peer: {namespace: v4peer, name: eth0}}
              v4peer: {}
            """;

    @BeforeAll
    static void start() {
        d = LiveDaemon.start(TOPOLOGY, dir);
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    private static List<String> lines(String text) {
        return Arrays.asList(text.split("\n"));
    }

    @Test
    void routeShowIsIpRouteSixsListing() throws Exception {
        assertEquals(List.of(
                "2001:db8:1::5 dev eth0 metric 1024 pref medium",
                "2001:db8:1::/64 dev eth0 proto kernel metric 256 pref medium",
                "2001:db8:3::/64 via 2001:db8:1::2 dev eth0 metric 1024 pref medium",
                "unreachable 2001:db8:9::/64 dev lo metric 1024 pref medium",
                "2001:db8::/32 dev eth0 metric 5 pref medium",
                "fe80::/64 dev eth0 proto kernel metric 256 pref medium"), lines(d.text("r", "route", "-6", "show")));
        assertEquals(List.of(
                "2001:db8:1::/64 dev eth0 proto kernel metric 256 pref medium",
                "fe80::/64 dev eth0 proto kernel metric 256 pref medium",
                "default via fe80::ff:fe00:1 dev eth0 metric 1024 pref medium"), lines(d.text("h", "route", "-6", "show")));
        JsonNode j = d.ok("r", "route", "-6", "show");
        assertEquals("unreachable", j.get(3).path("type").asText());
        assertEquals("2001:db8:1::2", j.get(2).path("gateway").asText());
        // Without -6, the IPv4 table only, as ip route.
        assertFalse(d.text("r", "route", "show").contains("2001:db8"));
    }

    @Test
    void addrShowHasInet6LinesWhereIpAddrShowsThem() throws Exception {
        // nodad: preferred at once; h's address waits for duplicate address detection.
        assertEquals(List.of(
                "1: lo    inet6 ::1/128 scope host",
                "2: eth0    inet6 2001:db8:1::1/64 scope global nodad",
                "2: eth0    inet6 fe80::ff:fe00:1/64 scope link tentative"), lines(d.text("r", "addr", "-6", "show")));
        assertEquals(List.of(
                "1: lo    inet 127.0.0.1/8 brd 127.255.255.255",
                "1: lo    inet6 ::1/128 scope host",
                "2: eth0    inet 198.18.0.2/24 brd 198.18.0.255",
                "2: eth0    inet6 2001:db8:1::2/64 scope global tentative",
                "2: eth0    inet6 fe80::ff:fe00:2/64 scope link tentative"), lines(d.text("h", "addr", "show")));
        // A namespace given no IPv6 shows what it showed before: IPv4 lines only.
        assertEquals(List.of(
                "1: lo    inet 127.0.0.1/8 brd 127.255.255.255",
                "2: eth0    inet 198.18.1.1/24 brd 198.18.1.255"), lines(d.text("v4only", "addr", "show")));
        assertEquals("", d.text("v4only", "addr", "-6", "show"));
        JsonNode j = d.ok("r", "addr", "-6", "show", "dev", "eth0");
        assertEquals("inet6", j.get(0).path("family").asText());
        assertEquals("global", j.get(0).path("scope").asText());
        assertTrue(j.get(0).path("nodad").asBoolean());
        assertTrue(j.get(1).path("tentative").asBoolean());
    }

    @Test
    void addrAddAndDelChangeTheAddressAndItsPrefixRoute() throws Exception {
        NetStack h = d.topology().stack("h");
        d.ok("h", "addr", "-6", "add", "2001:db8:7::2/64", "dev", "eth0", "nodad");
        assertTrue(d.text("h", "addr", "-6", "show", "dev", "eth0").startsWith(
                "2: eth0    inet6 2001:db8:7::2/64 scope global nodad\n2: eth0    inet6 2001:db8:1::2/64 scope global"));
        assertTrue(d.text("h", "route", "-6", "show").contains("2001:db8:7::/64 dev eth0 proto kernel metric 256 pref medium"));
        assertTrue(d.error("h", "addr", "-6", "add", "2001:db8:7::2/64", "dev", "eth0").contains("RTNETLINK: File exists"));
        d.ok("h", "addr", "del", "2001:db8:7::2/64", "dev", "eth0");
        assertFalse(d.text("h", "route", "-6", "show").contains("2001:db8:7::"));
        assertEquals(null, h.ipv6().addrconf().local(Ipv6Addr.parse("2001:db8:7::2").hi(), Ipv6Addr.parse("2001:db8:7::2").lo()));
        assertEquals("2001:db8:7::2/64 is not on h/eth0 (RTNETLINK answers: Cannot assign requested address)",
                d.error("h", "addr", "-6", "del", "2001:db8:7::2/64", "dev", "eth0"));
        assertEquals("addr add -6 198.18.0.9/24: inet6 address is expected rather than \"198.18.0.9/24\"",
                d.error("h", "addr", "-6", "add", "198.18.0.9/24", "dev", "eth0"));
        assertEquals("address '2001:db8::1/129': prefix length is not 0..128",
                d.error("h", "addr", "add", "2001:db8::1/129", "dev", "eth0"));
    }

    @Test
    void theFirstIpv6AddressTurnsIpv6OnInANamespaceThatNeverHadIt() throws Exception {
        NetStack v = d.topology().stack("v4peer");
        assertEquals("1", v.knobs().get("net.ipv6.conf.all.disable_ipv6"));
        d.ok("v4peer", "addr", "-6", "add", "2001:db8:8::2/64", "dev", "eth0", "nodad");
        assertEquals("0", v.knobs().get("net.ipv6.conf.all.disable_ipv6"));
        List<String> l = lines(d.text("v4peer", "addr", "-6", "show"));
        assertEquals(3, l.size(), l.toString());
        assertEquals("1: lo    inet6 ::1/128 scope host", l.get(0));
        assertEquals("2: eth0    inet6 2001:db8:8::2/64 scope global nodad", l.get(1));
        // eth0 was up already: it gets its link-local address when IPv6 goes on, as in Linux.
        assertTrue(l.get(2).startsWith("2: eth0    inet6 fe80::") && l.get(2).endsWith("/64 scope link tentative"), l.get(2));
    }

    @Test
    void routeAddReplaceChangeDelAndGet() throws Exception {
        // The family comes from the route itself, as ip route add takes an IPv6 prefix without -6.
        assertEquals("added 2001:db8:4::/64 via 2001:db8:1::2 dev eth0 metric 1024 pref medium in r",
                d.text("r", "route", "add", "2001:db8:4::/64", "via", "2001:db8:1::2"));
        assertTrue(d.error("r", "route", "-6", "add", "2001:db8:4::/64", "dev", "eth0").contains("RTNETLINK: File exists"));
        assertEquals("replaced 2001:db8:4::/64 via 2001:db8:1::2 dev eth0 metric 1024 pref medium by 2001:db8:4::/64 dev eth0"
                + " metric 1024 pref medium in r", d.text("r", "route", "-6", "replace", "2001:db8:4::/64", "dev", "eth0"));
        JsonNode g = d.ok("r", "route", "-6", "get", "2001:db8:4::9");
        assertEquals("eth0", g.path("dev").asText());
        assertEquals("2001:db8:1::1", g.path("prefsrc").asText());
        assertTrue(d.text("r", "route", "-6", "get", "2001:db8:4::9").startsWith(
                "2001:db8:4::9 from :: dev eth0 src 2001:db8:1::1 metric 1024 pref medium"));
        assertEquals("local 2001:db8:1::1 from :: dev lo table local proto kernel src 2001:db8:1::1 metric 0 pref medium",
                d.text("r", "route", "-6", "get", "2001:db8:1::1"));
        assertEquals("local", d.ok("r", "route", "-6", "get", "2001:db8:1::1").path("type").asText());
        assertTrue(d.text("r", "route", "-6", "get", "2001:db8:1::9").startsWith("2001:db8:1::9 from :: dev eth0 proto kernel"
                + " src 2001:db8:1::1 metric 256 pref medium\n"));
        assertTrue(d.error("r", "route", "-6", "del", "2001:db8:4::/64", "via", "2001:db8:1::9").contains(
                "the routes for that prefix are '2001:db8:4::/64 dev eth0 metric 1024 pref medium'"));
        d.ok("r", "route", "-6", "del", "2001:db8:4::/64", "dev", "eth0");
        assertTrue(d.error("r", "route", "-6", "del", "2001:db8:4::/64").contains("No such process"));
        assertTrue(d.error("r", "route", "-6", "get", "2001:db8:9::1").contains("Network is unreachable (an unreachable"
                + " route: unreachable 2001:db8:9::/64 dev lo metric 1024 pref medium)"));
        assertEquals("route '2001:db8:5::/64 via fe80::2': gateway fe80::2 is link-local, so the route needs 'dev DEV' to"
                + " say which link (Egress device not specified)", d.error("r", "route", "-6", "add", "2001:db8:5::/64", "via",
                "fe80::2"));
        assertTrue(d.error("r", "route", "-6", "add", "198.18.5.0/24", "dev", "eth0").contains(
                "inet6 prefix is expected rather than \"198.18.5.0/24\""));
    }

    @Test
    void theCommandLinesSixGoesToTheVerb() {
        java.io.StringWriter out = new java.io.StringWriter();
        int code = dev.usnet.tools.Usnet.execute(new String[] {"ctl", "--socket", d.socket.toString(), "-n", "h", "-6", "route",
                "show"}, new java.io.PrintWriter(out, true), new java.io.PrintWriter(new java.io.StringWriter(), true));
        assertEquals(0, code);
        assertTrue(out.toString().contains("default via fe80::ff:fe00:1 dev eth0 metric 1024 pref medium"), out.toString());
        assertFalse(out.toString().contains("198.18."), out.toString());
    }

    @Test
    void neighSixAddsShowsAndDeletesNdEntries() throws Exception {
        d.ok("r", "neigh", "add", "2001:db8:1::9", "lladdr", "02:00:00:00:00:09", "dev", "eth0", "nud", "permanent");
        assertTrue(lines(d.text("r", "neigh", "-6", "show")).contains("2001:db8:1::9 dev eth0 lladdr 02:00:00:00:00:09 PERMANENT"),
                d.text("r", "neigh", "-6", "show"));
        assertFalse(d.text("r", "neigh", "show").contains("2001:db8:1::9"), "the ARP table is another table");
        d.ok("r", "neigh", "del", "2001:db8:1::9", "dev", "eth0");
        assertFalse(d.text("r", "neigh", "-6", "show").contains("2001:db8:1::9"));
        assertTrue(d.error("r", "neigh", "add", "ff02::1", "lladdr", "02:00:00:00:00:09", "dev", "eth0")
                .contains("a neighbour entry is for one unicast address"));
    }
}
