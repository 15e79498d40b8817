package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.stack.NetStack;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet ctl conntrack}: the table of a namespace that tracks the pings it forwards. */
class ConntrackVerbsTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;
    static ConntrackCore core;

    @BeforeAll
    static void start() throws Exception {
        d = LiveDaemon.start(LiveDaemon.topology("", """
                - {kind: ping, to: 198.18.0.11, interval: 0.01}
                """), dir);
        NetStack host = d.topology().stack("host");
        // Until the namespace builds it, tracking is installed here by hand, on the namespace's thread.
        core = d.topology().onLoop("host", () -> {
            ConntrackCore c = new ConntrackCore(host.ipv4());
            host.ipv4().netfilter().install(c, null);
            c.get();
            return c;
        });
        assertTrue(LiveDaemon.eventually(5000, () -> {
            try {
                return d.text("host", "conntrack", "-C").equals("1");
            } catch (Exception e) {
                return false;
            }
        }), "the forwarded pings are tracked");
    }

    /** Waits for the pings' entry (another test may just have flushed it). */
    static void tracked() throws Exception {
        assertTrue(LiveDaemon.eventually(3000, () -> {
            try {
                return d.text("host", "conntrack", "-C").equals("1");
            } catch (Exception e) {
                return false;
            }
        }), "the forwarded pings are tracked");
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    @Test
    void listShowsTheEchoConnectionAsConntrackDoes() throws Exception {
        tracked();
        JsonNode l = d.ok("host", "conntrack", "-L", "-p", "icmp", "-s", "198.18.1.13");
        assertEquals(1, l.size(), l.toString());
        JsonNode e = l.get(0);
        assertEquals(1, e.path("proto").asInt());
        assertEquals("198.18.1.13", e.path("original").path("src").asText());
        assertEquals("198.18.0.11", e.path("original").path("dst").asText());
        assertEquals(8, e.path("original").path("type").asInt());
        assertEquals(0, e.path("reply").path("type").asInt());
        assertTrue(e.path("timeout").asInt() > 25 && e.path("timeout").asInt() <= 30, e.toString());
        String line = d.text("host", "conntrack", "-L");
        assertTrue(line.matches("icmp     1 \\d+ src=198\\.18\\.1\\.13 dst=198\\.18\\.0\\.11 type=8 code=0 id=\\d+ "
                + "src=198\\.18\\.0\\.11 dst=198\\.18\\.1\\.13 type=0 code=0 id=\\d+ mark=0 use=1"), line);
        assertEquals(0, d.ok("host", "conntrack", "-L", "-p", "tcp").size());
        assertEquals(0, d.ok("host", "conntrack", "-L", "-d", "198.18.0.12").size());
    }

    @Test
    void statsCountAndErrors() throws Exception {
        JsonNode s = d.ok("host", "conntrack", "-S");
        assertEquals(0, s.path("drop").asLong());
        assertTrue(s.has("early_drop") && s.has("chaintoolong"), s.toString());
        assertTrue(d.text("host", "conntrack", "-S").startsWith("cpu=0   \tfound=0 invalid="));
        // Every namespace has connection tracking, idle until a rule asks: an untouched one lists nothing.
        assertEquals("", d.text("ctr1", "conntrack", "-L"));
        assertEquals("0", d.text("ctr1", "conntrack", "-C"));
        assertTrue(d.error("host", "conntrack", "-L", "--dport", "80").contains("need -p"));
        assertTrue(d.error("host", "conntrack", "-L", "-s", "nowhere").contains("'nowhere' is not an IPv4 address"));
        assertTrue(d.error("host", "conntrack", "-X").contains("unknown word '-X'"));
    }

    @Test
    void deleteAndFlushEmptyTheTableUntilThePingsComeBack() throws Exception {
        String t = d.text("host", "conntrack", "-D", "-p", "icmp");
        assertTrue(t.endsWith("flow entries have been deleted."), t);
        assertTrue(t.startsWith("icmp     1 ") || t.startsWith("0 flow"), t);
        assertEquals("connection tracking table has been emptied.", d.text("host", "conntrack", "-F"));
        // The next ping starts a new entry.
        tracked();
    }
}
