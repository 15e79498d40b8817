package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.app.AppResult;
import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Pinger;
import dev.usnet.tools.app.Spawner;
import dev.usnet.tools.app.TcpApp;
import dev.usnet.tools.app.UdpSender;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An app's {@code start:}: it (a TCP app's client) starts that long after the run's start, on its namespace's
 * scheduler, and its {@code duration:} counts from there; a start the run does not reach never comes.
 */
class AppStartTest {
    /** a -- b, 1 ms each way (RTT 2 ms); the apps are appended under a's {@code apps:} (line 11 onwards). */
    private static final String TWO = """
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
            """;

    private static final String APPS = TWO + """
                  - {kind: stream, server: b, port: 5001, duration: 50ms, start: 20ms}
                  - {kind: stream, server: b, port: 5002, duration: 50ms}
                  - {kind: rr, server: b, port: 5003, start: 10s}
                  - {kind: ping, to: 198.18.0.2, interval: 0.01, start: 100ms}
                  - {kind: udp-send, to: 198.18.0.2, port: 7000, rate: 1000, start: 250ms}
                  - {kind: spawn, rate: 1000, start: 1.5ms}
            """;

    private static <T extends App> T app(VirtualRun.RunResult r, int index, Class<T> kind) {
        return kind.cast(r.apps().get(index));
    }

    @Test
    void theKeyIsReadForEveryKindThatStartsAndDefaultsToTheRunsStart() {
        List<TopologySpec.App> apps = TopologyFile.parse("t.yaml", APPS).namespace("a").apps();
        assertEquals(List.of(20_000_000L, 0L, 10_000_000_000L, 100_000_000L, 250_000_000L, 1_500_000L),
                apps.stream().map(TopologySpec.App::startNanos).toList());
    }

    @Test
    void appsStartAtTheirOffsetInVirtualTime() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", APPS),
                new VirtualRun.Options(300_000_000L, null, null));

        // The delayed client connects at 20 ms: its handshake is up one round trip (2 ms) later, and its 50 ms
        // duration runs from its own start.
        TcpApp late = app(r, 0, TcpApp.class);
        assertEquals(20_000_000L, late.startNanos());
        AppResult c = late.client().result();
        assertEquals(22_000_000L, c.startNanos(), c.format());
        assertEquals(50_000_000L, c.durationNanos(), c.format());
        assertTrue(c.outcome().ok(), c.format());
        // Its neighbour without start: connects at once, up after the ARP exchange and the handshake (2 round trips);
        // the delayed one found the neighbour resolved.
        AppResult first = app(r, 1, TcpApp.class).client().result();
        assertEquals(4_000_000L, first.startNanos(), first.format());

        // A start after the run's end never comes: the client never connected, and nothing else broke.
        TcpApp never = app(r, 2, TcpApp.class);
        assertEquals(0, never.startNanos());
        assertFalse(never.outcome().ok());
        assertTrue(never.outcome().reason().startsWith("never connected"), never.outcome().reason());

        // A ping every 10 ms from 100 ms to 300 ms: 21 echoes, not 31.
        assertEquals(21, app(r, 3, Pinger.class).sent());
        // 1000 datagrams a second from 250 ms: 51 by 300 ms (one at its start, then one per ms), not 301.
        assertEquals(51, app(r, 4, UdpSender.class).sent());
        // 1000 forks a second from 1.5 ms: 299 by 300 ms.
        assertEquals(299, app(r, 5, Spawner.class).spawned());
    }

    @Test
    void aBadStartNamesItsLineAndKey() {
        String e = onlyError(TWO + "      - {kind: stream, server: b, start: 5}\n");
        assertTrue(e.startsWith("t.yaml:11: namespaces.a.apps[0].start: '5' needs a unit"), e);
        e = onlyError(TWO + "      - kind: ping\n        to: 198.18.0.2\n        start: soon\n");
        assertTrue(e.startsWith("t.yaml:13: namespaces.a.apps[0].start: "), e);
        e = onlyError(TWO + "      - {kind: udp-send, to: 198.18.0.2, port: 9, start: -1ms}\n");
        assertTrue(e.startsWith("t.yaml:11: namespaces.a.apps[0].start: "), e);
        // A sink listens from the run's start, before every sender: it has no start.
        e = onlyError(TWO + "      - {kind: udp-sink, port: 9, start: 1ms}\n");
        assertTrue(e.startsWith("t.yaml:11: namespaces.a.apps[0].start: "), e);
    }
}
