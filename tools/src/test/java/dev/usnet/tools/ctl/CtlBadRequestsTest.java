package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.core.stack.NetStack;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Requests the daemon must refuse: each gets an error naming what is wrong, and the daemon and its state stay as they were. */
class CtlBadRequestsTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;

    @BeforeAll
    static void start() throws Exception {
        d = LiveDaemon.start(LiveDaemon.topology("- {kind: ping, to: 198.18.1.13, interval: 0.01}\n", ""), dir);
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    /** Host's state as text: links, addresses, routes, knobs, FDB; equal before and after a refused request. */
    static String state() throws Exception {
        return d.ok("host", "link", "show").toString().replaceAll("\"stats64\":\\{[^}]*\\{[^}]*}[^}]*\\{[^}]*}}", "")
                + d.ok("host", "addr", "show") + d.ok("host", "route", "show") + d.ok("host", "sysctl", "-a")
                + d.ok(null, "ns", "list") + d.ok("host", "bridge", "link", "show");
    }

    @Test
    void eachBadRequestNamesWhatIsWrongAndChangesNothing() throws Exception {
        String before = state();
        List<String[]> cases = List.of(
                new String[] {"nope", "no namespace 'nope' (namespaces: host, ctr1, ctr2, ctr3)", "link", "show"},
                new String[] {null, "which namespace? give -n NS", "link", "show"},
                new String[] {"host", "no device 'eth9' in namespace host (devices: lo, br0, hb1, hb2, hr3)", "link", "set", "eth9", "down"},
                new String[] {"host", "unknown word 'sideways'", "link", "set", "hb1", "mtu", "9000", "sideways"},
                new String[] {"host", "mtu 10 is out of range 68..65535", "link", "set", "hb1", "mtu", "10"},
                new String[] {"host", "mtu 'big' is not an integer", "link", "set", "hb1", "mtu", "big"},
                new String[] {"host", "master hb2 is a veth, not a bridge", "link", "set", "hb1", "master", "hb2"},
                new String[] {"host", "not a device name: \"much-too-long-name\"", "link", "add", "much-too-long-name", "type", "bridge"},
                new String[] {"host", "device hb1 already exists in namespace host", "link", "add", "hb1", "type", "bridge"},
                new String[] {"host", "lo cannot be deleted", "link", "del", "lo"},
                new String[] {"host", "address '198.18.5.0/33': prefix length is not 0..32", "addr", "add", "198.18.5.0/33", "dev", "br0"},
                new String[] {"host", "198.18.0.1 already on br0 (RTNETLINK: File exists)", "addr", "add", "198.18.0.1/24", "dev", "br0"},
                new String[] {"host", "route 'foo': ", "route", "add", "foo"},
                new String[] {"host", "unknown keyword 'vai'", "route", "add", "198.18.7.0/24", "vai", "198.18.1.13"},
                new String[] {"host", "gateway 198.18.9.9 is not on a connected network", "route", "add", "198.18.7.0/24", "via", "198.18.9.9"},
                new String[] {"host", "route 198.18.1.0/24 exists (RTNETLINK: File exists)", "route", "add", "198.18.1.0/24", "dev", "br0"},
                new String[] {"host", "no such route in host (RTNETLINK answers: No such process)", "route", "del", "198.18.8.0/24"},
                new String[] {"host", "the route for that prefix is '198.18.1.0/24 dev hr3", "route", "del", "198.18.1.0/24", "dev", "br0"},
                new String[] {"host", "net.ipv4.ip_forward: 2 is out of range 0..1", "sysctl", "-w", "net.ipv4.ip_forward=2"},
                new String[] {"host", "unknown knob 'net.ipv4.ip_fowrard'", "sysctl", "-w", "net.ipv4.ip_fowrard=1"},
                new String[] {"host", "net.ipv4.conf.nodev.proxy_arp: no device 'nodev' in namespace host", "sysctl", "-w", "net.ipv4.conf.nodev.proxy_arp=1"},
                new String[] {"host", "net.ipv4.ip_forward: 7 is out of range", "sysctl", "-w", "net.ipv4.icmp_ratelimit=5", "net.ipv4.ip_forward=7"},
                new String[] {"host", "usnet.hz is fixed when the namespace is built", "sysctl", "-w", "usnet.hz=100"},
                new String[] {"host", "netem set hr3: ", "netem", "set", "hr3", "loss", "150%"},
                new String[] {"host", "has no link emulation", "netem", "del", "hr3"},
                new String[] {"host", "'02:00:00:00:00' is not a MAC address", "neigh", "add", "198.18.1.5", "lladdr", "02:00:00:00:00", "dev", "hr3"},
                new String[] {"host", "hr3 is not a bridge port in host", "bridge", "fdb", "add", "02:00:00:00:00:05", "dev", "hr3"},
                new String[] {null, "invalid namespace name 'a/b'", "ns", "add", "a/b"},
                new String[] {null, "namespace host already exists", "ns", "add", "host"},
                new String[] {null, "namespace ctr1 runs apps", "ns", "del", "ctr1"},
                new String[] {null, "no namespace 'ctr9'", "capture", "start", "ctr9/eth0", "x.pcap"},
                new String[] {null, "unknown verb 'lnk'", "lnk", "show"},
                new String[] {"host", "route get 198.18.200.1 in host: RTNETLINK answers: Network is unreachable", "route", "get", "198.18.200.1"});
        for (String[] c : cases) {
            String[] args = java.util.Arrays.copyOfRange(c, 2, c.length);
            String err = d.error(c[0], args);
            assertTrue(err.contains(c[1]), String.join(" ", args) + ": expected an error containing \"" + c[1] + "\", got \"" + err + "\"");
        }
        assertEquals(before, state(), "a refused request changed something");
        NetStack host = d.topology().stack("host");
        assertEquals("1000", host.knobs().get("net.ipv4.icmp_ratelimit"), "a bad pair in sysctl -w left the good one applied");
        assertEquals(1500, host.device("hb1").mtu());
        assertNull(host.device("much-too-long-name"));
        long ops = d.app("ctr1.ping-0", "ops");
        assertTrue(LiveDaemon.eventually(3000, () -> {
            try {
                return d.app("ctr1.ping-0", "ops") > ops + 2;
            } catch (Exception e) {
                return false;
            }
        }), "the daemon stopped forwarding after the refused requests");
    }

    @Test
    void malformedLinesAreAnsweredAndTheConnectionGoesOn() throws Exception {
        try (CtlClient c = CtlClient.connect(d.socket)) {
            c.sendRaw("this is not json");
            assertTrue(c.read().path("error").asText().startsWith("not a JSON request line"));
            c.sendRaw("{\"args\": [\"version\"]}");
            assertTrue(c.read().path("error").asText().contains("missing \"usnet_ctl\": 1"));
            c.sendRaw("{\"usnet_ctl\": 2, \"id\": 5, \"args\": [\"version\"]}");
            JsonNode r = c.read();
            assertEquals(5, r.path("id").asInt());
            assertEquals("protocol version 2 is not served: this daemon speaks 1", r.path("error").asText());
            c.sendRaw("{\"usnet_ctl\": 1, \"args\": []}");
            assertTrue(c.read().path("error").asText().startsWith("missing \"args\""));
            c.sendRaw("{\"usnet_ctl\": 1, \"args\": [\"link\", 7]}");
            assertTrue(c.read().path("error").asText().contains("must hold strings"));
            assertTrue(c.request(null, List.of("version")).path("ok").asBoolean(), "the connection still serves");
        }
        try (CtlClient c = CtlClient.connect(d.socket)) {
            c.sendRaw("{\"usnet_ctl\": 1, \"args\": [\"" + "x".repeat(CtlServer.MAX_REQUEST_BYTES + 10) + "\"]}");
            JsonNode r = c.read();
            assertFalse(r.path("ok").asBoolean());
            assertTrue(r.path("error").asText().contains("longer than"), r.toString());
            assertNull(c.read(), "the connection of an over-long request is closed");
        }
        assertTrue(d.ok(null, "version").path("protocol").isInt());
    }
}
