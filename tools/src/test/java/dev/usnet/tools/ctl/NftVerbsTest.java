package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet ctl nft ...}: rules added, listed and deleted in a running daemon, checked by the traffic they stop. */
class NftVerbsTest {
    @TempDir
    static Path dir;
    static LiveDaemon d;

    @BeforeAll
    static void start() throws Exception {
        d = LiveDaemon.start(LiveDaemon.topology("""
                - {kind: ping, to: 198.18.1.13, interval: 0.01}
                """, ""), dir);
        assertTrue(flowing("ctr1.ping-0"), "pings answered");
    }

    @AfterAll
    static void stop() {
        if (d != null) {
            d.close();
        }
    }

    /** The app's replies keep growing over the next seconds. */
    static boolean flowing(String app) throws Exception {
        long before = d.app(app, "ops");
        return LiveDaemon.eventually(3000, () -> d.app(app) > before + 2);
    }

    /** The app's replies stay where they are for {@code ms} (after what was in flight settled). */
    static boolean stalled(String app, long ms) throws Exception {
        Thread.sleep(300);
        long before = d.app(app, "ops");
        Thread.sleep(ms);
        return d.app(app, "ops") == before;
    }

    @Test
    void aForwardRuleAddedByCtlStopsPingsCountsThemAndDeletingItHeals() throws Exception {
        d.ok("host", "nft", "add", "table", "ip", "t");
        d.ok("host", "nft", "add", "chain", "ip", "t", "f", "{", "type", "filter", "hook", "forward", "priority", "0", ";",
                "policy", "accept", ";", "}");
        d.ok("host", "nft", "add", "rule", "ip", "t", "f", "ip", "daddr", "198.18.1.13", "icmp", "type", "echo-request",
                "counter", "drop");
        assertTrue(stalled("ctr1.ping-0", 400), "pings to ctr3 dropped at the host's forward hook");
        String listed = d.text("host", "nft", "-a", "list", "ruleset");
        Matcher m = Pattern.compile("\t\tip daddr 198\\.18\\.1\\.13 icmp type echo-request counter packets (\\d+) bytes (\\d+)"
                + " drop # handle 2").matcher(listed);
        assertTrue(m.find(), listed);
        long packets = Long.parseLong(m.group(1));
        assertTrue(packets > 5, listed);
        assertEquals(packets * 84, Long.parseLong(m.group(2)), "84-byte echo requests");
        assertTrue(listed.startsWith("table ip t { # handle 1\n\tchain f { # handle 1\n"
                + "\t\ttype filter hook forward priority filter; policy accept;\n"), listed);
        d.ok("host", "nft", "delete", "rule", "ip", "t", "f", "handle", "2");
        assertTrue(flowing("ctr1.ping-0"), "pings flow again");
        assertEquals("table ip t {\n\tchain f {\n\t\ttype filter hook forward priority filter; policy accept;\n\t}\n}",
                d.text("host", "nft", "list", "table", "ip", "t"));
        d.ok("host", "nft", "flush", "ruleset");
        assertEquals("", d.text("host", "nft", "list", "ruleset"));
    }

    @Test
    void aMistakeIsShownWithItsPlaceAndChangesNothing() throws Exception {
        String e = d.error("ctr2", "nft", "add", "table", "ip", "u", ";", "add", "rule", "ip", "u", "c", "ct", "state",
                "established", "acept");
        assertTrue(e.startsWith("nft: line 1, column 55: expected a match or statement"), e);
        assertTrue(e.contains("after \"ct state established\", found \"acept\"\n"
                + "add table ip u ; add rule ip u c ct state established acept\n"
                + " ".repeat(54) + "^"), e);
        assertEquals("", d.text("ctr2", "nft", "list", "ruleset"), "the table of the refused batch was not added");
    }

    @Test
    void aRulesetFileAppliesAsOneTransaction() throws Exception {
        Path f = dir.resolve("ctr3.nft");
        Files.writeString(f, """
                flush ruleset
                table ip filter {
                    chain input {
                        type filter hook input priority filter; policy accept;
                        icmp type echo-request counter accept
                    }
                }
                """);
        d.ok("ctr3", "nft", "-f", f.toString());
        assertTrue(d.text("ctr3", "nft", "list", "ruleset").contains("\t\ticmp type echo-request counter packets "),
                d.text("ctr3", "nft", "list", "ruleset"));
        Files.writeString(f, "table ip filter {\n    chain input {\n        udp dport 53 acept\n    }\n}\n");
        String e = d.error("ctr3", "nft", "-f", f.toString());
        assertTrue(e.startsWith("nft: " + f + ": line 3, column 22: expected"), e);
    }
}
