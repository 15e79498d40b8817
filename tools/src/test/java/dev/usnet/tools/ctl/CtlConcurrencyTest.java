package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many clients at once, and clients that never read: the daemon serves the others and its traffic goes on. */
class CtlConcurrencyTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;

    @BeforeAll
    static void start() {
        d = LiveDaemon.start(LiveDaemon.topology("- {kind: ping, to: 198.18.1.13, interval: 0.01}\n", ""), dir);
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    @Test
    void sixteenClientsAtOnceAllGetTheirAnswers() throws Exception {
        String routesBefore = d.ok("host", "route", "show").toString();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                int n = i;
                done.add(pool.submit(() -> {
                    int answered = 0;
                    try (CtlClient c = CtlClient.connect(d.socket)) {
                        String net = "198.18." + (100 + n) + ".0/24";
                        for (int k = 0; k < 10; k++) {
                            check(c.request("host", List.of("route", "add", net, "via", "198.18.1.13")));
                            check(c.request("host", List.of("link", "show", "hb1")));
                            JsonNode g = check(c.request("host", List.of("route", "get", "198.18." + (100 + n) + ".7")));
                            assertEquals("198.18.1.13", g.path("data").path("gateway").asText());
                            check(c.request(null, List.of("stats")));
                            check(c.request("host", List.of("route", "del", net)));
                            answered += 5;
                        }
                    }
                    return answered;
                }));
            }
            for (Future<Integer> f : done) {
                assertEquals(50, f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(routesBefore, d.ok("host", "route", "show").toString());
    }

    private static JsonNode check(JsonNode r) {
        assertTrue(r.path("ok").asBoolean(), r.toString());
        return r;
    }

    @Test
    void clientsThatNeverReadStallNothing() throws Exception {
        // One subscribes to events and never reads; one sends requests and never reads the replies; one only connects.
        SocketChannel eventsReader = SocketChannel.open(StandardProtocolFamily.UNIX);
        SocketChannel requester = SocketChannel.open(StandardProtocolFamily.UNIX);
        SocketChannel idle = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            eventsReader.connect(UnixDomainSocketAddress.of(d.socket));
            requester.connect(UnixDomainSocketAddress.of(d.socket));
            idle.connect(UnixDomainSocketAddress.of(d.socket));
            eventsReader.write(ByteBuffer.wrap("{\"usnet_ctl\":1,\"args\":[\"events\"]}\n".getBytes(StandardCharsets.UTF_8)));
            assertTrue(LiveDaemon.eventually(3000, () -> d.control.events().hasSubscribers()));
            // Far more event text than the socket and the connection's buffer hold.
            var host = d.topology().stack("host");
            String pad = "x".repeat(200);
            for (int i = 0; i < 20_000; i++) {
                d.control.events().emit(host, Map.of("type", "test", "i", i, "pad", pad));
            }
            requester.configureBlocking(false);
            byte[] req = "{\"usnet_ctl\":1,\"ns\":\"host\",\"args\":[\"sysctl\",\"-a\"]}\n".getBytes(StandardCharsets.UTF_8);
            long written = 0;
            for (int i = 0; i < 2000; i++) {
                written += requester.write(ByteBuffer.wrap(req));
            }
            assertTrue(written > 0);
            long t0 = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                assertEquals("1", d.ok("host", "sysctl", "net.ipv4.ip_forward").get(0).path("value").asText());
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 10_000, "20 requests of a well-behaved client took " + ms + " ms");
            long lost = d.control.events().lostCounts().stream().mapToLong(Long::longValue).sum();
            assertTrue(lost > 0, "the event stream of a client that does not read was buffered without bound");
            long ops = d.app("ctr1.ping-0", "ops");
            assertTrue(LiveDaemon.eventually(3000, () -> {
                try {
                    return d.app("ctr1.ping-0", "ops") > ops + 2;
                } catch (Exception e) {
                    return false;
                }
            }), "traffic stalled behind clients that do not read");
        } finally {
            eventsReader.close();
            requester.close();
            idle.close();
        }
        assertTrue(LiveDaemon.eventually(3000, () -> !d.control.events().hasSubscribers()),
                "the closed subscriber's listener stays installed");
        assertEquals(null, d.topology().stack("host").listener(), "a namespace keeps a listener with nobody listening");
    }
}
