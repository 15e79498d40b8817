package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.MacAddr;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every show verb of a running daemon, its output checked against the namespaces' own state. */
class CtlShowVerbsTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;

    @BeforeAll
    static void start() throws Exception {
        d = LiveDaemon.start(LiveDaemon.topology("""
                - {kind: ping, to: 198.18.0.12, interval: 0.01}
                - {kind: ping, to: 198.18.1.13, interval: 0.01}
                """, ""), dir);
        assertTrue(LiveDaemon.eventually(5000, () -> {
            try {
                return d.app("ctr1.ping-0", "ops") >= 3 && d.app("ctr1.ping-1", "ops") >= 3;
            } catch (Exception e) {
                return false;
            }
        }), "pings answered");
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    @Test
    void theSocketIsTheOwnersAlone() throws Exception {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d.socket)));
        JsonNode v = d.ok(null, "version");
        assertEquals(ControlPlane.PROTOCOL, v.path("protocol").asInt());
        assertEquals(4, v.path("namespaces").asInt());
        assertEquals("real", v.path("clock").asText());
        assertEquals(ProcessHandle.current().pid(), v.path("pid").asLong());
    }

    @Test
    void nsListNamesEveryNamespaceWithItsDevices() throws Exception {
        JsonNode l = d.ok(null, "ns", "list");
        assertEquals(List.of("host", "ctr1", "ctr2", "ctr3"), d.names(l, "name"));
        assertEquals("[\"br0\",\"hb1\",\"hb2\",\"hr3\"]", l.get(0).get("devices").toString());
    }

    @Test
    void linkShowIsEachDeviceAsItIs() throws Exception {
        NetStack host = d.topology().stack("host");
        JsonNode l = d.ok("host", "link", "show");
        List<Device> devs = host.devices();
        assertEquals(devs.size(), l.size());
        for (int i = 0; i < devs.size(); i++) {
            Device dev = devs.get(i);
            JsonNode j = l.get(i);
            assertEquals(dev.name(), j.path("ifname").asText());
            assertEquals(dev.ifindex(), j.path("ifindex").asInt());
            assertEquals(dev.mtu(), j.path("mtu").asInt());
            assertEquals(MacAddr.format(dev.mac()), j.path("address").asText());
            assertEquals(dev.master() == null ? "null" : dev.master().name(), j.path("master").asText());
            long rx = j.path("stats64").path("rx").path("packets").asLong();
            assertTrue(rx <= dev.stats().rxPackets, dev.name() + " rx " + rx + " > " + dev.stats().rxPackets);
        }
        JsonNode hb1 = d.ok("host", "link", "show", "hb1").get(0);
        assertEquals("br0", hb1.path("master").asText());
        assertEquals("ctr1/eth0", hb1.path("peer").asText());
        assertEquals("UP", hb1.path("operstate").asText());
        assertTrue(hb1.path("flags").toString().contains("LOWER_UP"));
        assertTrue(hb1.path("stats64").path("rx").path("packets").asLong() > 0);
        assertTrue(d.text("host", "link", "show", "hb1").startsWith("3: hb1@ctr1/eth0: <BROADCAST,MULTICAST,PROMISC,UP,LOWER_UP> mtu 1500 master br0 state UP"));
    }

    @Test
    void addrAndRouteShowTheTables() throws Exception {
        JsonNode a = d.ok("host", "addr", "show");
        Set<String> got = new HashSet<>();
        a.forEach(x -> got.add(x.path("dev").asText() + " " + x.path("local").asText() + "/" + x.path("prefixlen").asInt()));
        assertEquals(Set.of("lo 127.0.0.1/8", "br0 198.18.0.1/24", "hr3 198.18.1.1/24"), got);
        List<String> routes = d.names(d.ok("ctr1", "route", "show"), "text");
        assertEquals(d.topology().stack("ctr1").routes().list().stream().map(Object::toString).toList(), routes);
        assertTrue(routes.contains("default via 198.18.0.1 dev eth0"), routes.toString());
        JsonNode g = d.ok("ctr1", "route", "get", "198.18.1.13");
        assertEquals("198.18.0.1", g.path("gateway").asText());
        assertEquals("eth0", g.path("dev").asText());
        assertEquals("198.18.0.11", g.path("prefsrc").asText());
        assertEquals("local", d.ok("host", "route", "get", "198.18.0.1").path("type").asText());
    }

    @Test
    void neighAndFdbShowWhatTrafficTaught() throws Exception {
        String ctr1Mac = MacAddr.format(d.topology().device("ctr1", "eth0").mac());
        String ctr2Mac = MacAddr.format(d.topology().device("ctr2", "eth0").mac());
        JsonNode n = d.ok("host", "neigh", "show");
        boolean found = false;
        for (JsonNode x : n) {
            if (x.path("dst").asText().equals("198.18.0.11")) {
                found = true;
                assertEquals("br0", x.path("dev").asText());
                assertEquals(ctr1Mac, x.path("lladdr").asText());
            }
        }
        assertTrue(found, n.toString());
        assertEquals(d.topology().stack("host").neigh().list().size(), n.size());
        JsonNode f = d.ok("host", "bridge", "fdb", "show");
        Set<String> entries = new HashSet<>();
        f.forEach(x -> entries.add(x.path("mac").asText() + " " + x.path("ifname").asText() + " " + x.path("state").asText()));
        assertTrue(entries.contains(ctr1Mac + " hb1 learned"), entries.toString());
        assertTrue(entries.contains(ctr2Mac + " hb2 learned"), entries.toString());
        Bridge br = (Bridge) d.topology().device("host", "br0");
        assertTrue(entries.contains(MacAddr.format(br.mac()) + " br0 permanent"), entries.toString());
        JsonNode ports = d.ok("host", "bridge", "link", "show");
        assertEquals(List.of("hb1", "hb2"), d.names(ports, "ifname"));
        assertEquals("forwarding", ports.get(0).path("state").asText());
        assertTrue(ports.get(0).path("learning").asBoolean());
    }

    @Test
    void sysctlShowsEveryKnobAndWhenItApplies() throws Exception {
        assertEquals("1", d.ok("host", "sysctl", "net.ipv4.ip_forward").get(0).path("value").asText());
        assertEquals("0", d.ok("ctr1", "sysctl", "net.ipv4.ip_forward").get(0).path("value").asText());
        JsonNode all = d.ok("host", "sysctl", "-a");
        Set<String> keys = new HashSet<>();
        all.forEach(x -> keys.add(x.path("key").asText()));
        for (String k : Knobs.known()) {
            String key = k.replace("<dev>", "hb1");
            assertTrue(keys.contains(key) || k.startsWith("usnet.netem.<dev>."), "sysctl -a lacks " + key);
        }
        assertTrue(keys.contains("net.ipv4.conf.all.forwarding"));
        for (JsonNode x : all) {
            String k = x.path("key").asText();
            assertEquals(d.topology().stack("host").knobs().get(k), x.path("value").asText(), k);
        }
        assertEquals("build", d.ok("host", "sysctl", "usnet.hz").get(0).path("applies").asText());
        assertEquals("new-sockets", d.ok("host", "sysctl", "net.ipv4.tcp_congestion_control").get(0).path("applies").asText());
        assertEquals("live", d.ok("host", "sysctl", "net.ipv4.icmp_ratelimit").get(0).path("applies").asText());
    }

    @Test
    void statsAndAppsShowTheCounters() throws Exception {
        JsonNode s = d.ok(null, "stats");
        assertEquals(4, s.size());
        JsonNode host = s.get(0);
        assertEquals("host", host.path("ns").asText());
        assertTrue(host.path("mib").path("IpForwDatagrams").asLong() > 0, host.toString());
        assertEquals(2, host.path("fdb").get(0).path("learned").asInt(), host.toString());
        Set<String> paths = new HashSet<>(d.names(host.path("paths"), "path"));
        assertTrue(paths.contains("hb1->hb2") && paths.contains("br0->hr3"), paths.toString());
        assertTrue(host.path("paths").get(0).path("p50_us").isNumber());
        JsonNode apps = d.ok(null, "apps");
        assertEquals(List.of("ctr1.ping-0", "ctr1.ping-1"), d.names(apps, "name"));
        assertEquals("running", apps.get(0).path("status").asText());
        assertEquals("ok", apps.get(0).path("outcome").asText());
        assertTrue(apps.get(0).path("ops").asLong() > 0);
        assertFalse(d.ok("host", "netem", "show").elements().hasNext());
    }

    @Test
    void histDumpWritesTheHistogramsNow() throws Exception {
        JsonNode files = d.ok(null, "hist", "dump").get("files");
        assertTrue(files.size() >= 3, files.toString());
        for (JsonNode f : files) {
            assertTrue(Files.size(Path.of(f.asText())) > 0, f.asText());
        }
    }

    @Test
    void captureStartAndStopWriteAPcapOfTheDevice() throws Exception {
        JsonNode c = d.ok(null, "capture", "start", "host/hb2", "cap/hb2.pcap", "out");
        Path f = Path.of(c.path("file").asText());
        assertEquals(dir.resolve("cap/hb2.pcap").toAbsolutePath().normalize(), f.toAbsolutePath().normalize());
        assertTrue(LiveDaemon.eventually(3000, () -> {
            try {
                return d.ok(null, "capture", "list").get(0).path("frames").asLong() >= 3;
            } catch (Exception e) {
                return false;
            }
        }));
        JsonNode stopped = d.ok(null, "capture", "stop", "cap/hb2.pcap");
        long frames = stopped.get(0).path("frames").asLong();
        assertTrue(frames >= 3);
        long read = 0;
        try (PcapReader r = new PcapReader(f)) {
            while (r.next() != null) {
                read++;
            }
        }
        assertEquals(frames, read);
        assertEquals(0, d.ok(null, "capture", "list").size());
    }
}
