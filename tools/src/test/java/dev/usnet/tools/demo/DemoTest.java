package dev.usnet.tools.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * usnet demo: the bundled examples/demo.yaml built by the topology builder, in virtual time so that every number
 * is the same on every machine.
 */
class DemoTest {
    /** Half a second measured after 0.2 s of warm-up: every count below is for 0.5 s. */
    private static Demo.Report run(Path out, DemoSpec.Overrides o) throws Exception {
        Demo.Options opts = new Demo.Options(out, 0.5, 0.2, Demo.Clock.VIRTUAL, null, o);
        return Demo.run(Demo.prepare(opts));
    }

    /** The demo as it comes (a run takes a while with the leak detector at paranoid: shared by the tests). */
    private static Demo.Report plain;
    private static Path plainDir;

    @BeforeAll
    static void runThePlainDemo(@TempDir Path tmp) throws Exception {
        plainDir = tmp;
        plain = run(tmp, DemoSpec.Overrides.NONE);
    }

    private static Demo.PathReport path(Demo.Report r, String name) {
        return r.paths().stream().filter(p -> p.path().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no path " + name + " in " + r.paths()));
    }

    /**
     * The demo's point: the router edits every packet it forwards (TTL, both MACs) and the senders keep clones
     * of what they sent, so the routed path copies about once per packet; the bridge forwards frames unmodified
     * and never copies.
     */
    @Test
    void theRoutedPathCopiesOncePerSharedPacketAndTheBridgeNever() {
        Demo.Report r = plain;
        Demo.PathReport bridged = path(r, "hb1->hb2");
        Demo.PathReport routed = path(r, "hr1->hr2");
        assertEquals("bridge br0", bridged.via());
        assertEquals("routing, proxy ARP", routed.via());
        // 1000 datagrams and 50 chunks of 16 KiB (566 segments) in 0.5 s.
        assertTrue(bridged.packets() > 1500, "bridged " + bridged);
        assertEquals(0, bridged.cowCopies(), "the bridge never copies");
        assertEquals(0, path(r, "hb2->hb1").cowCopies());
        // Every UDP datagram and TCP segment is shared with the sender's clone; only the pings to ctr2 (one every
        // 10 ms, not kept by their sender) are not.
        long pingsToCtr2 = 50;
        assertEquals(routed.packets() - pingsToCtr2, routed.cowCopies(), "routed " + routed);
        assertTrue(routed.cowCopies() >= 0.9 * routed.packets(), "about one copy per packet: " + routed);
        // The copy is the head the router writes (IP header and MACs), not the payload.
        assertTrue(routed.cowBytes() < routed.cowCopies() * 64L, "head copies: " + routed);
        // Both paths carry the same traffic.
        assertEquals(bridged.packets(), routed.packets());
        assertEquals(bridged.bytes(), routed.bytes());
    }

    @Test
    void everyAppMovesWhatItShouldWithoutDropsAndTheFilesAreWritten() throws Exception {
        Demo.Report r = plain;
        Path tmp = plainDir;
        assertEquals(List.of("ctr1->host via bridge", "ctr1->host via routing", "ctr1->ctr2 via bridge",
                "ctr1->ctr2 via routing"), r.pings().stream().map(Demo.PingReport::name).toList());
        for (Demo.PingReport p : r.pings()) {
            assertEquals(50, p.sent(), p.name());
            assertEquals(p.sent(), p.received(), p.name());
        }
        assertEquals(List.of("UDP ctr1->ctr2 via bridge", "UDP ctr1->ctr2 via routing"),
                r.udp().stream().map(Demo.UdpReport::name).toList());
        for (Demo.UdpReport u : r.udp()) {
            assertEquals(1000, u.sent(), u.name() + ": the file's 2000/s for 0.5 s");
            assertEquals(u.sent(), u.received(), u.name());
            assertEquals(0, u.skipped(), "virtual time is never late");
            assertEquals(1000, u.payload());
        }
        assertEquals(List.of("TCP ctr1->ctr2 via bridge", "TCP ctr1->ctr2 via routing"),
                r.tcp().stream().map(Demo.TcpReport::name).toList());
        for (Demo.TcpReport t : r.tcp()) {
            // 16384 bytes every 10 ms: 50 chunks in the half second measured.
            assertEquals(50 * 16384, t.bytes(), t.name());
            assertTrue(t.connectNanos() >= 0, t.name());
            assertTrue(t.ss().startsWith("ESTAB") && t.ss().contains("cubic"), t.ss());
        }
        assertEquals(List.of("drops: none"), r.drops());
        for (String f : List.of("hb1.pcap", "hb2.pcap", "hr1.pcap", "hr2.pcap", "fwd-hr1-to-hr2.hgrm",
                "ping-ctr1-ctr2-via-routing.hgrm")) {
            assertTrue(Files.size(tmp.resolve(f)) > 0, f);
        }
    }

    /**
     * The options set the file's values: --rate and --size the senders', --seed the file's, --tcp-chunk 0 removes
     * the streams, --keep-clones 0 ends the sharing and so the copies.
     */
    @Test
    void theOptionsChangeTheFilesValues(@TempDir Path tmp) throws Exception {
        Demo.Report r = run(tmp, new DemoSpec.Overrides(500, 200, 0, 0, 3L, Map.of()));
        assertEquals(3, r.prepared().spec().seed());
        assertTrue(r.tcp().isEmpty());
        for (Demo.UdpReport u : r.udp()) {
            assertEquals(250, u.sent());
            assertEquals(200, u.payload());
        }
        // Nothing is shared any more: the router writes into the only reference and copies nothing.
        assertEquals(0, path(r, "hr1->hr2").cowCopies());
        assertTrue(path(r, "hr1->hr2").packets() >= 250);
    }

    /** A knob set with --set reaches every namespace: full-copy makes the router copy whole packets. */
    @Test
    void setReachesTheRouter(@TempDir Path tmp) throws Exception {
        Demo.Report r = run(tmp, new DemoSpec.Overrides(null, null, null, 0, null, Map.of("usnet.forward.cow", "full-copy")));
        Demo.PathReport routed = path(r, "hr1->hr2");
        assertTrue(routed.cowBytes() >= 1000L * 1000, "full copies carry the payload: " + routed);
        assertEquals(0, path(r, "hb1->hb2").cowCopies(), "the bridge still never copies");
    }

    @Test
    void theSameSeedGivesTheSameRunInVirtualTime(@TempDir Path tmp) throws Exception {
        assertEquals(summary(plain), summary(run(tmp, DemoSpec.Overrides.NONE)));
    }

    private static String summary(Demo.Report r) {
        StringBuilder s = new StringBuilder();
        r.paths().forEach(p -> s.append(p.path()).append(' ').append(p.packets()).append(' ').append(p.bytes()).append(' ')
                .append(p.cowCopies()).append('\n'));
        r.tcp().forEach(t -> s.append(t.bytes()).append(' ').append(t.ss()).append('\n'));
        r.udp().forEach(u -> s.append(u.sent()).append(' ').append(u.received()).append('\n'));
        r.pings().forEach(p -> s.append(p.sent()).append(" ").append(p.received()).append("\n"));
        return s.toString();
    }

    /**
     * The default clock: the same file on one event loop per namespace, in real time. Timing decides the counts,
     * not what copies: the bridge still never copies and the routed path copies only shared packets.
     */
    @Test
    void inRealTimeTheBridgeStillNeverCopiesAndTheRouterDoes(@TempDir Path tmp) throws Exception {
        Demo.Report r = Demo.run(Demo.prepare(new Demo.Options(tmp, 0.5, 0.3, Demo.Clock.REAL, null, DemoSpec.Overrides.NONE)));
        Demo.PathReport bridged = path(r, "hb1->hb2");
        Demo.PathReport routed = path(r, "hr1->hr2");
        assertTrue(bridged.packets() > 0 && routed.packets() > 0, r.paths().toString());
        assertEquals(0, bridged.cowCopies(), "the bridge never copies");
        assertTrue(routed.cowCopies() > 0 && routed.cowCopies() <= routed.packets(), "routed " + routed);
        assertTrue(routed.latency().getTotalCount() > 0 && routed.latency().getMaxValue() > 0, "real time takes time");
        // Only replies to the window's own requests count (a late reply to a warm-up request does not); on a
        // loaded machine a round trip can outlast the 300 ms the last ones get, so some may be missing.
        for (Demo.PingReport p : r.pings()) {
            assertTrue(p.received() <= p.sent(), p.toString());
        }
        assertTrue(r.pings().stream().mapToLong(Demo.PingReport::received).sum() > 0, r.pings().toString());
        assertEquals(2, r.tcp().size());
        assertTrue(Files.size(tmp.resolve("hr1.pcap")) > 0);
    }

    /** The command prints what it printed before it ran a file: the same sections and columns. */
    @Test
    void theCommandPrintsThePictureTheTrafficAndTheTables(@TempDir Path tmp) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(new String[] {"demo", "--clock", "virtual", "--seconds", "0.5", "--warmup", "0.2",
                "--out", tmp.toString()}, new PrintWriter(so, true), new PrintWriter(se, true));
        String out = so.toString();
        assertEquals(0, code, se.toString());
        for (String s : List.of("usnet demo: three network namespaces in one process, in virtual time, random seed 1 (--seed)",
                "| hb1 ---- br0 198.18.0.1/24 ---- hb2 |", "routed path:  ctr1 eth1 -> hr1 -> IP forwarding",
                "Traffic, all from ctr1, the same over both paths:",
                "  ping      every 10 ms to the host (198.18.0.1, 198.18.1.1) and to ctr2 (198.18.0.12, 198.18.1.12)",
                "  UDP       2000 datagrams/s of 1000 bytes to ctr2", "the sender keeps its last 4096",
                "  TCP       CUBIC, 16384 bytes written every 10 ms to ctr2 on each path",
                "  timing    0.2 s warm-up (JIT, ARP; not counted), then 0.5 s measured",
                "COW copy:", "Forwarding in the host, per port pair, while measuring (0.5 s)",
                "  path       via                    packets        bytes       cow   cow bytes    p50 us    p99 us  p99.9 us",
                "  hr1->hr2   routing, proxy ARP", "  hb1->hb2   bridge br0",
                "  ping                         sent   recv    p50 us    p99 us", "  ctr1->ctr2 via routing ",
                "  UDP ctr1->ctr2 via bridge ", "  TCP ctr1->ctr2 via routing ", "sender (ss -ti):",
                "whole run:\ndrops: none", "wrote pcaps (first 2000 frames per host port) and .hgrm files to ")) {
            assertTrue(out.contains(s), "missing \"" + s + "\" in:\n" + out);
        }
        // The file's usage notes are not part of the picture.
        assertTrue(!out.contains("It is an ordinary topology file too"), out);
    }

