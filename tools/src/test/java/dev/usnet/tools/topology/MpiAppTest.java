package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.errors;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code mpi} app kind through the topology file: examples/mpi-cluster.yaml at 2 hosts x 2 ranks, and bad entries. */
class MpiAppTest {
    private static final long ONE_S = 1_000_000_000L;

    private static VirtualRun.RunResult run(Path out, Map<String, String> params) {
        TopologySpec spec = TopologyFile.read(RunCommandTest.examples().resolve("mpi-cluster.yaml"), params);
        return VirtualRun.run(spec, new VirtualRun.Options(ONE_S, 5L, out));
    }

    private static JsonNode app(VirtualRun.RunResult r) throws Exception {
        JsonNode apps = new ObjectMapper().readTree(r.results().toJson()).get("apps");
        assertEquals(1, apps.size());
        return apps.get(0);
    }

    private static String withoutMeasured(VirtualRun.RunResult r) {
        String j = r.results().toJson();
        return j.substring(0, j.indexOf("\"measured\""));
    }

    @Test
    void theClusterAtTwoHostsByTwoRanksCompletesInBothModesWithEveryByteAndItsFields(@TempDir Path dir) throws Exception {
        // 4 ranks: a 2 x 2 grid, 20000-byte vectors; rank 1 and 2 transpose across the hosts.
        long perIteration = 4 * 20_000 + 2 * 20_000 + 4 * 2 * 8;
        for (String mode : List.of("native", "netns")) {
            VirtualRun.RunResult r = run(dir.resolve(mode), Map.of("hosts", "2", "ranks_per_host", "2", "mode", mode, "iterations", "3",
                    "size", "20000"));
            JsonNode a = app(r);
            assertEquals("launcher.mpi-0", a.get("name").asText());
            assertEquals("ok", a.get("outcome").asText(), a.toString());
            assertEquals(3 * perIteration, a.get("bytes").asLong(), mode);
            assertEquals(3 * (4 * 20_000 + 4 * 2 * 8), a.get("shm_bytes").asLong(), mode);
            assertEquals(4, a.get("ranks").asInt());
            assertEquals(1, a.get("connections").asInt());
            assertEquals(4 * 3, a.get("ops").asLong(), "one iteration time per rank and iteration");
            double completion = a.get("completion_us").asDouble() / 1e6;
            assertEquals(completion, a.get("completion_s").asDouble(), 0.0005);
            assertTrue(completion >= 3 * 300e-6, "three 100 us compute phases per iteration: " + completion);
            assertEquals(3 * perIteration / completion / 1e6, a.get("mb_s").asDouble(), 3 * perIteration / completion / 1e6 * 0.05);
            for (String f : List.of("p50_us", "p99_us", "max_us", "retrans", "rtos", "tcp_mb_s", "cwnd_at_loss",
                    "lossy_connections")) {
                assertTrue(a.has(f), f);
            }
            assertTrue(a.get("p50_us").asDouble() >= 300, a.toString());
            assertTrue(a.get("cwnd_at_loss").has("recovery") && a.get("cwnd_at_loss").has("rto"));
        }
    }

    @Test
    void theSameSeedGivesTheSameResultsBytes(@TempDir Path dir) {
        Map<String, String> p = Map.of("hosts", "2", "ranks_per_host", "2", "mode", "netns", "placement", "cyclic",
                "iterations", "2", "size", "20000");
        String a = withoutMeasured(run(dir.resolve("a"), p));
        String b = withoutMeasured(run(dir.resolve("b"), p));
        assertEquals(a, b);
        assertTrue(a.contains("\"completion_s\""), a);
    }

    @Test
    void badEntriesAreErrorsNamingTheirLine() {
        String base = """
                namespaces:
                  a:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.0.1/24]
                        peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}
                  b:
                    apps:
                      - kind: mpi
                        hosts: [a, b]
                %s
                """;
        assertEquals(List.of("t.yaml:12: namespaces.b.apps[0].ranks_per_hots: unknown key (did you mean"
                + " 'ranks_per_host'?); expected one of: compute, congestion, hosts, iterations, kind, local, pattern,"
                + " placement, port, ranks_per_host, receive_buffer, send_buffer, size"),
                errors(base.formatted("        ranks_per_hots: 2")));
        assertEquals(List.of("t.yaml:12: namespaces.b.apps[0].pattern: expected one of cg, alltoall, ring, got \"fft\""),
                errors(base.formatted("        pattern: fft")));
        assertEquals(List.of("t.yaml:12: namespaces.b.apps[0].compute: '1' needs a unit (expected a time with its unit"
                + " like 100ns, 50us, 1.5ms, 2s (ns, us, ms, s); or 0)"), errors(base.formatted("        compute: 1")));
        assertEquals(List.of("t.yaml:10: namespaces.b.apps[0]: mpi: 2 hosts x 3 ranks_per_host = 6 ranks: pattern cg"
                + " needs a power of two ranks (NAS CG's process grid), got 6"),
                errors(base.formatted("        ranks_per_host: 3")));
        assertEquals(List.of("t.yaml:10: namespaces.b.apps[0]: pattern ring needs size: (bytes per message); only cg has"
                + " a default"), errors(base.formatted("        pattern: ring")));
        assertEquals(List.of("t.yaml:11: namespaces.b.apps[0].hosts: 'c*' matches no namespace (declared: a, b)"),
                errors(base.replace("hosts: [a, b]", "hosts: [a, \"c*\"]").formatted("")));
        assertEquals(List.of("t.yaml:11: namespaces.b.apps[0].hosts: mpi host b has no IPv4 address for the other ranks"
                + " to connect to"), errors(base.replace("addresses: [198.18.0.2/24]", "").formatted("")));
    }
}
