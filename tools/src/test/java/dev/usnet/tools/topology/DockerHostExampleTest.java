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
 * examples/docker-host.yaml in virtual time: the published port answers from c1 with the outside's own address
 * (DNAT), c2's fetches reach the outside from the host's address (MASQUERADE), c3's fetch of its own host's
 * published port comes back through the host (hairpin: c1 saw the bridge's address), c3's pings pass the stateful
 * forward policy, the host reaches its own published port (output DNAT, rerouted), and the host's counters show the
 * bindings.
 */
class DockerHostExampleTest {
    private static JsonNode app(JsonNode doc, String name) {
        for (JsonNode a : doc.path("apps")) {
            if (a.path("name").asText().equals(name)) {
                return a;
            }
        }
        throw new AssertionError("no app " + name + " in " + doc.path("apps"));
    }

    private static void assertSeenAs(JsonNode a, String prefix, int count) {
        assertEquals("ok", a.path("outcome").asText(), a.toString());
        assertEquals(count, a.path("seen_as").size(), a.toString());
        for (JsonNode s : a.path("seen_as")) {
            assertTrue(s.asText().startsWith(prefix), a.toString());
        }
    }

    @Test
    void publishedPortMasqueradeAndHairpinWorkAsOnADockerHost(@TempDir Path tmp) throws IOException {
        Path results = tmp.resolve("results.json");
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "2", "--out", tmp.toString(),
                "--results", results.toString(), RunCommandTest.examples().resolve("docker-host.yaml").toString());
        assertEquals(0, r.code(), r.out() + r.err());
        JsonNode doc = new ObjectMapper().readTree(results.toFile());
        assertSeenAs(app(doc, "outside.http-get-0"), "198.19.0.2:", 3);
        assertSeenAs(app(doc, "c2.http-get-0"), "198.19.0.1:", 3);
        assertSeenAs(app(doc, "c3.http-get-0"), "198.18.17.1:", 2);
        assertEquals("ok", app(doc, "c3.ping-0").path("outcome").asText());
        // The host's own fetch of its published port: DNAT at output, rerouted out of docker0 to c1, which sees
        // the host's address.
        assertSeenAs(app(doc, "host.http-get-0"), "198.19.0.1:", 1);
        JsonNode host = null;
        for (JsonNode n : doc.path("namespaces")) {
            if (n.path("name").asText().equals("host")) {
                host = n.path("netfilter");
            }
        }
        assertTrue(host != null && !host.isMissingNode(), doc.toString());
        // Three fetches of the published port from outside, two hairpinned ones from c3 and the host's own are
        // DNATed.
        assertEquals(6, host.path("nat").path("dnat_bindings").asLong(), host.toString());
        // c2's three fetches, c3's two hairpinned ones and c3's ping are source-NATed.
        assertEquals(6, host.path("nat").path("snat_bindings").asLong(), host.toString());
        assertEquals(0, host.path("stats").path("invalid").asLong(), host.toString());
        assertTrue(r.out().contains("drops: none"), r.out());
    }
}
