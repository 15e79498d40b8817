package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.HttpGet;
import dev.usnet.tools.app.HttpServer;
import dev.usnet.tools.run.VirtualRun;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code kind: http-get} fetches from {@code kind: http-server}, and the answer names where the server saw it from. */
class HttpAppsTest {
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    netem: {delay: 1ms}
                    peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24], netem: {delay: 1ms}}
                apps:
                  - {kind: http-get, to: 198.18.0.2, port: 80, count: 3, start: 100ms}
              b:
                apps:
                  - {kind: http-server, port: 80}
            """;

    @Test
    void eachFetchIsAnsweredAndTheAnswerNamesTheClientsAddressAndPort() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", FILE), new VirtualRun.Options(2_000_000_000L, null, null));
        HttpGet.Client get = (HttpGet.Client) r.apps().get(0);
        HttpServer.Server server = (HttpServer.Server) r.apps().get(1);
        assertEquals("ok", r.results().apps().get(0).get("outcome"), get.summary());
        assertEquals(3, server.served());
        List<String> seen = get.seenAs();
        assertEquals(3, seen.size(), get.summary());
        for (String s : seen) {
            assertTrue(s.startsWith("198.18.0.1:"), s);
        }
        // One connection per fetch: three different ephemeral ports, the last being what the server saw last.
        assertEquals(3, seen.stream().distinct().count(), seen.toString());
        assertEquals(seen.get(2), server.lastClient());
        Map<String, Object> app = r.results().apps().get(0);
        assertEquals("http-get", app.get("kind"));
        assertEquals(seen, app.get("seen_as"));
        assertEquals(3L, ((Number) app.get("ops")).longValue());
    }

    @Test
    void aFetchWithNoServerFailsAndSaysWhy() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", FILE.replace("port: 80, count", "port: 81, count")),
                new VirtualRun.Options(2_000_000_000L, null, null));
        HttpGet.Client get = (HttpGet.Client) r.apps().get(0);
        // b answers the SYN to a closed port with a reset: no answer, and the run's first fetch is where it stopped.
        assertTrue(get.outcome().reason().startsWith("fetch 1 of 3: no answer"), get.outcome().reason());
        assertEquals("no request answered on port 80", r.apps().get(1).outcome().reason());
    }
}
