package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/forward-vs-bridge.yaml for 20 virtual milliseconds (slow start up to the link rate, ~4000 segments a
 * path; short because the leak detector runs at PARANOID): the mechanism of docs/forward-vs-bridge.md shows in
 * the counters. The routed container's segments reach the host still shared with the sender's
 * retransmission queue and are copied once each (the whole frame with full-copy, 34 bytes of headers with
 * head-copy); the bridged path copies nothing; an egress device short of headroom copies even unshared packets.
 */
class ForwardVsBridgeExampleTest {
    private static final String DURATION = "0.02";

    private static JsonNode run(Path dir, String cow, String... params) throws IOException {
        Path results = dir.resolve("results.json");
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of("run", "--clock", "virtual",
                "--duration", DURATION, "--out", dir.toString(), "--set", "host:usnet.forward.cow=" + cow,
                "--results", results.toString()));
        for (String p : params) {
            args.add("--param");
            args.add(p);
        }
        args.add(example().toString());
        Result r = RunCommandTest.run(args.toArray(String[]::new));
        assertEquals(0, r.code(), r.out() + r.err());
        return new ObjectMapper().readTree(results.toFile());
    }

    private static JsonNode ns(JsonNode doc, String name) {
        for (JsonNode n : doc.path("namespaces")) {
            if (n.path("name").asText().equals(name)) {
                return n;
            }
        }
        throw new AssertionError("no namespace " + name + " in " + doc);
    }

    private static JsonNode path(JsonNode doc, String ns, String name) {
        for (JsonNode p : doc.path("paths")) {
            if (p.path("ns").asText().equals(ns) && p.path("name").asText().equals(name)) {
                return p;
            }
        }
        throw new AssertionError("no path " + ns + "/" + name + " in " + doc.path("paths"));
    }

    private static Path example() {
        return RunCommandTest.examples().resolve("forward-vs-bridge.yaml");
    }

    /** Every app moved data: each path carried its stream. */
    private static void assertAllStreamed(JsonNode doc) {
        for (JsonNode a : doc.path("apps")) {
            assertEquals("ok", a.path("outcome").asText(), a.toString());
            assertTrue(a.path("bytes").asLong() > 1_000_000, a.toString());
        }
    }

    @Test
    void fullCopyCopiesEachSharedSegmentWholeAndTheBridgeCopiesNothing(@TempDir Path tmp) throws IOException {
        JsonNode doc = run(tmp, "full-copy", "idle=2");
        assertAllStreamed(doc);
        JsonNode host = ns(doc, "host");
        JsonNode out = path(doc, "host", "hr0->eth0");
        long forwarded = out.path("packets").asLong();
        long copies = host.path("cow_copies").asLong();
        long shared = host.path("cow_shared").asLong();
        // The retransmission queue still held every data segment when the host forwarded its clone: one copy
        // per forwarded packet. ctr's two pure ACKs (the handshake's, and the one of the peer's FIN) are not
        // clones and are not copied; the peer's SYN-ACK and FIN, going the other way, are.
        assertEquals(shared, copies, "every copy is of a shared packet");
        assertEquals(0, host.path("cow_headroom_copies").asLong());
        assertEquals(forwarded, copies, copies + " copies for " + forwarded + " packets from ctr");
        long bytes = host.path("cow_bytes").asLong();
        long fwdBytes = out.path("bytes").asLong();
        // Equal up to those four small packets: the path's bytes hold ctr's uncopied ACKs, cow_bytes the peer's
        // copied SYN-ACK and FIN.
        assertTrue(Math.abs(bytes - fwdBytes) < 4 * 80, bytes + " bytes copied of " + fwdBytes + " forwarded");
        assertTrue(bytes / copies >= 1500, "full frames: " + bytes / copies + " bytes per copy");
        // The ACKs coming back are the peer's own, never cloned, and have room: no copy.
        assertTrue(path(doc, "host", "eth0->hr0").path("packets").asLong() > 0);
        for (String n : new String[] {"outside", "ctr", "bctr", "bhost", "peer", "idle-r1", "idle-b1"}) {
            assertEquals(0, ns(doc, n).path("cow_copies").asLong(), n);
            assertEquals(0, ns(doc, n).path("cow_shared").asLong(), n);
        }
        assertTrue(path(doc, "bhost", "hb0->eth0").path("packets").asLong() > 1000, "the bridge carried the stream");
        // The model charges the copies: the routed host costs more per byte than the bridge.
        double routed = host.path("cpu_model_ns").asDouble() / appBytes(doc, "ctr");
        double bridged = ns(doc, "bhost").path("cpu_model_ns").asDouble() / appBytes(doc, "bctr");
        assertTrue(routed > 2 * bridged, routed + " vs " + bridged + " ns/B");
    }

    @Test
    void headCopyCopiesOnlyTheHeadersOfEachSharedSegment(@TempDir Path tmp) throws IOException {
        JsonNode doc = run(tmp, "head-copy");
        assertAllStreamed(doc);
        JsonNode host = ns(doc, "host");
        long copies = host.path("cow_copies").asLong();
        assertEquals(host.path("cow_shared").asLong(), copies);
        assertTrue(copies > 0.99 * path(doc, "host", "hr0->eth0").path("packets").asLong());
        assertEquals(34 * copies, host.path("cow_bytes").asLong(), "Ethernet and IP header, nothing else");
        assertEquals(0, ns(doc, "bhost").path("cow_copies").asLong());
    }

    @Test
    void aShortHeadroomCopiesEvenTheUnsharedAcks(@TempDir Path tmp) throws IOException {
        // hr0 as a tunnel-like device: VXLAN's 50 bytes of needed_headroom reserve 80 in front of IP, the
        // peer's ACKs arrive with 78.
        JsonNode doc = run(tmp, "head-copy", "headroom=50");
        assertAllStreamed(doc);
        JsonNode host = ns(doc, "host");
        long acks = path(doc, "host", "eth0->hr0").path("packets").asLong();
        long headroom = host.path("cow_headroom_copies").asLong();
        // Enough ACKs that "every one" means something (961 with autotuned buffers, whose receive window opens by
        // rcv_ssthresh steps, 1000-odd with the old max-at-start buffers).
        assertTrue(acks > 500, acks + " ACKs");
        // Every ACK but the peer's SYN-ACK and FIN, which its retransmission queue still holds (so they are
        // copied as shared packets, not for headroom).
        assertEquals(acks - 2, headroom, "every unshared forwarded ACK is copied for headroom");
        assertEquals(host.path("cow_shared").asLong() + headroom, host.path("cow_copies").asLong());
        assertEquals(34 * host.path("cow_copies").asLong(), host.path("cow_bytes").asLong());
    }

    private static long appBytes(JsonNode doc, String ns) {
        for (JsonNode a : doc.path("apps")) {
            if (a.path("ns").asText().equals(ns)) {
                return a.path("bytes").asLong();
            }
        }
        throw new AssertionError("no app in " + ns);
    }

    @Test
    void natOnMasqueradesTheRoutedContainerAndTracksBothHostsPathsWhileOffLeavesNetfilterOut(@TempDir Path tmp)
            throws IOException {
        JsonNode on = run(tmp.resolve("on"), "head-copy", "nat=on");
        assertAllStreamed(on);
        JsonNode host = ns(on, "host").path("netfilter");
        assertEquals(1, host.path("nat").path("snat_bindings").asLong(), host.toString());
        assertTrue(host.path("nat").path("rewrites").asLong() > 1000, host.toString());
        assertEquals(0, host.path("stats").path("invalid").asLong(), host.toString());
        // The bridging host tracks its bridged stream through br_netfilter: one connection, nothing NATed.
        JsonNode bhost = ns(on, "bhost").path("netfilter");
        assertEquals(1, bhost.path("entries").asLong(), bhost.toString());
        assertEquals(0, bhost.path("nat").path("rewrites").asLong(), bhost.toString());

        JsonNode off = run(tmp.resolve("off"), "head-copy", "nat=off");
        assertAllStreamed(off);
        for (String n : new String[] {"host", "bhost"}) {
            assertTrue(ns(off, n).path("netfilter").isMissingNode(), ns(off, n).toString());
        }
    }
}
