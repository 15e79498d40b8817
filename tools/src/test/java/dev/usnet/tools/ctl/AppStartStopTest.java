package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet ctl -n NS app start KIND KEY VALUE ...} and {@code app stop NAME} on a running daemon: apps made from a
 * topology file's app keys given as words, listed by {@code apps} after the file's with their live counters, status
 * and outcome; bad keys refused as the file reader refuses them.
 */
class AppStartStopTest {
    private static JsonNode app(LiveDaemon d, String name) {
        try {
            for (JsonNode a : d.ok(null, "apps")) {
                if (a.path("name").asText().equals(name)) {
                    return a;
                }
            }
        } catch (Exception e) {
            return null;
        }
        return null;
    }

    @Test
    void appsStartedLiveRunShowTheirCountersAndStopOnRequest(@TempDir Path dir) throws Exception {
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology("- {kind: ping, to: 198.18.0.12, interval: 0.5}\n", ""),
                dir)) {
            // ctr1's file ping is ctr1.ping-0; the one started here comes after it.
            assertEquals("started ctr1.ping-1: ctr1: ping 198.18.1.13",
                    d.text("ctr1", "app", "start", "ping", "to", "198.18.1.13", "interval", "0.02"));
            assertTrue(LiveDaemon.eventually(10_000, () -> {
                JsonNode a = app(d, "ctr1.ping-1");
                return a != null && a.path("ops").asLong() >= 5;
            }), () -> "five echoes answered: " + app(d, "ctr1.ping-1"));
            JsonNode ping = app(d, "ctr1.ping-1");
            assertEquals("running", ping.path("status").asText());
            assertEquals("198.18.1.13", ping.path("to").asText());

            // A sink and a sender, across the bridge and the router.
            assertEquals("started ctr3.udp-sink-0: ctr3: udp-sink :5009", d.text("ctr3", "app", "start", "udp-sink",
                    "port", "5009"));
            d.ok("ctr1", "app", "start", "udp-send", "to", "198.18.1.13", "port", "5009", "rate", "200", "size", "100");
            assertTrue(LiveDaemon.eventually(10_000, () -> {
                JsonNode a = app(d, "ctr3.udp-sink-0");
                return a != null && a.path("bytes").asLong() >= 1000;
            }), () -> "the sink counted ten datagrams: " + app(d, "ctr3.udp-sink-0"));

            // A stream with a duration ends by itself, with its ends' results.
            assertEquals("started ctr1.stream-0: ctr1: stream to 198.18.1.13:5011 (server in ctr3)",
                    d.text("ctr1", "app", "start", "stream", "server", "ctr3", "port", "5011", "duration", "1s"));
            assertTrue(LiveDaemon.eventually(15_000, () -> {
                JsonNode a = app(d, "ctr1.stream-0");
                return a != null && a.path("status").asText().equals("done");
            }), () -> "the stream finished: " + app(d, "ctr1.stream-0"));
            JsonNode stream = app(d, "ctr1.stream-0");
            assertEquals("ok", stream.path("outcome").asText(), stream.toString());
            assertTrue(stream.path("bytes").asLong() > 0 && stream.path("mbit_s").asDouble() > 0, stream.toString());

            String stopped = d.text(null, "app", "stop", "ctr1.ping-1");
            assertTrue(stopped.startsWith("stopped ctr1.ping-1: ctr1: ping 198.18.1.13: ") && stopped.endsWith("; ok"), stopped);
            long sent = app(d, "ctr1.ping-1").path("sent").asLong();
            Thread.sleep(200);
            JsonNode after = app(d, "ctr1.ping-1");
            assertEquals("done", after.path("status").asText());
            assertEquals(sent, after.path("sent").asLong(), "nothing sent after the stop");
            assertEquals("app ctr1.ping-1 has already stopped", d.error(null, "app", "stop", "ctr1.ping-1"));
            assertEquals("app ctr1.ping-0 is the topology file's: it stops with the daemon (app stop stops apps started"
                    + " with app start)", d.error(null, "app", "stop", "ctr1.ping-0"));
            assertTrue(d.error(null, "app", "stop", "ctr9.ping-0").startsWith("no app 'ctr9.ping-0' (apps: ctr1.ping-0,"
                    + " ctr1.ping-1, ctr3.udp-sink-0, ctr1.udp-send-0, ctr1.stream-0)"));
        }
    }

    @Test
    void aVirtualTimeRunRefusesBothVerbsSoThatItStaysTheSameForItsSeed(@TempDir Path dir) {
        var spec = dev.usnet.tools.topology.TopologyFile.parse("ctltest.yaml", LiveDaemon.topology("", ""));
        try (var s = dev.usnet.tools.run.VirtualSession.start(spec, dir)) {
            ControlPlane cp = new ControlPlane(new ControlPlane.Host("ctltest", "virtual", s.topology(), s::apps, dir,
                    new NsLoops.Virtual(), java.util.List::of), new EventHub(s.topology(), true, s.nanoTime()));
            CtlException e = org.junit.jupiter.api.Assertions.assertThrows(CtlException.class,
                    () -> cp.handle("ctr1", java.util.List.of("app", "start", "ping", "to", "198.18.0.12")));
            assertEquals("app start: apps start and stop from the topology file in virtual time, so that a run is the"
                    + " same for the same file and seed", e.getMessage());
            assertEquals(0, s.apps().list().size());
        }
    }

    @Test
    void badKeysAreRefusedAsTheFileReaderRefusesThemNamingTheKey(@TempDir Path dir) throws Exception {
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology("", ""), dir)) {
            assertEquals("app start ping too 198.18.0.12: to: missing (required); too: unknown key (did you mean 'to'?);"
                    + " expected one of: interval, kind, size, start, to",
                    d.error("ctr1", "app", "start", "ping", "too", "198.18.0.12"));
            assertEquals("app start ping to: key 'to' has no value (KIND KEY VALUE ...)",
                    d.error("ctr1", "app", "start", "ping", "to"));
            assertTrue(d.error("ctr1", "app", "start", "stream", "server", "ctr3", "duration", "soon")
                    .startsWith("app start stream server ctr3 duration soon: duration: "));
            assertEquals(0, d.ok(null, "apps").size(), "nothing was started");
        }
    }
}
