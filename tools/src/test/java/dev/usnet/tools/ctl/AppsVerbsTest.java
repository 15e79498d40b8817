package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet ctl apps} while a TCP app runs: what it has moved so far and its rate, not its ends' missing result;
 * and {@code usnet ctl ss} showing its connection as {@code ss -tin} would.
 */
class AppsVerbsTest {
    private static String apps(LiveDaemon d) {
        try {
            return d.ctl(null, "apps").toString();
        } catch (Exception e) {
            return e.toString();
        }
    }

    @Test
    void aRunningStreamShowsItsBytesAndRateSoFar(@TempDir Path dir) throws Exception {
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology("- {kind: stream, server: ctr3, port: 5001, bytes: 3g}\n",
                ""), dir)) {
            assertTrue(LiveDaemon.eventually(10_000, () -> {
                try {
                    return d.app("ctr1.stream-0", "bytes") > 100_000;
                } catch (Exception e) {
                    return false;
                }
            }), () -> "the stream moved 100 kB: " + apps(d));
            JsonNode r = d.ctl(null, "apps");
            JsonNode app = r.path("data").get(0);
            assertEquals("running", app.path("status").asText());
            assertEquals("pending", app.path("outcome").asText());
            assertTrue(app.path("elapsed_s").asDouble() > 0, app.toString());
            assertTrue(app.path("mbit_s_so_far").asDouble() > 0, app.toString());
            String text = r.path("text").asText();
            assertTrue(text.matches("(?s)ctr1\\.stream-0 \\[running, pending] running for [0-9.]+ s: [0-9]+ bytes received so far"
                    + " \\(client [0-9]+, server [0-9]+\\), [0-9.]+ Mbit/s so far.*"), text);
            assertFalse(text.contains("no result") || text.contains("FAILED"), text);

            // The same connection as ss -tin shows it, from both ends.
            JsonNode ss = d.ctl(null, "ss", "-tin");
            String sst = ss.path("text").asText();
            assertTrue(sst.matches("(?s)Netns +State +Recv-Q +Send-Q +Local Address:Port +Peer Address:Port\n"
                    + "ctr1 +ESTAB +[0-9]+ +[0-9]+ +198\\.18\\.0\\.11:[0-9]+ +198\\.18\\.1\\.13:5001\n\t .*cwnd:[0-9]+.*"), sst);
            assertTrue(sst.contains("198.18.1.13:5001      198.18.0.11:"), sst);
            JsonNode client = ss.path("data").get(0);
            assertEquals("ctr1", client.path("ns").asText());
            assertTrue(client.path("bytes_acked").asLong() > 0, client.toString());
            // -n NS: that namespace only (the stream's server closed its listener once it had accepted).
            JsonNode server = d.ok("ctr3", "ss", "-a");
            assertEquals(1, server.size(), server.toString());
            assertEquals("ESTAB", server.get(0).path("state").asText());
            assertEquals("198.18.1.13:5001", server.get(0).path("local").asText());
            assertTrue(d.error(null, "ss", "-x").contains("unknown option -x"));
        }
    }
}
