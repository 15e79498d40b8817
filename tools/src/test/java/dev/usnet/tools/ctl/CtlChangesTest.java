package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each change through the control socket, checked by what it does to traffic. */
class CtlChangesTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;

    @BeforeAll
    static void start() throws Exception {
        d = LiveDaemon.start(LiveDaemon.topology("""
                - {kind: ping, to: 198.18.0.12, interval: 0.01}
                - {kind: ping, to: 198.18.1.13, interval: 0.01}
                - {kind: stream, server: ctr3, port: 5001, write_size: 8192, interval: 5ms}
                """, ""), dir);
        assertTrue(flowing("ctr1.ping-0") && flowing("ctr1.ping-1"), "pings answered");
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    /** The app's replies (or bytes, for the stream) keep growing over the next half second. */
    static boolean flowing(String app) throws Exception {
        String field = app.contains("stream") ? "bytes" : "ops";
        long before = d.app(app, field);
        return LiveDaemon.eventually(3000, () -> {
            try {
                return d.app(app, field) > before + 2;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** The app's counter stays where it is for {@code ms} (after what was in flight settled). */
    static boolean stalled(String app, long ms) throws Exception {
        String field = app.contains("stream") ? "bytes" : "ops";
        Thread.sleep(300);
        long before = d.app(app, field);
        Thread.sleep(ms);
        return d.app(app, field) == before;
    }

    @Test
    void aDeletedRouteMakesTheRouterAnswerNetUnreachableAndAddingItBackHeals() throws Exception {
        d.ok(null, "capture", "start", "ctr1/eth0", "unreach.pcap", "in");
        d.ok("host", "route", "del", "198.18.1.0/24");
        assertNull(d.topology().stack("host").routes().get(Ipv4Addr.parse("198.18.1.0"), 24));
        assertTrue(stalled("ctr1.ping-1", 400), "pings to ctr3 still answered without the route");
        assertTrue(flowing("ctr1.ping-0"), "the bridged pings are not the route's business");
        Path f = Path.of(d.ok(null, "capture", "stop", "unreach.pcap").get(0).path("file").asText());
        long unreachable = 0;
        for (PcapRecord r : PcapReader.readAll(f)) {
            byte[] b = r.data();
            if (b.length > 40 && (b[12] & 0xff) == 0x08 && b[13] == 0 && b[23] == 1) {
                int ihl = (b[14] & 0xf) * 4;
                int src = ((b[26] & 0xff) << 24) | ((b[27] & 0xff) << 16) | ((b[28] & 0xff) << 8) | (b[29] & 0xff);
                int type = b[14 + ihl] & 0xff;
                int code = b[15 + ihl] & 0xff;
                if (type == 3 && code == 0 && src == Ipv4Addr.parse("198.18.0.1")) {
                    unreachable++;
                }
            }
        }
        assertTrue(unreachable > 0, "no ICMP destination (net) unreachable from 198.18.0.1 in " + f);
        d.ok("host", "route", "add", "198.18.1.0/24", "dev", "hr3", "src", "198.18.1.1");
        assertTrue(flowing("ctr1.ping-1"), "pings to ctr3 came back with the route");
    }

    @Test
    void aBridgePortTakenDownIsNoLongerForwardedToAndComesBack() throws Exception {
        var hb2 = d.topology().device("host", "hb2");
        d.ok("host", "link", "set", "hb2", "down");
        assertEquals("DOWN", d.ok("host", "link", "show", "hb2").get(0).path("operstate").asText());
        assertEquals("LOWERLAYERDOWN", d.ok("ctr2", "link", "show", "eth0").get(0).path("operstate").asText());
        Thread.sleep(200);
        long tx = hb2.stats().txPackets;
        assertTrue(stalled("ctr1.ping-0", 400), "pings to ctr2 answered through a port that is down");
        assertEquals(tx, hb2.stats().txPackets, "the bridge still sent out of hb2");
        assertTrue(flowing("ctr1.ping-1"));
        d.ok("host", "link", "set", "hb2", "up");
        assertTrue(flowing("ctr1.ping-0"), "pings to ctr2 came back");
        assertTrue(hb2.stats().txPackets > tx);
    }

    @Test
    void fullLossStallsTheStreamAndItRecoversWhenTheLossGoes() throws Exception {
        assertTrue(flowing("ctr1.stream-0"));
        JsonNode set = d.ok("host", "netem", "set", "hr3", "loss", "100%");
        try {
            assertEquals("loss 100%", set.path("spec").asText());
            assertTrue(stalled("ctr1.stream-0", 500), "the stream moved through 100 % loss");
            assertTrue(d.ok("host", "netem", "show", "hr3").get(0).path("stats").path("lost").asLong() > 0);
        } finally {
            d.ok("host", "netem", "del", "hr3");
        }
        assertTrue(LiveDaemon.eventually(8000, () -> {
            try {
                return flowing("ctr1.stream-0");
            } catch (Exception e) {
                return false;
            }
        }), "the stream did not recover");
    }

    @Test
    void sysctlForwardingOffStopsTheRouterLive() throws Exception {
        d.ok("host", "sysctl", "-w", "net.ipv4.ip_forward=0");
        assertEquals(0, d.topology().stack("host").knobs().get(Ipv4Sysctl.IP_FORWARD));
        assertTrue(stalled("ctr1.ping-1", 400), "forwarded with ip_forward=0");
        JsonNode back = d.ok("host", "sysctl", "-w", "net.ipv4.ip_forward=1");
        assertEquals("1", back.get(0).path("value").asText());
        assertTrue(flowing("ctr1.ping-1"));
    }

    @Test
    void neighbourAndFdbEntriesAreAddedAndRemoved() throws Exception {
        d.ok("host", "neigh", "add", "198.18.1.99", "lladdr", "02:00:00:00:00:99", "dev", "hr3");
        JsonNode n = d.ok("host", "neigh", "show", "dev", "hr3");
        assertTrue(n.toString().contains("\"dst\":\"198.18.1.99\",\"dev\":\"hr3\",\"lladdr\":\"02:00:00:00:00:99\",\"state\":\"PERMANENT\""), n.toString());
        int flushed = d.ok("host", "neigh", "flush", "dev", "hr3").path("flushed").asInt();
        assertEquals(1, flushed, "the learned ctr3 entry goes, the permanent one stays");
        assertTrue(d.ok("host", "neigh", "show", "dev", "hr3").toString().contains("198.18.1.99"));
        d.ok("host", "neigh", "del", "198.18.1.99", "dev", "hr3");
        assertFalse(d.ok("host", "neigh", "show").toString().contains("198.18.1.99"));
        assertTrue(flowing("ctr1.ping-1"), "ctr3 is resolved again after the flush");

        d.ok("host", "bridge", "fdb", "add", "02:00:00:00:00:77", "dev", "hb2", "master", "static");
        assertTrue(d.ok("host", "bridge", "fdb", "show", "dev", "hb2").toString()
                .contains("\"mac\":\"02:00:00:00:00:77\",\"ifname\":\"hb2\",\"master\":\"br0\",\"state\":\"static\""));
        d.ok("host", "bridge", "fdb", "del", "02:00:00:00:00:77", "dev", "hb2");
        assertFalse(d.ok("host", "bridge", "fdb", "show").toString().contains("02:00:00:00:00:77"));
    }

    @Test
    void addressesAndMtuChangeAsAsked() throws Exception {
        d.ok("ctr2", "addr", "add", "198.18.0.22/24", "dev", "eth0");
        assertEquals("local", d.ok("ctr2", "route", "get", "198.18.0.22").path("type").asText());
        d.ok("ctr2", "addr", "del", "198.18.0.22/24", "dev", "eth0");
        assertFalse(d.ok("ctr2", "addr", "show").toString().contains("198.18.0.22"));
        d.ok("ctr2", "link", "set", "eth0", "mtu", "1400");
        assertEquals(1400, d.topology().device("ctr2", "eth0").mtu());
        d.ok("ctr2", "link", "set", "eth0", "mtu", "1500");
    }

    @Test
    void aNamespaceAddedLiveJoinsTheBridgeAndLeavesAgain() throws Exception {
        d.ok(null, "ns", "add", "ctr4");
        d.ok("ctr4", "link", "add", "eth0", "type", "veth", "peer", "host/hb4");
        d.ok("host", "link", "set", "hb4", "master", "br0", "up");
        d.ok("ctr4", "link", "set", "eth0", "up");
        d.ok("ctr4", "addr", "add", "198.18.0.14/24", "dev", "eth0");
        NetStack ctr4 = d.topology().stack("ctr4");
        String mac = MacAddr.format(d.topology().device("ctr4", "eth0").mac());
        // ctr4 sends to ctr2: the bridge learns it behind hb4, ctr2 resolves it back.
        UdpSocket s = d.topology().onLoop("ctr4", () -> ctr4.udp().bind(0, 0));
        ByteBuf data = Unpooled.buffer(64).writeZero(64);
        try {
            assertTrue(LiveDaemon.eventually(3000, () -> {
                d.topology().onLoop("ctr4", () -> s.sendTo(Ipv4Addr.parse("198.18.0.12"), 9, data, 0, 64));
                try {
                    return d.ok("host", "bridge", "fdb", "show", "dev", "hb4").toString().contains(mac);
                } catch (Exception e) {
                    return false;
                }
            }), "br0 never learned ctr4 behind hb4");
        } finally {
            data.release();
            d.topology().onLoop("ctr4", () -> {
                s.close();
                return null;
            });
        }
        d.ok("host", "link", "set", "hb4", "nomaster");
        assertFalse(d.ok("host", "bridge", "fdb", "show").toString().contains(mac), "nomaster forgets what hb4 learned");
        d.ok(null, "ns", "del", "ctr4");
        assertEquals(List.of("host", "ctr1", "ctr2", "ctr3"), d.names(d.ok(null, "ns", "list"), "name"));
        assertNull(d.topology().stack("host").device("hb4"), "the veth peer went with the namespace");
        assertTrue(flowing("ctr1.ping-0"));
    }

    @Test
    void aDeletedLinkTakesItsPeerAlong() throws Exception {
        d.ok("ctr2", "link", "add", "tmp0", "type", "veth", "peer", "ctr3/tmp1");
        assertEquals("tmp1", d.ok("ctr3", "link", "show", "tmp1").get(0).path("ifname").asText());
        assertEquals("ctr3/tmp1", d.ok("ctr2", "link", "show", "tmp0").get(0).path("peer").asText());
        d.ok("ctr2", "link", "del", "tmp0");
        assertNull(d.topology().stack("ctr3").device("tmp1"));
        d.ok("host", "link", "add", "br9", "type", "bridge");
        assertEquals("bridge", d.ok("host", "link", "show", "br9").get(0).path("kind").asText());
        d.ok("host", "link", "del", "br9");
    }
}
