package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet run --capture NS/DEV=-}: the capture is the process's standard output, a pcap and nothing else
 * (usnet's own lines go to standard error), so that {@code | tcpdump -r -} reads it. Run as its own process: the
 * capture writes file descriptor 1, which in this JVM belongs to the test runner.
 */
class CaptureToStdoutTest {
    private static final String TOPOLOGY = """
            version: 1
            name: stdout-capture
            namespaces:
              a:
                devices:
                  - {name: eth0, kind: veth, addresses: [198.18.7.1/24], peer: {namespace: b, name: eth0, addresses: [198.18.7.2/24]}}
                apps:
                  - {kind: ping, to: 198.18.7.2, interval: 0.1}
              b: {}
            """;

    @Test
    void standardOutputIsThePcapAndUsnetSpeaksOnStandardError(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("t.yaml"), TOPOLOGY);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                "dev.usnet.tools.Usnet", "run", "--clock", "virtual", "--duration", "1", "--out", dir.resolve("out").toString(),
                "--capture", "a/eth0:out=-", file.toString())
                .redirectError(dir.resolve("stderr.txt").toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String err = Files.readString(dir.resolve("stderr.txt"), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), err);
        List<PcapRecord> frames = new ArrayList<>();
        try (PcapReader r = new PcapReader("stdout", new ByteArrayInputStream(out))) {
            PcapRecord f;
            while ((f = r.next()) != null) {
                frames.add(f);
            }
        }
        // What a/eth0 sent, and only that, is on stdout: ARP, and an echo request every 0.1 s from 0 to 1.0 s inclusive
        // (virtual time, deterministic).
        long echoes = frames.stream().filter(f -> f.data().length > 34 && f.data()[12] == 0x08 && f.data()[13] == 0x00
                && f.data()[34] == 8).count();
        assertEquals(11, echoes, frames.size() + " frames");
        assertTrue(err.contains("usnet: ") && err.contains("11 sent"), "usnet's own lines are on standard error:\n" + err);
    }
}
