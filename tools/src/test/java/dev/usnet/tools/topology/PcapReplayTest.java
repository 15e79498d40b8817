package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kind: replay}: a pcap's frames sent into the peer at the file's relative times (exactly, in virtual time),
 * scaled by {@code rate} and repeated {@code loop} times; and what is wrong with such a device or with a capture
 * check, reported at its line and key by {@code --check}.
 */
class PcapReplayTest {
    /** A UDP frame from the replay side to 198.18.30.1 carrying {@code tag}. */
    private static byte[] frame(int tag) {
        byte[] f = new byte[14 + 20 + 8 + 1];
        f[0] = 2;
        f[5] = 1;
        f[6] = 2;
        f[11] = 2;
        f[12] = 0x08;
        f[14] = 0x45;
        f[17] = 29;
        f[22] = 64;
        f[23] = 17;
        f[26] = (byte) 198;
        f[27] = 18;
        f[28] = 30;
        f[29] = 2;
        f[30] = (byte) 198;
        f[31] = 18;
        f[32] = 30;
        f[33] = 1;
        f[42] = (byte) tag;
        return f;
    }

    /** Writes frames 1..n at {@code timesNanos} (absolute, as a capture has them). */
    private static Path pcap(Path dir, String name, long... timesNanos) throws IOException {
        Path p = dir.resolve(name);
        try (PcapWriter w = new PcapWriter(p)) {
            for (int i = 0; i < timesNanos.length; i++) {
                byte[] f = frame(i + 1);
                w.write(timesNanos[i], f, 0, f.length, f.length);
            }
        }
        return p;
    }

    private static String topology(Path in, String replayKeys) {
        return """
                namespaces:
                  src:
                    devices:
                      - name: inj0
                        kind: replay
                        file: %s
                %s
                        peer: {namespace: dut, name: eth0, mac: 02:00:00:00:00:01, addresses: [198.18.30.1/24]}
                  dut:
                    captures:
                      - {device: eth0, direction: in, file: eth0-in.pcap}
                """.formatted(in, replayKeys);
    }

