package dev.usnet.tools.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.Usnet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayErrorsTest {

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true));
        return new Result(code, so.toString(), se.toString());
    }

    private static Path fixture(Path dir, String json) throws IOException {
        Files.createDirectories(dir.resolve("in"));
        Files.createDirectories(dir.resolve("expected"));
        Files.writeString(dir.resolve("scenario.json"), json);
        return dir;
    }

    @Test
    void invalidScenarioNamesFileAndKeyWithExitCode2(@TempDir Path tmp) throws IOException {
        Path f = fixture(tmp.resolve("bad"), """
                {"name": "bad", "device": "router", "ports": [{"name": "r1", "mac": "02:00:00:00:00:zz"}]}
                """);
        Result r = run("replay", f.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code);
        assertTrue(r.err.contains("scenario.json"), r.err);
        assertTrue(r.err.contains("ports[0].mac"), r.err);

        Path g = fixture(tmp.resolve("bad2"), """
                {"device": "switch", "ports": [{"name": "p1", "mac": "02:00:00:00:00:01"}]}
                """);
        r = run("replay", g.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code);
        assertTrue(r.err.contains("'device'") && r.err.contains("bridge"), r.err);

        Path h = fixture(tmp.resolve("bad3"), """
                {"device": "router", "ports": [{"name": "r1", "mac": "02:00:00:00:00:01"}],
                 "router": {"sysctl": {"net.ipv4.ip_forwarding": 1}}}
                """);
        r = run("replay", h.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code);
        assertTrue(r.err.contains("router.sysctl") && r.err.contains("net.ipv4.ip_forwarding"), r.err);

        // A port's sysctl is a devinet knob of that port: a typo names the port's nearest one.
        Path k = fixture(tmp.resolve("bad4"), """
                {"device": "router", "ports": [{"name": "r1", "mac": "02:00:00:00:00:01", "sysctl": {"proxyarp": 1}}]}
                """);
        r = run("replay", k.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code);
        assertTrue(r.err.contains("ports.r1.sysctl: unknown knob 'net.ipv4.conf.r1.proxyarp' (did you mean"
                + " 'net.ipv4.conf.r1.proxy_arp'?)"), r.err);

        r = run("replay", tmp.resolve("nope").toString());
        assertEquals(Usnet.EXIT_USAGE, r.code);
    }

    @Test
    void aDifferenceIsReportedPerPortWithTheFrameDecodedAndExit1(@TempDir Path tmp) throws IOException {
        Path f = fixture(tmp.resolve("fx"), """
                {"name": "fx", "device": "bridge", "bridge": {"mac": "02:00:00:00:00:fe", "ageing_time_s": 300},
                 "ports": [{"name": "p1", "mac": "02:00:00:00:01:01"}, {"name": "p2", "mac": "02:00:00:00:01:02"}]}
                """);
        byte[] frame = dev.usnet.core.testing.Frames.raw(0x0200_0000_0a01L, 0x0200_0000_0b02L, 0x0800, 60);
        try (PcapWriter w = new PcapWriter(f.resolve("in/p1.pcap"))) {
            w.write(1_700_000_000_000_000_000L, frame, 0, frame.length, frame.length);
        }
        emptyPcap(f.resolve("in/p2.pcap"));
        emptyPcap(f.resolve("expected/p1.pcap"));
        // Claim Linux sent nothing out of p2: usnet floods the unknown unicast there, so this must differ.
        emptyPcap(f.resolve("expected/p2.pcap"));
        Result r = run("replay", f.toString(), "--out", tmp.resolve("out").toString(), "--expect");
        assertEquals(1, r.code, r.out + r.err);
        assertTrue(r.out.contains("fx/p1: ok (0 frames)"), r.out);
        assertTrue(r.out.contains("fx/p2: DIFFERS expected 0 frames, got 1"), r.out);
        assertTrue(r.out.contains("got:      02:00:00:00:0a:01 > 02:00:00:00:0b:02"), r.out);
        var written = dev.usnet.core.pcap.PcapReader.readAll(tmp.resolve("out/p2.pcap"));
        assertEquals(1, written.size());
        PcapRecord rec = written.get(0);
        assertTrue(java.util.Arrays.equals(frame, rec.data()));
        assertEquals(1_700_000_000_000_000_000L, rec.timestampNanos());
    }

    private static void emptyPcap(Path f) throws IOException {
        new PcapWriter(f).close();
    }

    private static final String TWO_PORT_BRIDGE = """
            {"name": "fx", "device": "bridge", "bridge": {"mac": "02:00:00:00:00:fe", "ageing_time_s": 300},
             "ports": [{"name": "p1", "mac": "02:00:00:00:01:01"}, {"name": "p2", "mac": "02:00:00:00:01:02"}]}
            """;

    /** A well-formed two-port fixture: one frame in on p1, the flood expected out of p2. */
    private static Path goodFixture(Path dir) throws IOException {
        Path f = fixture(dir, TWO_PORT_BRIDGE);
        byte[] frame = dev.usnet.core.testing.Frames.raw(0x0200_0000_0a01L, 0x0200_0000_0b02L, 0x0800, 60);
        for (String file : new String[] {"in/p1.pcap", "expected/p2.pcap"}) {
            try (PcapWriter w = new PcapWriter(f.resolve(file))) {
                w.write(1_700_000_000_000_000_000L, frame, 0, frame.length, frame.length);
            }
        }
        emptyPcap(f.resolve("in/p2.pcap"));
        emptyPcap(f.resolve("expected/p1.pcap"));
        return f;
    }
    @Test
    void aScenarioThatIsNotJsonSaysTheLineAndColumn(@TempDir Path tmp) throws IOException {
        // Cut short: the end of the input, line 3 column 1.
        Path f = fixture(tmp.resolve("short"), "{\"name\": \"x\",\n \"device\": \"router\"\n");
        Result r = run("replay", f.toString());
        assertUsageError(r, f.resolve("scenario.json") + ":3:1: not valid JSON: Unexpected end-of-input");
        // A stray character: where it is, line 2 column 12.
        Path g = fixture(tmp.resolve("stray"), "{\"name\": \"x\",\n \"device\": ;\"router\"}\n");
        r = run("replay", g.toString());
        assertUsageError(r, g.resolve("scenario.json") + ":2:12: not valid JSON: Unexpected character (';'");
    }

    private static Result expect(Path fixture, Path tmp) {
        return run("replay", fixture.toString(), "--out", tmp.resolve("out").toString(), "--expect");
    }

    private static void assertUsageError(Result r, String... parts) {
        assertEquals(Usnet.EXIT_USAGE, r.code, r.out + r.err);
        for (String p : parts) {
            assertTrue(r.err.contains(p), "'" + p + "' in: " + r.err);
        }
        assertFalse(r.err.contains("\tat "), "no stack trace: " + r.err);
        assertFalse(r.err.lines().count() > 1, "one line: " + r.err);
    }

    @Test
    void theWellFormedFixtureOfTheseTestsPasses(@TempDir Path tmp) throws IOException {
        Result r = expect(goodFixture(tmp.resolve("fx")), tmp);
        assertEquals(0, r.code, r.out + r.err);
        assertTrue(r.out.contains("fx/p2: ok (1 frames)"), r.out);
    }

    @Test
    void withoutOutAMatchingReplayLeavesNothingBehindAndAPlainOneSaysWhereItWrote(@TempDir Path tmp) throws IOException {
        Path f = goodFixture(tmp.resolve("fx"));
        Result r = run("replay", f.toString(), "--expect");
        assertEquals(0, r.code, r.out + r.err);
        assertTrue(r.out.contains("no captures written (every port matched; give --out DIR to keep them)"), r.out);
        assertFalse(r.out.contains("usnet-replay-"), r.out);
        r = run("replay", f.toString());
        assertEquals(0, r.code, r.out + r.err);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("wrote 2 port captures to (\\S+usnet-replay-\\S+) \\(a new"
                + " temporary directory, kept for you to read: delete it when done, or give --out DIR\\)").matcher(r.out);
        assertTrue(m.find(), r.out);
        Path dir = Path.of(m.group(1));
        assertTrue(Files.isRegularFile(dir.resolve("p2.pcap")));
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    @Test
    void aTruncatedExpectedPcapIsExit2NamingTheFileAndTheRecord(@TempDir Path tmp) throws IOException {
        Path f = goodFixture(tmp.resolve("fx"));
        Path p2 = f.resolve("expected/p2.pcap");
        byte[] whole = Files.readAllBytes(p2);
        Files.write(p2, java.util.Arrays.copyOf(whole, whole.length - 10));
        assertUsageError(expect(f, tmp), p2.toString(), "truncated", "offset 24", "50 of its 60 bytes");

        Files.write(p2, java.util.Arrays.copyOf(whole, 10));
        assertUsageError(expect(f, tmp), p2.toString(), "10 bytes, shorter than the 24-byte pcap header");
        assertFalse(Files.exists(tmp.resolve("out")), "nothing written for a broken fixture");
    }

    @Test
    void aTruncatedInputPcapIsExit2(@TempDir Path tmp) throws IOException {
        Path f = goodFixture(tmp.resolve("fx"));
        Path p1 = f.resolve("in/p1.pcap");
        byte[] whole = Files.readAllBytes(p1);
        Files.write(p1, java.util.Arrays.copyOf(whole, 24 + 7));
        assertUsageError(run("replay", f.toString(), "--out", tmp.resolve("out").toString()),
                p1.toString(), "record header at offset 24 has 7 of 16 bytes");
    }

    @Test
    void randomBytesAreABadMagicNotPcapng(@TempDir Path tmp) throws IOException {
        Path f = goodFixture(tmp.resolve("fx"));
        byte[] noise = new byte[200];
        new java.util.Random(7).nextBytes(noise);
        noise[0] = 0x12;
        noise[1] = 0x34;
        noise[2] = 0x56;
        noise[3] = 0x78;
        Path p1 = f.resolve("expected/p1.pcap");
        Files.write(p1, noise);
        assertUsageError(expect(f, tmp), p1.toString(), "bad magic 0x12345678 (not a pcap or pcapng file)");

        // A real pcapng section header is named as such.
        ByteBuffer shb = ByteBuffer.allocate(28).order(ByteOrder.LITTLE_ENDIAN);
        shb.putInt(0x0a0d0d0a).putInt(28).putInt(0x1a2b3c4d).putShort((short) 1).putShort((short) 0).putLong(-1).putInt(28);
        Files.write(p1, shb.array());
        assertUsageError(expect(f, tmp), p1.toString(), "a pcapng file", "editcap -F pcap");
    }

    @Test
    void aMissingDirectoryOrPortFileIsExit2NotAnEmptyPort(@TempDir Path tmp) throws IOException {
        Path f = goodFixture(tmp.resolve("fx"));
        Files.delete(f.resolve("expected/p1.pcap"));
        assertUsageError(expect(f, tmp), f.resolve("expected/p1.pcap").toString(), "missing", "port 'p1'");

        Files.delete(f.resolve("in/p2.pcap"));
        assertUsageError(run("replay", f.toString(), "--out", tmp.resolve("out").toString()),
                f.resolve("in/p2.pcap").toString(), "missing", "port 'p2'");

        Path g = goodFixture(tmp.resolve("g"));
        Files.delete(g.resolve("expected/p1.pcap"));
        Files.delete(g.resolve("expected/p2.pcap"));
        Files.delete(g.resolve("expected"));
        assertUsageError(expect(g, tmp), g.resolve("expected").toString(), "no such directory");
        // Without --expect, expected/ is not needed.
        assertEquals(0, run("replay", g.toString(), "--out", tmp.resolve("out2").toString()).code);

        for (String p : new String[] {"in/p1.pcap", "in/p2.pcap"}) {
            Files.delete(g.resolve(p));
        }
        Files.delete(g.resolve("in"));
        assertUsageError(run("replay", g.toString(), "--out", tmp.resolve("out3").toString()),
                g.resolve("in").toString(), "no such directory");
    }

    @Test
    void anOutputDirectoryThatCannotBeCreatedIsExit2WithTheReason(@TempDir Path tmp) throws IOException {
        Path f = goodFixture(tmp.resolve("fx"));
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        assertUsageError(run("replay", f.toString(), "--out", file.resolve("out").toString()),
                "cannot create", file.resolve("out").toString(), "Not a directory");
    }
}
