package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/router-pcap-test.yaml in virtual time: hostile traffic replayed from a pcap into a router, and what the
 * router sends out of both sides compared byte for byte with the pcaps examples/router-pcap-test.py wrote from
 * Linux's rules. Any change to what the router forwards, answers or drops makes a check fail, and the failure says
 * where.
 */
class PcapTestExampleTest {
    private static Path example() {
        return RunCommandTest.examples().resolve("router-pcap-test.yaml");
    }

    private static Result run(Path dir, String... extra) {
        List<String> args = new ArrayList<>(List.of("run", "--clock", "virtual", "--duration", "0.1", "--out",
                dir.toString(), "--results", dir.resolve("results.json").toString()));
        args.addAll(List.of(extra));
        args.add(example().toString());
        return RunCommandTest.run(args.toArray(String[]::new));
    }

    private static JsonNode verdicts(Path dir) throws IOException {
        return new ObjectMapper().readTree(dir.resolve("results.json").toFile()).path("expectations");
    }

    @Test
    void theRouterDoesWhatLinuxDoes(@TempDir Path dir) throws IOException {
        Result r = run(dir);
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("usnet: replay internet/inj0: 36 frames of router-pcap-test-in.pcap sent"), r.out());
        assertTrue(r.out().contains("usnet: 8 of 8 expectations held"), r.out());
        JsonNode v = verdicts(dir);
        assertEquals(8, v.size(), v.toString());
        for (JsonNode x : v) {
            assertTrue(x.path("held").asBoolean(), x.toString());
        }
        assertEquals("capture router/lan0 matches router-pcap-test-lan0.pcap with exact times", v.get(0).path("expect").asText());
        assertEquals(1, v.get(0).path("value").asInt());
        assertEquals(16, v.get(2).path("value").asInt());
        assertEquals(24, v.get(5).path("value").asInt());
        // The captures hold what the expected files hold, frame for frame.
        assertEquals(25, dev.usnet.core.pcap.PcapReader.readAll(dir.resolve("lan0-out.pcap")).size());
        assertEquals(29, dev.usnet.core.pcap.PcapReader.readAll(dir.resolve("wan0-out.pcap")).size());
    }

    @Test
    void aRouterThatForwardsSpoofedSourcesFailsAndSaysWhere(@TempDir Path dir) throws IOException {
        // Without reverse-path filtering the two spoofed SYNs reach the server: the 25th frame out of lan0 is the first
        // of them where the ping was expected, the SYN count is 18, and the land attack (source = the server) shows.
        // Out of wan0 nothing changes: the server answers its own network directly and drops its own address.
        Result r = run(dir, "--set", "router:net.ipv4.conf.all.rp_filter=0");
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("usnet: expect failed: " + example() + ":49: capture router/lan0 matches"
                + " router-pcap-test-lan0.pcap with exact times: frame 25 differs at byte 17 (ip.len): expected 42 (0x002a),"
                + " got 40 (0x0028)"), r.err());
        assertTrue(r.err().contains("  got:      02:00:00:00:1b:01 > 02:00:00:00:1b:0a, IPv4 198.18.27.99 > 198.18.27.10"),
                r.err());
        assertTrue(r.err().contains("count \"tcp[tcpflags] & tcp-syn != 0 and dst port 80\" == 16 (was 18)"), r.err());
        assertTrue(r.err().contains("or src host 198.18.27.10\" == 0 (was 1)"), r.err());
        assertTrue(r.out().contains("usnet: 5 of 8 expectations held"), r.out() + r.err());
        JsonNode v = verdicts(dir);
        assertFalse(v.get(0).path("held").asBoolean());
        assertEquals(0, v.get(0).path("value").asInt());
        assertTrue(v.get(0).path("detail").asText().startsWith("frame 25 differs at byte 17 (ip.len)"), v.toString());
        assertEquals(18, v.get(2).path("value").asInt());
    }

    @Test
    void aChangedTtlIsNamedWithBothValues(@TempDir Path dir) throws IOException {
        // The same file against an expected capture whose third frame has TTL 0x30 where the router sends 41 - 1.
        Path copy = dir.resolve("copy");
        Files.createDirectories(copy);
        for (String f : List.of("router-pcap-test.yaml", "router-pcap-test-in.pcap", "router-pcap-test-wan0.pcap")) {
            Files.copy(RunCommandTest.examples().resolve(f), copy.resolve(f));
        }
        byte[] lan = Files.readAllBytes(RunCommandTest.examples().resolve("router-pcap-test-lan0.pcap"));
        // pcap header 24 bytes, then per frame a 16-byte record header and 54 bytes (the SYNs): frame 3's TTL.
        int ttlAt = 24 + 2 * (16 + 54) + 16 + 22;
        assertEquals(41, lan[ttlAt]);
        lan[ttlAt] = 0x30;
        Files.write(copy.resolve("router-pcap-test-lan0.pcap"), lan);
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.1", "--out", dir.resolve("out").toString(),
                copy.resolve("router-pcap-test.yaml").toString());
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("frame 3 differs at byte 22 (ip.ttl): expected 48 (0x30), got 41 (0x29)"), r.err());
        assertTrue(r.out().contains("usnet: 7 of 8 expectations held"), r.out());
    }
}