    private static List<PcapRecord> run(Path dir, String yaml, String clock, String duration) throws IOException {
        Path f = dir.resolve("t.yaml");
        Files.writeString(f, yaml);
        Path out = dir.resolve("out-" + clock);
        Result r = RunCommandTest.run("run", "--clock", clock, "--duration", duration, "--out", out.toString(), f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        return PcapReader.readAll(out.resolve("eth0-in.pcap"));
    }

    @Test
    void framesArriveAtTheFilesRelativeTimesScaledAndLooped(@TempDir Path dir) throws IOException {
        long epoch = 1_700_000_000_000_000_000L;
        Path in = pcap(dir, "in.pcap", epoch, epoch + 1_000_000, epoch + 2_500_000);
        List<PcapRecord> got = run(dir, topology(in, "        loop: 2\n        rate: 2"), "virtual", "0.01");
        // Rate 2 halves the gaps; the second pass starts when the first one's last frame leaves. Virtual time starts
        // at 0, so the capture's times are the offsets themselves.
        long[] want = {0, 500_000, 1_250_000, 1_250_000, 1_750_000, 2_500_000};
        int[] tags = {1, 2, 3, 1, 2, 3};
        assertEquals(want.length, got.size());
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got.get(i).timestampNanos(), "frame " + (i + 1));
            assertEquals(tags[i], got.get(i).data()[42], "frame " + (i + 1));
        }
    }

    @Test
    void loopZeroRepeatsUntilTheRunEnds(@TempDir Path dir) throws IOException {
        long epoch = 5_000_000_000L;
        Path in = pcap(dir, "in.pcap", epoch, epoch + 10_000_000);
        // Passes of 10 ms, each starting with the last frame of the one before: frames at 0, 10, 10, 20, 20, ... ms
        // for the 0.1 s the run's apps run.
        List<PcapRecord> got = run(dir, topology(in, "        loop: 0"), "virtual", "0.1");
        assertEquals(21, got.size(), "frames at 0, then two every 10 ms up to 100 ms: " + got.size());
        assertEquals(100_000_000, got.getLast().timestampNanos());
    }

    @Test
    void realTimeSendsEveryFrameInOrderNeverEarly(@TempDir Path dir) throws IOException {
        long epoch = 1_700_000_000_000_000_000L;
        Path in = pcap(dir, "in.pcap", epoch, epoch + 20_000_000, epoch + 40_000_000, epoch + 60_000_000);
        // Captured where the replay sends them (out of inj0), stamped as they leave: a receiver's stamps would add
        // the other namespace's own delays.
        String yaml = topology(in, "").replace("  dut:\n    captures:\n      - {device: eth0, direction: in, file: eth0-in.pcap}",
                "    captures:\n      - {device: inj0, direction: out, file: eth0-in.pcap}\n  dut: {}");
        // 1.5 s: on a cold JVM the process's own set-up (the event loops dropping their capabilities) can hold a loop
        // for a second after the start; the frames then leave late, but all before the stop.
        List<PcapRecord> got = run(dir, yaml, "real", "1.5");
        assertEquals(4, got.size());
        for (int i = 0; i < 4; i++) {
            assertEquals(i + 1, got.get(i).data()[42]);
        }
        // The schedule counts from the first frame's departure, on timers that never fire early: however late a
        // loaded machine makes them, no frame leaves sooner after the first than the file says.
        for (int i = 1; i < 4; i++) {
            long gap = got.get(i).timestampNanos() - got.getFirst().timestampNanos();
            assertTrue(gap >= i * 20_000_000L, "frame " + (i + 1) + " " + gap + " ns after the first");
        }
    }

    @Test
    void badReplaysAreErrorsAtTheirKey(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("nope.pcap");
        assertEquals("t.yaml:6: namespaces.src.devices[0].file: no such file " + missing
                        + " (a replay's file is relative to the topology file's directory)",
                TopologyErrors.onlyError(topology(missing, "")));
        // A pcap of raw IP (link type 101) cannot be sent into an Ethernet device.
        Path raw = dir.resolve("raw.pcap");
        ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(0xa1b2c3d4).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0).putInt(65535).putInt(101);
        Files.write(raw, h.array());
        assertEquals("t.yaml:6: namespaces.src.devices[0].file: cannot replay " + raw + ": link type 101 is not Ethernet (1)",
                TopologyErrors.onlyError(topology(raw, "")));
        Path in = pcap(dir, "in.pcap", 0, 1000);
        assertEquals("t.yaml:7: namespaces.src.devices[0].rate: expected a number 0.001..1000, got 0",
                TopologyErrors.onlyError(topology(in, "        rate: 0")));
        assertEquals("t.yaml:7: namespaces.src.devices[0].loop: expected an integer 0..2147483647, got -1",
                TopologyErrors.onlyError(topology(in, "        loop: -1")));
        Path one = pcap(dir, "one.pcap", 0);
        assertTrue(TopologyErrors.onlyError(topology(one, "        loop: 0")).startsWith(
                "t.yaml:7: namespaces.src.devices[0].loop: loop: 0 repeats the file until the run ends, which needs"));
        assertEquals("t.yaml:7: namespaces.src.devices[0].addresses: a replay device only sends its file's frames and"
                        + " takes in what arrives; give the addresses to its peer",
                TopologyErrors.onlyError(topology(in, "        addresses: [198.18.30.9/24]")));
        assertEquals("t.yaml:7: namespaces.src.devices[0].master: 'master' applies to kind veth, not replay",
                TopologyErrors.onlyError(topology(in, "        master: br0")));
    }

    @Test
    void badCaptureChecksAreErrorsAtTheirKey(@TempDir Path dir) throws IOException {
        Path in = pcap(dir, "in.pcap", 0, 1000);
        String base = topology(in, "") + "expect:\n";
        assertEquals("t.yaml:13: expect[0].count.filter: column 10: expected a port number 0..65535, got 'http' in"
                        + " \"tcp port http\"",
                TopologyErrors.onlyError(base + "  - {capture: dut/eth0, count: {filter: \"tcp port http\", equals: 1}}\n"));
        assertEquals("t.yaml:13: expect[0].capture: no capture 'dut/eth1' (name one of the namespaces' captures: as NS/DEV"
                        + " or by its file; dut/eth0 (eth0-in.pcap))",
                TopologyErrors.onlyError(base + "  - {capture: dut/eth1, count: {filter: udp, min: 1}}\n"));
        assertEquals("t.yaml:13: expect[0].count: expected one of equals, min, max, got equals and max",
                TopologyErrors.onlyError(base + "  - {capture: dut/eth0, count: {filter: udp, equals: 1, max: 2}}\n"));
        assertEquals("t.yaml:13: expect[0]: a capture expectation has count: or matches:, not both",
                TopologyErrors.onlyError(base + "  - {capture: eth0-in.pcap, count: {filter: udp, min: 1}, matches: x}\n"));
        assertEquals("t.yaml:13: expect[0].matches: no such file " + dir.resolve("nope.pcap")
                        + " (the expected pcap is relative to the topology file's directory)",
                TopologyErrors.onlyError(base + "  - {capture: dut/eth0, matches: " + dir.resolve("nope.pcap") + "}\n"));
        assertEquals("t.yaml:13: expect[0].matches.mask[0]: expected ttl (the IP ID and header checksum of the topology's"
                        + " own packets are always left out), got \"id\"",
                TopologyErrors.onlyError(base + "  - {capture: dut/eth0, matches: {file: " + in + ", mask: [id]}}\n"));
    }

    @Test
    void captureChecksJudgeTheRun(@TempDir Path dir) throws IOException {
        Path in = pcap(dir, "in.pcap", 0, 1_000_000, 2_000_000);
        // The capture sees in what the replay sent: the same frames at the same relative times.
        String yaml = topology(in, "") + """
                expect:
                  - {capture: dut/eth0, count: {filter: "udp and dst host 198.18.30.1", equals: 3}}
                  - {capture: eth0-in.pcap, matches: {file: %s, timestamps: 0}}
                  - {capture: dut/eth0, count: {filter: tcp, min: 1}}
                """.formatted(in);
        Path f = dir.resolve("t.yaml");
        Files.writeString(f, yaml);
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.01", "--out", dir.resolve("o").toString(),
                "--results", dir.resolve("r.json").toString(), f.toString());
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("usnet: expect failed: " + f + ":15: capture dut/eth0 count \"tcp\" >= 1 (was 0)"), r.err());
        assertTrue(r.out().contains("usnet: 2 of 3 expectations held"), r.out());
        String json = Files.readString(dir.resolve("r.json"));
        assertTrue(json.contains("\"expectations\" : [ {\n    \"line\" : 13,\n    \"expect\" : \"capture dut/eth0 count \\\"udp and dst host"
                + " 198.18.30.1\\\" == 3\",\n    \"value\" : 3,\n    \"held\" : true\n  }"), json);
    }
}
