package dev.usnet.tools.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.Usnet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
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
        // Claim Linux sent nothing out of p2: usnet floods the unknown unicast there, so this must differ.
        try (PcapWriter w = new PcapWriter(f.resolve("expected/p2.pcap"))) {
            w.flush();
        }
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
}
