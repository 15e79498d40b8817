package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet ctl events} and {@code events.jsonl}: what happens in the namespaces, as it happens. */
class EventStreamTest {
    @Test
    void linkRouteNeighbourFdbAppAndDropEventsAreStreamedAndLogged(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("events.jsonl");
        LiveDaemon d = LiveDaemon.start(LiveDaemon.topology("""
                - {kind: ping, to: 198.18.0.12, interval: 0.005}
                - {kind: stream, server: ctr3, port: 5001, bytes: 64k}
                """, ""), dir, new DaemonControl.Options(dir.resolve("ctl.sock"), null, log, 20));
        List<JsonNode> got = new CopyOnWriteArrayList<>();
        Thread reader;
        try (CtlClient c = CtlClient.connect(d.socket)) {
            JsonNode first = c.request(null, List.of("events"));
            assertTrue(first.path("data").path("streaming").asBoolean(), first.toString());
            reader = new Thread(() -> {
                try {
                    JsonNode e;
                    while ((e = c.read()) != null) {
                        got.add(e);
                    }
                } catch (Exception ignored) {
                    // The test closed the connection.
                }
            });
            reader.start();
            assertTrue(LiveDaemon.eventually(3000, () -> d.app("ctr1.ping-0") > 3));
            d.ok("host", "route", "add", "198.18.50.0/24", "via", "198.18.1.13");
            d.ok("host", "route", "del", "198.18.50.0/24");
            d.control.tick(System.nanoTime());
            d.ok("host", "link", "set", "hb2", "down");
            Thread.sleep(600);
            d.control.tick(System.nanoTime());
            d.ok("host", "link", "set", "hb2", "up");
            d.ok("ctr1", "neigh", "flush", "dev", "eth0");
            assertTrue(LiveDaemon.eventually(5000, () -> has(got, e -> e.path("type").asText().equals("fdb")
                    && e.path("action").asText().equals("learn") && e.path("dev").asText().equals("hb2"))),
                    "no FDB learn on hb2 after it came back: " + got);
            assertTrue(LiveDaemon.eventually(3000, () -> has(got, e -> e.path("type").asText().equals("neigh")
                    && e.path("ns").asText().equals("ctr1") && e.path("state").asText().equals("REACHABLE")
                    && e.path("from").asText().equals("INCOMPLETE"))), "ctr1 did not resolve ctr2 again: " + got);
        }
        reader.join(5000);
        assertTrue(has(got, e -> e.path("type").asText().equals("route") && e.path("action").asText().equals("add")
                && e.path("route").asText().equals("198.18.50.0/24 via 198.18.1.13 dev hr3") && e.path("ns").asText().equals("host")));
        assertTrue(has(got, e -> e.path("type").asText().equals("route") && e.path("action").asText().equals("del")));
        assertTrue(has(got, e -> e.path("type").asText().equals("link") && e.path("dev").asText().equals("hb2")
                && e.path("state").asText().equals("DOWN")));
        assertTrue(has(got, e -> e.path("type").asText().equals("link") && e.path("ns").asText().equals("ctr2")
                && !e.path("carrier").asBoolean()), "ctr2's eth0 lost carrier with its peer: " + got);
        assertTrue(has(got, e -> e.path("type").asText().equals("neigh") && e.path("action").asText().equals("del")
                && e.path("ns").asText().equals("ctr1") && e.path("dst").asText().equals("198.18.0.12")));
        assertTrue(has(got, e -> e.path("type").asText().equals("drops") && e.path("reason").asText().equals("BRIDGE_NO_PORT")
                && e.path("per_s").asDouble() >= 20), "no drop burst while hb2 was down: " + got);
        assertTrue(LiveDaemon.eventually(3000, () -> !d.control.events().hasSubscribers() || d.control.events().lostCounts().size() == 1));
        d.close();
        List<JsonNode> logged = Files.readAllLines(log).stream().map(EventStreamTest::json).toList();
        assertTrue(has(logged, e -> e.path("type").asText().equals("app") && e.path("action").asText().equals("start")
                && e.path("app").asText().equals("ctr1.ping-0")));
        assertTrue(has(logged, e -> e.path("type").asText().equals("app") && e.path("action").asText().equals("finish")
                && e.path("app").asText().equals("ctr1.stream-0") && e.path("outcome").asText().equals("ok")), logged.toString());
        assertTrue(has(logged, e -> e.path("type").asText().equals("app") && e.path("action").asText().equals("finish")
                && e.path("app").asText().equals("ctr1.ping-0")));
        assertTrue(has(logged, e -> e.path("type").asText().equals("link") && e.path("dev").asText().equals("hb2")));
        // Nobody listens any more: no namespace carries a listener (the data path pays a null check only).
        assertNull(d.topology().namespaces().isEmpty() ? null : d.topology().stack("host").listener());
    }

    static boolean has(List<JsonNode> l, Predicate<JsonNode> p) {
        return l.stream().anyMatch(p);
    }

    static JsonNode json(String line) {
        try {
            return new ObjectMapper().readTree(line);
        } catch (Exception e) {
            throw new AssertionError("not JSON: " + line, e);
        }
    }
}