    /** A --file with a mistake is refused with its line and key, before anything runs; a bad --set names the option. */
    @Test
    void aBadFileOrKnobIsAnErrorNamingWhere(@TempDir Path tmp) throws Exception {
        String text = DemoSpec.bundled().text().replace("keep_clones: 4096, max_burst: 10ms}\n      - {kind: udp-send",
                "keep_clones: lots, max_burst: 10ms}\n      - {kind: udp-send");
        Path f = tmp.resolve("mine.yaml");
        Files.writeString(f, text);
        int line = text.substring(0, text.indexOf("keep_clones: lots")).split("\n", -1).length;
        StringWriter se = new StringWriter();
        int code = Usnet.execute(new String[] {"demo", "--clock", "virtual", "--file", f.toString(), "--out",
                tmp.resolve("o").toString()}, new PrintWriter(new StringWriter(), true), new PrintWriter(se, true));
        assertEquals(Usnet.EXIT_USAGE, code);
        assertEquals("usnet: " + f + ":" + line + ": namespaces.ctr1.apps[4].keep_clones: expected an integer 0..1048576,"
                + " got \"lots\"", se.toString().trim());
        se = new StringWriter();
        code = Usnet.execute(new String[] {"demo", "--clock", "virtual", "--set", "net.ipv4.ip_forwrd=1", "--out",
                tmp.resolve("p").toString()}, new PrintWriter(new StringWriter(), true), new PrintWriter(se, true));
        assertEquals(Usnet.EXIT_USAGE, code);
        assertTrue(se.toString().contains("--set net.ipv4.ip_forwrd=1: unknown knob 'net.ipv4.ip_forwrd'"), se.toString());
    }
}
