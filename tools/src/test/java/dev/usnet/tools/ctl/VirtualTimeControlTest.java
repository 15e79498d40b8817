package dev.usnet.tools.ctl;

import dev.usnet.tools.app.Pinger;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.run.VirtualSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control plane in virtual time: requests run between slices on the clock's thread; snapshots and events are deterministic. */
class VirtualTimeControlTest {
    private static final String TOPOLOGY = LiveDaemon.topology("""
            - {kind: ping, to: 198.18.0.12, interval: 0.01}
            - {kind: ping, to: 198.18.1.13, interval: 0.01}
            - {kind: udp-send, to: 198.18.1.13, port: 5001, rate: 500, size: 200}
            """, "- {kind: udp-sink, port: 5001}\n");

    @Test
    void aRequestRunsOnTheClocksThreadBetweenSlicesAndChangesTheRun(@TempDir Path dir) throws Exception {
        TopologySpec spec = TopologyFile.parse("ctltest.yaml", TOPOLOGY);
        try (VirtualSession s = VirtualSession.start(spec, dir)) {
            NsLoops.Virtual inbox = new NsLoops.Virtual();
            EventHub hub = new EventHub(s.topology(), true, s.nanoTime());
            ControlPlane cp = new ControlPlane(new ControlPlane.Host("ctltest", "virtual", s.topology(), s::apps, dir, inbox,
                    List::of), hub);
            s.runFor(500_000_000L);
            Thread driver = Thread.currentThread();
            Thread[] ranOn = new Thread[1];
            CompletableFuture<Reply> del = CompletableFuture.supplyAsync(() -> cp.handle("host",
                    List.of("route", "del", "198.18.1.0/24")));
            CompletableFuture<Object> probe = CompletableFuture.supplyAsync(() -> cp.onLoop(s.topology().stack("host"), () -> {
                ranOn[0] = Thread.currentThread();
                return null;
            }));
            while (!del.isDone() || !probe.isDone()) {
                s.runFor(1_000_000L);
                inbox.drain();
            }
            assertEquals(driver, ranOn[0], "a request ran off the clock's thread");
            assertTrue(del.get().text().startsWith("deleted 198.18.1.0/24"), del.get().text());
            assertEquals(null, s.topology().stack("host").routes().get(Ipv4Addr.parse("198.18.1.0"), 24));
            long before = s.apps().list().get(1) instanceof Pinger p ? p.received() : -1;
            s.runFor(500_000_000L);
            long after = ((Pinger) s.apps().list().get(1)).received();
            assertTrue(after <= before + 1, "pings to ctr3 answered after the route went: " + before + " -> " + after);
            inbox.close();
            CompletableFuture<Reply> late = CompletableFuture.supplyAsync(() -> cp.handle("host", List.of("link", "show")));
            assertTrue(late.handle((r, e) -> e != null && e.getCause() instanceof CtlException ce
                    && ce.getMessage().equals("the virtual run has ended")).get());
        }
    }

    @Test
    void snapshotsAndTheEventLogAreTheSameForTheSameSeedAndSlicingChangesNothing(@TempDir Path dir) throws Exception {
        TopologySpec spec = TopologyFile.parse("ctltest.yaml", TOPOLOGY);
        long dur = 2_000_000_000L;
        VirtualRun.RunResult plain = VirtualRun.run(spec, new VirtualRun.Options(dur, 7L, dir.resolve("p")));
        VirtualRun.RunResult[] observed = new VirtualRun.RunResult[2];
        for (int i = 0; i < 2; i++) {
            Path out = dir.resolve("o" + i);
            observed[i] = VirtualRun.run(spec, new VirtualRun.Options(dur, 7L, out).observed(
                    new DaemonControl.Options(null, null, out.resolve("events.jsonl"), 50), 500_000_000L));
        }
        assertEquals(withoutMeasured(observed[0].results()), withoutMeasured(observed[1].results()));
        assertEquals(Files.readString(dir.resolve("o0/events.jsonl")), Files.readString(dir.resolve("o1/events.jsonl")));
        assertEquals(withoutMeasured(plain.results()), withoutMeasured(observed[0].results().withSnapshots(List.of())),
                "observing the run changed it");
        List<Map<String, Object>> snaps = observed[0].results().snapshots();
        assertEquals(4, snaps.size());
        JsonNode tree = new ObjectMapper().readTree(observed[0].results().toJson());
        JsonNode sj = tree.get("snapshots");
        long lastTx = -1;
        for (int i = 0; i < 4; i++) {
            assertEquals(0.5 * (i + 1), sj.get(i).path("t_s").asDouble());
            long tx = 0;
            for (JsonNode dev : sj.get(i).path("devices")) {
                if (dev.path("name").asText().equals("ctr1/eth0")) {
                    tx = dev.path("tx_packets").asLong();
                }
            }
            assertTrue(tx > lastTx, "ctr1/eth0 sent nothing in a slice");
            lastTx = tx;
        }
        assertTrue(sj.get(3).path("apps").get(3).path("bytes").asLong() > sj.get(0).path("apps").get(3).path("bytes").asLong());
        List<String> log = Files.readAllLines(dir.resolve("o0/events.jsonl"));
        assertTrue(log.stream().anyMatch(l -> l.contains("\"type\":\"app\",\"action\":\"start\"")));
        assertTrue(log.stream().anyMatch(l -> l.contains("\"type\":\"fdb\",\"action\":\"learn\"")));
        assertFalse(log.stream().anyMatch(l -> l.contains("\"wall\"")), "virtual events carry wall-clock times");
        assertTrue(tree.toString().indexOf("\"snapshots\"") < tree.toString().indexOf("\"measured\""));
    }

    private static String withoutMeasured(Results r) {
        String j = r.toJson();
        return j.substring(0, j.indexOf("\"measured\""));
    }
}
