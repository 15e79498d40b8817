package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.app.AppResult;
import dev.usnet.tools.app.App;
import dev.usnet.tools.run.VirtualRun;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What the app API says of an app's end, without its class: a TCP app ends by itself, its completion yielding its
 * client's result once the client is done (or stopped); a ping, UDP sender or spawner runs until the run stops it and
 * has none.
 */
class AppCompletionTest {
    private static final String APPS = """
            namespaces:
              b: {}
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    netem: {delay: 1ms}
                    peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24], netem: {delay: 1ms}}
                apps:
                  - {kind: stream, server: b, port: 5001, duration: 50ms}
                  - {kind: burst, server: b, port: 5002, burst_size: 16k, compute: 1ms, count: 3}
                  - {kind: rr, server: b, port: 5003, start: 10s}
                  - {kind: ping, to: 198.18.0.2, interval: 0.01}
                  - {kind: udp-send, to: 198.18.0.2, port: 7000, rate: 1000}
                  - {kind: spawn, rate: 1000}
            """;

    @Test
    void aTcpAppEndsByItselfAndItsCompletionIsItsClientsResult() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", APPS),
                new VirtualRun.Options(300_000_000L, null, null));
        List<App> apps = r.apps();
        assertEquals(List.of("stream", "burst", "rr", "ping", "udp-send", "spawn"), apps.stream().map(App::kind).toList());
        for (App a : apps.subList(0, 2)) {
            assertTrue(a.endsByItself(), a.label());
            assertTrue(a.completed(), a.label() + " finished well within the run");
            CompletableFuture<?> done = a.completion().toCompletableFuture();
            assertTrue(done.isDone() && !done.isCompletedExceptionally(), a.label());
            AppResult result = (AppResult) done.join();
            assertTrue(result.outcome().ok(), result.format());
            assertTrue(a.counters().bytes() > 0, a.label() + " moved bytes");
        }
        // The client's result is what the completion yields, the same object.
        assertSame(((dev.usnet.tools.app.TcpApp) apps.get(0)).client().result(), apps.get(0).completion()
                .toCompletableFuture().join());
        // One whose start the run never reached would have ended by itself; the run's stop completed it, not ok.
        App never = apps.get(2);
        assertTrue(never.endsByItself());
        assertTrue(never.completed(), never.label());
        AppResult cut = (AppResult) never.completion().toCompletableFuture().join();
        assertFalse(cut.outcome().ok(), cut.format());
        // What each measured of the machine goes under its own results key, without its class being known.
        assertEquals(java.util.Set.of("app_cpu_ns"), apps.get(0).measuredNanos().keySet());
        assertEquals(java.util.Set.of("spawn_ns"), apps.get(5).measuredNanos().keySet());
        assertTrue(apps.get(5).measuredNanos().get("spawn_ns") > 0, "the spawner forked children");
        assertEquals(java.util.Map.of(), apps.get(3).measuredNanos());
        for (App a : apps.subList(3, apps.size())) {
            assertFalse(a.endsByItself(), a.label());
            assertNull(a.completion(), a.label());
            assertFalse(a.completed(), a.label() + " ran until the run stopped it");
        }
    }
}
