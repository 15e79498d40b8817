package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.UdpEcho;
import dev.usnet.tools.app.UdpSender;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code kind: udp-echo} sends what a udp-send sends it back, and is read, checked and reported as every kind is. */
class UdpEchoTest {
    /** a sends 100 datagrams a second to b's echo port for 2 s over 1 ms each way. */
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
                  - {kind: udp-send, to: 198.18.0.2, port: 7, rate: 100, size: 200}
              b:
                apps:
                  - {kind: udp-echo, port: 7}
            """;

    @SuppressWarnings("unchecked")
    private static long mib(VirtualRun.RunResult r, String ns, String counter) {
        for (Map<String, Object> n : r.results().namespaces()) {
            if (n.get("name").equals(ns)) {
                return ((Number) ((Map<String, Object>) n.get("mib")).get(counter)).longValue();
            }
        }
        throw new AssertionError("no namespace " + ns);
    }

    @Test
    void everyDatagramThatArrivesGoesBackToItsSender() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", FILE), new VirtualRun.Options(2_000_000_000L, null, null));
        UdpSender send = (UdpSender) r.apps().get(0);
        UdpEcho.Server echo = (UdpEcho.Server) r.apps().get(1);
        // The echo starts before the sender and stops after it (with the sinks): it misses none of its datagrams.
        assertEquals(send.sent(), echo.received());
        assertEquals(echo.received(), echo.echoed());
        assertTrue(echo.echoed() >= 200, echo.summary());
        // The echoes came back to a: its UDP layer took in all that b sent, but those still on their way when the
        // sender closed its socket at its stop, which found no port.
        long back = mib(r, "a", "UdpInDatagrams");
        assertEquals(echo.echoed(), back + mib(r, "a", "UdpNoPorts"));
        assertTrue(back >= echo.echoed() - 1, back + " of " + echo.echoed());
        assertEquals(echo.echoed(), mib(r, "b", "UdpOutDatagrams"));
        // Results name it by its kind, with its counters, like any other app.
        Map<String, Object> app = r.results().apps().get(1);
        assertEquals("b.udp-echo-0", app.get("name"));
        assertEquals("udp-echo", app.get("kind"));
        assertEquals(":7", app.get("to"));
        assertEquals("ok", app.get("outcome"));
        assertEquals(echo.echoed(), ((Number) app.get("ops")).longValue());
        assertEquals(echo.echoed() * 200, ((Number) app.get("bytes")).longValue());
        assertEquals("b: udp-echo :7: " + echo.received() + " received, " + echo.echoed() + " echoed", echo.summary());
    }

    @Test
    void anEchoNobodySendsToFails() {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", FILE.replace("port: 7, rate", "port: 8, rate")),
                new VirtualRun.Options(500_000_000L, null, null));
        assertEquals("nothing received on port 7", r.apps().get(1).outcome().reason());
    }

    @Test
    void itsKeysArePortOnlyAndOnePortHasOneApp() {
        TopologyException e = assertThrows(TopologyException.class, () -> TopologyFile.parse("t.yaml",
                FILE.replace("{kind: udp-echo, port: 7}", "{kind: udp-echo, port: 7, rate: 5}")));
        assertTrue(e.getMessage().contains("t.yaml:14: namespaces.b.apps[0].rate:"), e.getMessage());
        e = assertThrows(TopologyException.class, () -> TopologyFile.parse("t.yaml",
                FILE.replace("{kind: udp-echo, port: 7}", "{kind: udp-echo, port: 7}\n      - {kind: udp-sink, port: 7}")));
        assertTrue(e.getMessage().contains("t.yaml:15: namespaces.b.apps[1].port: UDP port 7 already has a udp-echo app in"
                + " namespace b (line 14)"), e.getMessage());
    }

    @Test
    void itStartsFromUsnetCtlAsFromTheFile() {
        TopologySpec.App a = TopologyFile.readAppWords(List.of("udp-echo", "port", "9"));
        assertEquals("udp-echo", a.kind());
        assertEquals(9, a.udpPort());
        assertFalse(a instanceof TopologySpec.UdpSink);
    }
}
