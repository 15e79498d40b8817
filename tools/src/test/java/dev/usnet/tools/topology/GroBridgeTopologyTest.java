package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GRO on a bridge port ({@code gro: true}), end to end in virtual time: a client sends 1 MiB of MSS-sized segments
 * through a bridge to a server; with GRO the port merges them, the bridge forwards the merged packets, and the
 * server's TCP receives every byte and acknowledges far fewer times (stretch ACKs). An egress without GSO segments
 * the merged packets again, and the server still receives every byte.
 */
class GroBridgeTopologyTest {
    private static String topology(boolean gro, boolean serverPortGso) {
        return """
                name: gro-bridge
                namespaces:
                  c:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: sw, name: p1, gro: %s}}
                    apps:
                      - {kind: stream, server: s, bytes: 1m, write_size: 64k}
                  s:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.2/24], peer: {namespace: sw, name: p2, gso: %s}}
                  sw:
                    devices:
                      - {name: br0, kind: bridge, ports: [p1, p2]}
                """.formatted(gro, serverPortGso);
    }

    private static JsonNode run(Path dir, String yaml) throws IOException {
        Files.createDirectories(dir);
        Path f = dir.resolve("t.yaml");
        Files.writeString(f, yaml);
        RunCommandTest.Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "5", "--seed", "1",
                "--out", dir.toString(), "--results", dir.resolve("results.json").toString(), f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        // The server's socket read the whole stream, in order, and the app says so.
        assertTrue(java.util.regex.Pattern.compile("s: stream server [^\\n]* 1048576 bytes, [^\\n]*; ok").matcher(r.out()).find(),
                r.out());
        return new ObjectMapper().readTree(dir.resolve("results.json").toFile());
    }

    private static JsonNode ns(JsonNode results, String name) {
        for (JsonNode n : results.path("namespaces")) {
            if (n.path("name").asText().equals(name)) {
                return n;
            }
        }
        throw new AssertionError("no namespace " + name + " in " + results);
    }

    private static JsonNode dev(JsonNode results, String name) {
        for (JsonNode d : results.path("devices")) {
            if (d.path("name").asText().equals(name)) {
                return d;
            }
        }
        throw new AssertionError("no device " + name + " in " + results);
    }

    private static long mib(JsonNode results, String ns, String key) {
        return ns(results, ns).path("mib").path(key).asLong();
    }

    @Test
    void aBridgePortWithGroForwardsMergedPacketsAndTheReceiverAcksThemWithFewerAcks(@TempDir Path tmp)
            throws IOException {
        JsonNode off = run(tmp.resolve("off"), topology(false, true));
        JsonNode on = run(tmp.resolve("on"), topology(true, true));
        JsonNode resegmented = run(tmp.resolve("reseg"), topology(true, false));
        long bytes = 1L << 20;
        for (JsonNode r : new JsonNode[] {off, on, resegmented}) {
            // Every byte reached the server's TCP, as MSS segments (gso_segs counted); the path has no rate, so the
            // client's first windows overflow the backlogs (BACKLOG_FULL) and are retransmitted: all arrive anyway.
            assertTrue(mib(r, "s", "TcpInSegs") >= bytes / 1448, r.toString());
        }
        assertFalse(dev(off, "sw/p1").has("rx_gro_packets"), "results without GRO keep their keys");
        long merged = dev(on, "sw/p1").path("rx_gro_packets").asLong();
        long segs = dev(on, "sw/p1").path("rx_gro_segments").asLong();
        assertTrue(merged > 0 && segs >= 2 * merged, "merged " + merged + " packets of " + segs + " segments");
        // The bridge forwarded fewer, larger frames out of p2 than it received on p1.
        assertTrue(dev(on, "sw/p2").path("tx_packets").asLong() < dev(on, "sw/p1").path("rx_packets").asLong() * 3 / 4,
                on.path("devices").toString());
        // Without GSO on p2 the merged packets are segmented again: as many frames leave as came in.
        assertTrue(dev(resegmented, "sw/p2").path("tx_packets").asLong()
                >= dev(resegmented, "sw/p1").path("rx_packets").asLong() - 10, resegmented.path("devices").toString());
        long acksOff = mib(off, "s", "TcpOutSegs");
        long acksOn = mib(on, "s", "TcpOutSegs");
        assertTrue(acksOn * 3 / 2 < acksOff, "stretch ACKs: " + acksOn + " segments out with GRO, " + acksOff + " without");
    }
}
