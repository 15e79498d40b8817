package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.tools.Usnet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code usnet run} from the command line: --check on the shipped examples, a timed run of the in-JVM one. */
class RunCommandTest {

    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true));
        return new Result(code, so.toString(), se.toString());
    }

    /** The repository's examples/ directory, found from the module directory tests run in. */
    static Path examples() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null) {
            if (Files.isRegularFile(p.resolve("examples/in-jvm-containers.yaml"))) {
                return p.resolve("examples");
            }
            p = p.getParent();
        }
        throw new AssertionError("examples/ not found above " + Path.of("").toAbsolutePath());
    }

    @ParameterizedTest
    @ValueSource(strings = {"in-jvm-containers.yaml", "bridge-two-kernels.yaml", "router-two-kernels.yaml",
            "forward-vs-bridge.yaml"})
    void everyShippedExampleValidatesWithoutPrivileges(String name) {
        Result r = run("run", "--check", examples().resolve(name).toString());
        assertEquals(0, r.code, r.out + r.err);
        assertTrue(r.out.contains(name + ": ok ("), r.out);
        assertEquals("", r.err);
    }

    @Test
    void theCompleteExampleInTheDocsValidates(@TempDir Path tmp) throws IOException {
        String doc = Files.readString(examples().resolveSibling("docs/topology.md"));
        int start = doc.indexOf("```yaml\n") + "```yaml\n".length();
        Path f = tmp.resolve("full-example.yaml");
        Files.writeString(f, doc.substring(start, doc.indexOf("```", start)));
        Result r = run("run", "--check", f.toString());
        assertEquals(0, r.code, r.out + r.err);
        assertTrue(r.out.contains("ok (4 namespaces, 9 devices, 1 kernel namespace; running it needs root)"), r.out);
    }

    @Test
    void checkReportsEveryProblemWithExit2(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("bad.yaml");
        Files.writeString(f, """
                namespaces:
                  host:
                    devices:
                      - name: eth0
                        kind: veth
                        mtu: big
                        peer: {name: eth1}
                    routes:
                      - default via 198.18.0.1
                """);
        Result r = run("run", "--check", f.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code, r.out + r.err);
        assertTrue(r.err.contains("usnet: " + f + ":6: namespaces.host.devices[0].mtu: expected an integer 68..65535, got \"big\""),
                r.err);
        // The build's own judgement comes in the same run: the route's gateway is on no connected network.
        assertTrue(r.err.contains(f + ":9: namespaces.host.routes[0]: route 'default via 198.18.0.1': gateway"), r.err);
        assertTrue(r.err.contains(f + ": 2 problems"), r.err);
        r = run("run", "--check", tmp.resolve("missing.yaml").toString());
        assertEquals(Usnet.EXIT_USAGE, r.code);
        assertTrue(r.err.contains("missing.yaml: no such file"), r.err);
    }

    @Test
    void capturesFromTheCommandLineAreWrittenAndBadOnesRefusedBeforeAnySideEffect(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out");
        Result r = run("run", "--duration", "1", "--out", out.toString(), "--capture", "host/br0=br0-cli.pcap",
                "--capture", "host/hb1:in=hb1-in.pcap", examples().resolve("in-jvm-containers.yaml").toString());
        assertEquals(0, r.code, r.out + r.err);
        var all = dev.usnet.core.pcap.PcapReader.readAll(out.resolve("br0-cli.pcap"));
        var in = dev.usnet.core.pcap.PcapReader.readAll(out.resolve("hb1-in.pcap"));
        assertTrue(all.size() > 10, "the bridge device saw traffic: " + all.size());
        assertTrue(in.size() > 10, "frames received on hb1: " + in.size());

        Path out2 = tmp.resolve("out2");
        r = run("run", "--duration", "1", "--out", out2.toString(), "--capture", "host/nosuch=x.pcap",
                examples().resolve("in-jvm-containers.yaml").toString());
        assertEquals(Usnet.EXIT_USAGE, r.code, r.out + r.err);
        assertTrue(r.err.contains("no device 'nosuch' in namespace host"), r.err);
        assertFalse(r.out.contains("ready"), r.out);
        assertFalse(Files.exists(out2));
    }

    @Test
    void loopbackCanBeCapturedFromTheCommandLineWithoutBeingDeclared(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("lo.yaml");
        // A ping to the namespace's own address goes out and back through lo, as in Linux.
        Files.writeString(f, """
                namespaces:
                  gw:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: c1, name: eth0}}
                    apps:
                      - {kind: ping, to: 198.18.0.1, interval: 0.1}
                  c1: {}
                """);
        Path out = tmp.resolve("out");
        Result r = run("run", "--duration", "1", "--warm-up-frames", "0", "--out", out.toString(), "--capture", "gw/lo=lo.pcap",
                f.toString());
        assertEquals(0, r.code, r.out + r.err);
        var frames = PcapReader.readAll(out.resolve("lo.pcap"));
        Matcher m = Pattern.compile("ping 198\\.18\\.0\\.1: (\\d+) sent, (\\d+) received").matcher(r.out);
        assertTrue(m.find(), r.out);
        long sent = Long.parseLong(m.group(1));
        long received = Long.parseLong(m.group(2));
        assertTrue(received >= 5, r.out);
        // inout: each request and each reply is seen leaving lo and arriving on it (the last may be cut by the stop).
        assertTrue(frames.size() >= 4 * received && frames.size() <= 4 * sent, frames.size() + " frames; " + r.out);
        // Echo requests and replies from the namespace's address to itself: IPv4 protocol 1 (ICMP), 198.18.0.1 both ways.
        byte[] first = frames.get(0).data();
        assertEquals(1, first[14 + 9]);
        assertEquals("198.18.0.1 198.18.0.1", dev.usnet.core.wire.Ipv4Addr.format(java.nio.ByteBuffer.wrap(first, 26, 4).getInt())
                + " " + dev.usnet.core.wire.Ipv4Addr.format(java.nio.ByteBuffer.wrap(first, 30, 4).getInt()));
    }

    @Test
    void runForADurationBuildsTheInJvmExampleAndForwards(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out");
        Result r = run("run", "--duration", "1.5", "--out", out.toString(), examples().resolve("in-jvm-containers.yaml").toString());
        assertEquals(0, r.code, r.out + r.err);
        assertTrue(r.out.contains("usnet: ready (4 namespaces, 7 devices)"), r.out);
        // In-JVM links only: nothing for the warm-up to prepare, so there is none (it is for TAP and pcap data paths).
        assertFalse(r.out.contains("warm"), r.out);
        // Over the bridge, and over bridge + router, replies come back; the UDP stream arrives.
        assertTrue(received(r.out, "ping 198\\.18\\.0\\.12") > 0, r.out);
        assertTrue(received(r.out, "ping 198\\.18\\.1\\.13") > 0, r.out);
        Matcher m = Pattern.compile("udp-sink :5001: (\\d+) received").matcher(r.out);
        assertTrue(m.find() && Long.parseLong(m.group(1)) > 0, r.out);
        assertTrue(r.out.contains("usnet: deleted 4 usnet namespaces"), r.out);
        // Histograms of the host's forwarding paths and ctr1's pings; the bridge capture.
        assertTrue(Files.isRegularFile(out.resolve("host.br0-to-hr3.hgrm")), list(out));
        assertTrue(Files.isRegularFile(out.resolve("host.hb1-to-hb2.hgrm")), list(out));
        assertTrue(Files.isRegularFile(out.resolve("ctr1.ping-198.18.1.13.hgrm")), list(out));
        assertTrue(Files.readString(out.resolve("host.br0-to-hr3.hgrm")).contains("Percentile"));
        assertFalse(PcapReader.readAll(out.resolve("host-br0.pcap")).isEmpty());
        assertEquals("", r.err);
    }

    private static long received(String out, String what) {
        Matcher m = Pattern.compile(what + ": (\\d+) sent, (\\d+) received").matcher(out);
        return m.find() ? Long.parseLong(m.group(2)) : -1;
    }

    private static String list(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList().toString();
        }
    }
}
