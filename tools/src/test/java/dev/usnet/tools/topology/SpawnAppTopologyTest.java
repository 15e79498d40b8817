package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code kind: spawn} and the pid-namespace knobs in a topology, in virtual time: processes forked at the rate and
 * reaped, every app's pids per level in the results as the model gives them, a full pid space counted as refused forks,
 * and bad settings refused with their line.
 */
class SpawnAppTopologyTest {
    private static VirtualRun.RunResult run(String yaml, double seconds) {
        TopologySpec spec = TopologyFile.parse("t.yaml", yaml);
        return VirtualRun.run(spec, new VirtualRun.Options((long) (seconds * 1e9), null, null));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> pids(Map<String, Object> app, String key) {
        return (List<Map<String, Object>>) app.get(key);
    }

    private static List<Object> column(List<Map<String, Object>> pids, String key) {
        return pids.stream().map(p -> p.get(key)).toList();
    }

    private static final String TWO = """
            namespaces:
              m:
                knobs: {usnet.pidns.model: multilevel, usnet.pidns.depth: 2}
                apps:
                  - {kind: spawn, rate: 1000, lifetime: 3ms}
                  - {kind: spawn, rate: 200}
              f:
                knobs: {usnet.pidns.model: flat, usnet.pidns.depth: 2}
                apps:
                  - {kind: spawn, rate: 500, count: 300}
              n:
                apps:
                  - {kind: spawn, rate: 100}
            """;

    @Test
    void childrenAreSpawnedAtTheRateReapedAndEveryAppShowsItsPidsPerLevel() {
        VirtualRun.RunResult r = run(TWO, 1);
        List<Map<String, Object>> apps = r.results().apps();
        assertEquals(List.of("m.spawn-0", "m.spawn-1", "f.spawn-0", "n.spawn-0"), apps.stream().map(a -> a.get("name")).toList());
        Map<String, Object> m0 = apps.get(0);
        assertEquals(1001L, m0.get("ops"), "1000/s for a second, the first at once");
        assertEquals(1001L, m0.get("reaped"), "children alive at the stop are ended and reaped too");
        assertEquals(Map.of(), m0.get("fork_errors"));
        assertEquals("ok", m0.get("outcome"));
        // m: init 1, m/1's init 2@init, m/2's init 3@init 2@m/1; the first app 4, 3, 2.
        assertEquals(List.of(0, 1, 2), column(pids(m0, "pids"), "level"));
        assertEquals(List.of("init", "m/1", "m/2"), column(pids(m0, "pids"), "ns"));
        assertEquals(List.of(4, 3, 2), column(pids(m0, "pids"), "pid"));
        assertEquals(3, pids(m0, "last_child_pids").size());
        assertEquals(201L, apps.get(1).get("ops"));
        // Flat: the global number and the one in its own namespace, nothing at m/1's level.
        Map<String, Object> f0 = apps.get(2);
        assertEquals(300L, f0.get("ops"), "count: 300 stops it");
        assertEquals(List.of(0, 2), column(pids(f0, "pids"), "level"));
        assertEquals(List.of("init", "f/2"), column(pids(f0, "pids"), "ns"));
        assertEquals(2, column(pids(f0, "pids"), "pid").get(1), "pid 2 in its own namespace, after the init");
        assertEquals(List.of(302), column(pids(f0, "last_child_pids"), "pid").subList(1, 2), "children 3..302");
        // None: one number, in the initial namespace.
        assertEquals(List.of(0), column(pids(apps.get(3), "pids"), "level"));
        assertTrue(r.summary().apps().stream().anyMatch(l -> l.startsWith("m: spawn 1000/s: 1001 spawned, 1001 reaped; pids 4@init 3@m/1 2@m/2")),
                r.summary().apps().toString());
        assertTrue(((Map<?, ?>) r.results().measured().get("spawn_ns")).containsKey("f.spawn-0"));
    }

    @Test
    void aTcpAppsServerRunsAsAProcessOfTheServersNamespace() {
        VirtualRun.RunResult r = run("""
                namespaces:
                  a:
                    knobs: {usnet.pidns.model: multilevel}
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}}
                    apps:
                      - {kind: rr, server: b, count: 5}
                  b:
                    knobs: {usnet.pidns.model: multilevel, usnet.pidns.depth: 3}
                """, 0.5);
        Map<String, Object> rr = r.results().apps().getFirst();
        assertEquals(List.of("init", "a/1"), column(pids(rr, "pids"), "ns"));
        assertEquals(List.of("init", "b/1", "b/2", "b/3"), column(pids(rr, "server_pids"), "ns"));
        assertEquals(2, column(pids(rr, "server_pids"), "pid").get(3), "the first process of b/3 after its init");
    }

    @Test
    void theSameFileGivesTheSamePids() {
        assertEquals(run(TWO, 0.3).results().apps(), run(TWO, 0.3).results().apps());
    }

    @Test
    void aFullPidSpaceRefusesForksWithEagainAndTheAppCountsThem() {
        VirtualRun.RunResult r = run("""
                namespaces:
                  c:
                    knobs: {usnet.pidns.model: multilevel, kernel.pid_max: 301}
                    apps:
                      - {kind: spawn, rate: 1000, lifetime: 10s}
                """, 0.5);
        Map<String, Object> a = r.results().apps().getFirst();
        // 1..300 in c/1: its init and the app take two, the children the other 298.
        assertEquals(298L, a.get("ops"));
        assertEquals(Map.of("EAGAIN", 501L - 298L), a.get("fork_errors"));
        assertEquals("ok", a.get("outcome"));
        assertTrue(r.summary().apps().getFirst().contains("203 forks refused {EAGAIN=203}"), r.summary().apps().toString());
    }

    @Test
    void badPidNamespaceSettingsAndSpawnKeysAreRefusedWithTheirLine() {
        List<String> e = TopologyErrors.errors("""
                namespaces:
                  c:
                    knobs: {usnet.pidns.model: tree, usnet.pidns.depth: 40, kernel.pid_max: 100}
                    apps:
                      - {kind: spawn, rate: 0, lifetime: 5}
                """);
        String all = String.join("\n", e);
        assertTrue(all.contains("usnet.pidns.model: 'tree' is not one of none, flat, multilevel"), all);
        assertTrue(all.contains("usnet.pidns.depth: 40 is out of range 1..32"), all);
        assertTrue(all.contains("kernel.pid_max: 100 is out of range 301..4194304"), all);
        assertTrue(all.contains("t.yaml:5: namespaces.c.apps[0].rate: expected an integer 1..1000000, got 0"), all);
        assertTrue(all.contains("namespaces.c.apps[0].lifetime: '5' needs a unit"), all);
        assertTrue(TopologyErrors.onlyError("""
                namespaces:
                  c:
                    apps:
                      - {kind: spawn, port: 5}
                """).contains("port"));
    }
}
