package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code usnet ctl capture start NS/DEV -}: a running daemon's device as a live pcap on the client's standard
 * output, a frame at a time, as {@code tcpdump -w -} writes one, so that a pipe into tcpdump or Wireshark shows
 * the traffic as it flows.
 */
class CaptureStreamTest {

    private static final String PINGING = "- {kind: ping, to: 198.18.0.12, interval: 0.005}\n";

    @Test
    void aStreamedCaptureIsAPcapOfTheDevicesFramesEndingAtItsCount(@TempDir Path dir) throws Exception {
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology(PINGING, ""), dir)) {
            assertTrue(LiveDaemon.eventually(3000, () -> d.app("ctr1.ping-0") > 2));
            ByteArrayOutputStream pcap = new ByteArrayOutputStream();
            JsonNode reply;
            try (CtlClient c = CtlClient.connect(d.socket)) {
                // Returns when the daemon hangs up after the 12th frame.
                reply = c.requestBytes("ctr1", List.of("capture", "start", "eth0", "-", "out", "count", "12"), pcap);
            }
            assertTrue(reply.path("ok").asBoolean(), reply.toString());
            assertEquals("ctr1/eth0", reply.path("data").path("dev").asText());
            List<PcapRecord> frames = read(pcap.toByteArray());
            assertEquals(12, frames.size(), "count 12: twelve frames, then end of file");
            for (PcapRecord f : frames) {
                byte[] b = f.data();
                // Sent by ctr1 (out): its echo requests to ctr2 (or an ARP), Ethernet first.
                int type = (b[12] & 0xff) << 8 | b[13] & 0xff;
                assertTrue(type == 0x0800 || type == 0x0806, "not IPv4/ARP: ethertype " + Integer.toHexString(type));
                if (type == 0x0800) {
                    assertEquals(8, b[14 + 20] & 0xff, "only echo requests leave ctr1's eth0 (direction out)");
                }
            }
            assertTrue(frames.get(11).timestampNanos() > frames.get(0).timestampNanos(), "timestamps advance");
            // A count reached before the reply line is out (one frame, a busy port): the reply, that frame, the end.
            for (int i = 0; i < 5; i++) {
                ByteArrayOutputStream one = new ByteArrayOutputStream();
                try (CtlClient c = CtlClient.connect(d.socket)) {
                    JsonNode r = c.requestBytes(null, List.of("capture", "start", "host/hb1", "-", "count", "1"), one);
                    assertTrue(r.path("ok").asBoolean(), r.toString());
                }
                assertEquals(1, read(one.toByteArray()).size());
            }
            JsonNode list = d.ok(null, "capture", "list");
            assertEquals(0, list.size(), "a stream that ended is not listed: " + list);
        }
    }

    @Test
    void aClientThatHangsUpEndsItsStreamAndAnUnknownDeviceIsRefusedInWords(@TempDir Path dir) throws Exception {
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology(PINGING, ""), dir)) {
            try (CtlClient c = CtlClient.connect(d.socket)) {
                JsonNode r = c.requestBytes("ctr1", List.of("capture", "start", "eth9", "-"), new ByteArrayOutputStream());
                assertFalse(r.path("ok").asBoolean());
                assertTrue(r.path("error").asText().contains("eth9"), r.toString());
            }
            CtlClient c = CtlClient.connect(d.socket);
            ByteArrayOutputStream pcap = new ByteArrayOutputStream();
            Thread t = new Thread(() -> {
                try {
                    c.requestBytes(null, List.of("capture", "start", "host/br0", "-"), pcap);
                } catch (IOException ignored) {
                    // closed below
                }
            });
            t.start();
            assertTrue(LiveDaemon.eventually(3000, () -> d.control != null && listed(d) == 1), "the stream is listed while it runs");
            c.close();
            t.join(5000);
            assertTrue(LiveDaemon.eventually(3000, () -> listed(d) == 0), "hanging up ends the stream");
        }
    }

    private static int listed(LiveDaemon d) {
        try {
            return d.ok(null, "capture", "list").size();
        } catch (IOException e) {
            return -1;
        }
    }

    @Test
    void usnetCtlPipesALivePcapIntoTcpdump(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(new java.io.File("/usr/bin/tcpdump").canExecute()
                || new java.io.File("/usr/sbin/tcpdump").canExecute(), "tcpdump is not installed");
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology(PINGING, ""), dir)) {
            Process tcpdump = new ProcessBuilder("tcpdump", "-r", "-", "-n", "-c", "6").redirectErrorStream(true).start();
            // Should tcpdump never see six packets, ending it ends the copy (its pipe breaks) and the test fails below.
            Thread guard = Thread.ofVirtual().start(() -> {
                try {
                    if (!tcpdump.waitFor(20, TimeUnit.SECONDS)) {
                        tcpdump.destroyForcibly();
                    }
                } catch (InterruptedException ignored) {
                    tcpdump.destroyForcibly();
                }
            });
            CtlCommand cmd = new CtlCommand();
            cmd.binaryOut = tcpdump.getOutputStream();
            StringWriter err = new StringWriter();
            CommandLine cl = new CommandLine(cmd).setErr(new PrintWriter(err)).setOut(new PrintWriter(new StringWriter()));
            // tcpdump exits after 6 packets; the copy then fails on its closed pipe and usnet ctl ends with 0.
            int code = cl.execute("--socket", d.socket.toString(), "capture", "start", "host/hb1", "-");
            assertTrue(tcpdump.waitFor(10, TimeUnit.SECONDS));
            guard.join();
            String out = new String(tcpdump.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, code, err.toString());
            long echoes = out.lines().filter(l -> l.contains("198.18.0.11 > 198.18.0.12: ICMP echo request")
                    || l.contains("198.18.0.12 > 198.18.0.11: ICMP echo reply")).count();
            assertEquals(0, tcpdump.exitValue(), "tcpdump ended by itself after -c 6:\n" + out);
            assertTrue(echoes >= 4, "tcpdump read the live stream:\n" + out);
        }
    }

    private static List<PcapRecord> read(byte[] bytes) throws IOException {
        List<PcapRecord> l = new ArrayList<>();
        try (PcapReader r = new PcapReader("stream", new ByteArrayInputStream(bytes))) {
            PcapRecord p;
            while ((p = r.next()) != null) {
                l.add(p);
            }
        }
        return l;
    }
}
