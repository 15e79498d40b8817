package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Capture files of {@code usnet run}: light traffic is readable while the run goes on, like {@code tcpdump -U}
 * (a slow ping's frames are in the file within a second of crossing the device); a file that cannot be
 * written is refused with the reason.
 */
class CaptureFileTest {

    private static final String SLOW_PING = """
            version: 1
            name: slow-ping
            namespaces:
              rp-a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer: {namespace: rp-b, name: eth0, addresses: [198.18.0.2/24]}
                apps:
                  - kind: ping
                    to: 198.18.0.2
                    interval: 0.3
              rp-b:
                captures:
                  - device: eth0
                    direction: inout
                    file: slow.pcap
            """;

    @Test
    void aSlowPingsFramesAreInTheCaptureWithinASecondWhileTheRunGoesOn(@TempDir Path tmp) throws Exception {
        Path topo = Files.writeString(tmp.resolve("slow-ping.yaml"), SLOW_PING);
        Path out = tmp.resolve("out");
        Path pcap = out.resolve("slow.pcap");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int[] code = {-1};
        String[] args = {"run", "--duration", "4", "--warm-up-frames", "0", "--out", out.toString(), topo.toString()};
        Thread runner = new Thread(() -> code[0] = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true)));
        runner.start();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!so.toString().contains("usnet: ready") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(so.toString().contains("usnet: ready"), so + "" + se);
        List<Long> ages = new ArrayList<>();
        int seen = 0;
        // Read at 200 ms steps for 1.8 s of the 4 s run: the newest frame in the file is never older than
        // a ping interval (300 ms) plus the writer's flush delay; with block buffering the file stays empty.
        for (int i = 0; i < 9; i++) {
            Thread.sleep(200);
            assertTrue(runner.isAlive(), "still running");
            List<PcapRecord> recs = PcapReader.readComplete(pcap);
            long nowNanos = System.currentTimeMillis() * 1_000_000L;
            if (i >= 2) {
                assertTrue(!recs.isEmpty(), "frames in the capture " + (i + 1) * 200 + " ms after ready");
                long age = (nowNanos - recs.get(recs.size() - 1).timestampNanos()) / 1_000_000L;
                ages.add(age);
            }
            seen = recs.size();
        }
        assertTrue(ages.stream().allMatch(a -> a < 1000), "age of the newest frame at each read (ms): " + ages);
        assertTrue(seen >= 8, "about 6 echo requests and their replies in 1.8 s: " + seen);
        tcpdumpSeesThem(pcap, seen);
        runner.join(15_000);
        assertEquals(0, code[0], so + "" + se);
        assertTrue(PcapReader.readAll(pcap).size() >= seen);
    }

    /** tcpdump reads the file as it is being written, when it is installed. */
    private static void tcpdumpSeesThem(Path pcap, int atLeast) throws Exception {
        Path tcpdump = Path.of("/usr/bin/tcpdump");
        if (!Files.isExecutable(tcpdump)) {
            tcpdump = Path.of("/usr/sbin/tcpdump");
        }
        if (!Files.isExecutable(tcpdump)) {
            return;
        }
        Process p = new ProcessBuilder(tcpdump.toString(), "-nn", "-r", pcap.toString()).redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        long frames = text.lines().filter(l -> l.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d+ .*")).count();
        assertTrue(frames >= atLeast && text.contains("ICMP echo reply"), "tcpdump -r while the run goes on, "
                + atLeast + " frames read before:\n" + text);
    }

    @Test
    void aCaptureThatCannotBeWrittenSaysWhy(@TempDir Path tmp) throws Exception {
        Path topo = Files.writeString(tmp.resolve("slow-ping.yaml"), SLOW_PING);
        Path out = Files.createDirectories(tmp.resolve("out"));
        Files.createDirectory(out.resolve("slow.pcap"));
        RunCommandTest.Result r = RunCommandTest.run("run", "--duration", "1", "--warm-up-frames", "0", "--out",
                out.toString(), topo.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("cannot write capture " + out.resolve("slow.pcap") + ": Is a directory"), r.err());

        Files.delete(out.resolve("slow.pcap"));
        Path topo2 = Files.writeString(tmp.resolve("nested.yaml"), SLOW_PING.replace("file: slow.pcap", "file: sub/slow.pcap"));
        Files.writeString(out.resolve("sub"), "a file where a directory should be");
        r = RunCommandTest.run("run", "--duration", "1", "--warm-up-frames", "0", "--out", out.toString(), topo2.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("cannot write capture " + out.resolve("sub/slow.pcap") + ": File exists ("
                + out.resolve("sub") + ")"), r.err());
    }
}
