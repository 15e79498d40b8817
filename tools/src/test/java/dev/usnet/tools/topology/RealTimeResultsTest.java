package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.Usnet;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet run --results} in real time: the virtual-time schema and layout, written at the stop. */
class RealTimeResultsTest {

    private static JsonNode run(Path out, String clock) throws IOException {
        Result r = RunCommandTest.run("run", "--clock", clock, "--duration", "2", "--seed", "5", "--out", out.toString(),
                "--results", out.resolve("results.json").toString(),
                RunCommandTest.examples().resolve("in-jvm-containers.yaml").toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("usnet: wrote results to " + out.resolve("results.json")), r.out());
        return new ObjectMapper().readTree(out.resolve("results.json").toFile());
    }

    private static List<String> keys(JsonNode n) {
        List<String> l = new ArrayList<>();
        n.fieldNames().forEachRemaining(l::add);
        return l;
    }

    private static JsonNode find(JsonNode list, String key, String value) {
        for (JsonNode n : list) {
            if (n.path(key).asText().equals(value)) {
                return n;
            }
        }
        throw new AssertionError("no " + key + " " + value + " in " + list);
    }

    @Test
    void aRealTimeRunWritesTheVirtualLayoutWithClockRealAndItsWallClockNumbersUnderMeasured(@TempDir Path tmp)
            throws IOException {
        JsonNode real = run(tmp.resolve("real"), "real");
        JsonNode virtual = run(tmp.resolve("virtual"), "virtual");
        assertEquals("usnet-results/1", real.path("schema").asText());
        assertEquals("real", real.path("clock").asText());
        assertEquals(5, real.path("seed").asLong(), "--seed applies in real time too");
        assertEquals(keys(virtual), keys(real));
        for (String section : List.of("apps", "namespaces", "devices")) {
            assertEquals(virtual.path(section).size(), real.path(section).size(), section);
            for (int i = 0; i < real.path(section).size(); i++) {
                assertEquals(keys(virtual.path(section).get(i)), keys(real.path(section).get(i)), section + "[" + i + "]");
                assertEquals(virtual.path(section).get(i).path("name"), real.path(section).get(i).path("name"));
            }
        }
        // How long the apps ran, as measured: the 2 s of --duration and a little.
        double d = real.path("duration_s").asDouble();
        assertTrue(d >= 2.0 && d < 4.0, "duration_s " + d);
        assertEquals(List.of("cpu_ns", "wall_s", "app_cpu_ns"), keys(real.path("measured")));
        assertTrue(real.path("measured").path("wall_s").asDouble() >= d, real.path("measured").toString());
        assertTrue(real.path("measured").path("cpu_ns").path("host").asLong() > 0, real.path("measured").toString());
        assertTrue(real.path("measured").path("app_cpu_ns").has("ctr1.burst-0"), real.path("measured").toString());

        // Taken after the apps stopped and what was in flight arrived: every datagram sent was received.
        JsonNode sent = find(real.path("apps"), "name", "ctr1.udp-send-0");
        JsonNode got = find(real.path("apps"), "name", "ctr3.udp-sink-0");
        assertTrue(sent.path("ops").asLong() >= 200, sent.toString());
        assertEquals(sent.path("ops").asLong(), got.path("ops").asLong(), got.toString());
        assertEquals("ok", find(real.path("apps"), "name", "ctr1.ping-1").path("outcome").asText());
        assertTrue(find(real.path("apps"), "name", "ctr1.ping-1").path("p50_us").asDouble() > 0,
                "a real round trip takes time");
        // The routed path, with the packets the host's device counters saw leave through hr3.
        JsonNode routed = find(real.path("paths"), "name", "br0->hr3");
        assertTrue(routed.path("packets").asLong() > 0, routed.toString());
        assertTrue(routed.path("packets").asLong() <= find(real.path("devices"), "name", "host/hr3").path("tx_packets").asLong());
        assertTrue(routed.path("max_us").asDouble() > 0, routed.toString());
        // The bridged ones, in both clocks: port to port (ctr1 pings ctr2), and port to the bridge's own stack
        // (everything ctr1 sends to ctr3 is delivered to br0 first, then routed br0->hr3).
        for (JsonNode doc : List.of(real, virtual)) {
            JsonNode toPort = find(doc.path("paths"), "name", "hb1->hb2");
            JsonNode toBridge = find(doc.path("paths"), "name", "hb1->br0");
            JsonNode ping = find(doc.path("apps"), "name", "ctr1.ping-0");
            assertEquals("host", toBridge.path("ns").asText());
            assertTrue(toPort.path("packets").asLong() >= ping.path("ops").asLong(), doc.path("clock") + " " + toPort);
            assertTrue(toBridge.path("packets").asLong() >= find(doc.path("paths"), "name", "br0->hr3").path("packets").asLong(),
                    doc.path("clock") + " " + toBridge);
            // Every frame br0 receives is one of its ports' delivered up.
            long up = 0;
            for (JsonNode path : doc.path("paths")) {
                if (path.path("name").asText().matches("hb[12]->br0")) {
                    up += path.path("packets").asLong();
                }
            }
            assertEquals(find(doc.path("devices"), "name", "host/br0").path("rx_packets").asLong(), up, doc.path("clock").asText());
        }
        assertTrue(find(real.path("paths"), "name", "hb1->br0").path("max_us").asDouble() > 0);
    }

    @Test
    void anUnwritableResultsFileIsExitTwoBeforeAnythingRuns(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("t.yaml");
        Files.writeString(f, """
                version: 1
                namespaces:
                  a:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}}
                    apps:
                      - {kind: ping, to: 198.18.0.2, interval: 0.1}
                  b: {}
                """);
        Files.writeString(tmp.resolve("file"), "");
        // A directory below a regular file cannot be created.
        Path bad = tmp.resolve("file/results.json");
        Result r = RunCommandTest.run("run", "--duration", "0.5", "--out", tmp.toString(), "--results", bad.toString(),
                f.toString());
        // Checked before anything is built: the words of the path's problem, and no run to undo.
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("--results " + bad) && r.err().contains("Not a directory"), r.err());
        assertFalse(r.out().contains("usnet namespaces"), r.out());
        assertFalse(Files.exists(bad));
    }
}
