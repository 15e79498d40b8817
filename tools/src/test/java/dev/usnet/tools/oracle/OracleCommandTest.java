package dev.usnet.tools.oracle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tap.HostCommand;
import dev.usnet.tools.Usnet;
import dev.usnet.tools.replay.Scenario;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code usnet oracle record|check} against this machine's kernel: a recorded scenario replays in usnet,
 * deterministic shipped fixtures still agree with the kernel, a corrupted copy is reported port, frame and
 * byte, a set-up the kernel refuses fails cleanly, and no kernel namespace named usnet-or-* outlives a test.
 * Kernel tests need root, iproute2 and python3-scapy: skipped without them, required when CI=true.
 */
class OracleCommandTest {
    private static final String PREFIX = "usnet-or-";

    @TempDir
    Path tmp;

    private record Run(int code, String out) {}

    private static Run usnet(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true));
        return new Run(code, so + se.toString());
    }

    private static Path toolsDir() {
        String conformance = System.getProperty("usnet.conformance");
        return conformance != null ? Path.of(conformance).getParent() : Path.of(".");
    }

    private static Path fixture(String name) {
        return toolsDir().resolve("conformance/fixtures").resolve(name);
    }

    private static void requireKernel() {
        boolean ok = HostCommand.isRoot() && HostCommand.has("ip")
                && HostCommand.run(20, "/usr/bin/python3", "-c", "import scapy.all").ok();
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(ok, "CI must provide root, iproute2 and python3-scapy (apt-get install python3-scapy)");
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(ok, "root, iproute2 and python3-scapy");
        }
    }

    private static List<String> ourNamespaces() {
        HostCommand.Result r = HostCommand.run(10, "ip", "netns", "list");
        return r.output().lines().map(l -> l.split(" ")[0]).filter(n -> n.startsWith(PREFIX)).toList();
    }

    @AfterEach
    void noNamespaceLeft() {
        List<String> left = ourNamespaces();
        for (String ns : left) {
            HostCommand.run(10, "ip", "netns", "del", ns);
        }
        assertEquals(List.of(), left, "kernel namespaces left behind");
    }

    private static List<PcapRecord> read(Path pcap) throws IOException {
        return Files.size(pcap) > 24 ? PcapReader.readAll(pcap) : List.of();
    }

    @Test
    void recordedScenarioReplaysInUsnet() throws IOException {
        requireKernel();
        Path scenario = toolsDir().resolve("oracle/examples/router_hello.py");
        Path fx = tmp.resolve("router-hello");
        Run rec = usnet("oracle", "record", scenario.toString(), fx.toString());
        assertEquals(0, rec.code, rec.out);
        assertTrue(rec.out.contains("r2: 1 frames in, 3 frames out"), rec.out);

        Scenario sc = Scenario.load(fx);
        assertEquals("router-hello", sc.name());
        List<PcapRecord> in = read(fx.resolve("in/r1.pcap"));
        assertEquals(4, in.size());
        assertEquals(1_700_000_000_000_000_000L, in.get(0).timestampNanos());
        assertEquals(1_700_000_000_050_000_000L, in.get(1).timestampNanos());
        // Only what the router sent: every captured frame has the port's own MAC as its source, none of the
        // injected frames (from the hosts' MACs) is among them.
        for (Scenario.Port p : sc.ports()) {
            for (PcapRecord r : read(fx.resolve("expected").resolve(p.name() + ".pcap"))) {
                assertEquals(MacAddr.format(p.mac()), MacAddr.format(MacAddr.get(Unpooled.wrappedBuffer(r.data()), 6)), p.name());
            }
        }
        List<PcapRecord> r2 = read(fx.resolve("expected/r2.pcap"));
        assertEquals(63, r2.get(0).data()[14 + 8] & 0xff, "forwarded with TTL 64 -> 63");

        Run replay = usnet("replay", fx.toString(), "--out", tmp.resolve("out").toString(), "--expect");
        assertEquals(0, replay.code, replay.out);
        assertTrue(replay.out.contains("router-hello/r1: ok (2 frames)"), replay.out);
        assertTrue(replay.out.contains("router-hello/r2: ok (3 frames)"), replay.out);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"router-basic", "bridge-basic"})
    void checkAgreesOnDeterministicFixtures(String name) {
        requireKernel();
        Scenario sc = Scenario.load(fixture(name));
        Run check = usnet("oracle", "check", fixture(name).toString());
        assertEquals(0, check.code, check.out);
        for (Scenario.Port p : sc.ports()) {
            assertTrue(check.out.contains(name + "/" + p.name() + ": agrees"), check.out);
        }
        assertTrue(check.out.contains("the kernel here agrees with " + name), check.out);
    }

    @Test
    void checkReportsPortFrameAndByteOfACorruptedFixture() throws IOException {
        requireKernel();
        Path copy = tmp.resolve("router-basic");
        copyTree(fixture("router-basic"), copy);
        // The second frame out of r2 is the TCP segment routed via 198.19.2.2 with TTL 30 -> 29: make it 28.
        Path r2 = copy.resolve("expected/r2.pcap");
        List<PcapRecord> frames = read(r2);
        assertEquals(29, frames.get(1).data()[14 + 8] & 0xff);
        try (PcapWriter w = new PcapWriter(r2)) {
            for (int i = 0; i < frames.size(); i++) {
                byte[] d = frames.get(i).data().clone();
                if (i == 1) {
                    d[14 + 8] = 28;
                }
                w.write(frames.get(i).timestampNanos(), d, 0, d.length, d.length);
            }
        }
        Path kept = tmp.resolve("again");
        Run check = usnet("oracle", "check", copy.toString(), "--out", kept.toString());
        assertEquals(OracleCommand.EXIT_DIFFERS, check.code, check.out);
        assertTrue(check.out.contains("router-basic/r1: agrees"), check.out);
        assertTrue(check.out.contains("router-basic/r2: DIFFERS at frame 2 of expected/r2.pcap"), check.out);
        assertTrue(check.out.contains("first different byte: 22 of 54/54 (fixture 0x1c, this kernel 0x1d)"), check.out);
        assertTrue(check.out.contains("differs from router-basic on 1 of 2 ports"), check.out);
        // --out keeps the new recording as a fixture of its own, which agrees with usnet.
        Run replay = usnet("replay", kept.toString(), "--out", tmp.resolve("out").toString(), "--expect");
        assertEquals(0, replay.code, replay.out);
    }

    @Test
    void aStepTheKernelRefusesFailsAndLeavesNothing() throws IOException {
        requireKernel();
        Path scenario = tmp.resolve("bad_route.py");
        Files.writeString(scenario, """
                SCENARIO = {"name": "bad-route", "device": "router",
                  "ports": [{"name": "r1", "mac": "02:00:00:00:d0:01", "addresses": ["198.18.44.1/24"]}],
                  "router": {"routes": ["198.18.45.0/24 via 198.18.99.1 dev r1"]},
                  "steps": [{"port": "r1", "frame": bytes(60)}]}
                """);
        Path out = tmp.resolve("never");
        Run rec = usnet("oracle", "record", scenario.toString(), out.toString());
        assertEquals(LinuxOracle.KERNEL_REFUSED, rec.code, rec.out);
        assertTrue(rec.out.contains("route add 198.18.45.0/24 via 198.18.99.1 dev r1"), rec.out);
        assertFalse(Files.exists(out), "no half-written fixture");
        try (Stream<Path> s = Files.list(tmp)) {
            assertEquals(List.of("bad_route.py"), s.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void badScenarioNamesTheKey() throws IOException {
        Path scenario = tmp.resolve("bad_mac.py");
        Files.writeString(scenario, """
                SCENARIO = {"device": "bridge", "bridge": {"mac": "02:00:00:00:00:01"},
                  "ports": [{"name": "p1", "mac": "02:00:00:00:00:11"}, {"name": "p2", "mac": "zz"}],
                  "steps": [{"port": "p1", "frame": bytes(60)}]}
                """);
        Run rec = usnet("oracle", "record", scenario.toString(), tmp.resolve("out").toString());
        assertEquals(Usnet.EXIT_USAGE, rec.code, rec.out);
        assertTrue(rec.out.contains("bad_mac.py: SCENARIO['ports'][1]['mac']: expected a MAC address"), rec.out);
    }

    @Test
    void checkOfADirectoryThatIsNoFixtureIsBadInput() {
        Run check = usnet("oracle", "check", tmp.toString());
        assertEquals(Usnet.EXIT_USAGE, check.code, check.out);
        assertTrue(check.out.contains("not a fixture directory (no scenario.json)"), check.out);
    }

    @Test
    void withoutPrivilegeTheRecorderSaysWhatItNeeds() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(HostCommand.isRoot() && HostCommand.has("setpriv"),
                "needs root to drop to an unprivileged user");
        // The unprivileged user must be able to read the script and the fixture, wherever the tree is cloned.
        Path world = tmp.resolve("readable");
        copyTree(LinuxOracle.script().getParent(), world.resolve("oracle"));
        copyTree(fixture("router-basic"), world.resolve("router-basic"));
        makeWorldReadable(tmp);
        HostCommand.Result r = HostCommand.run(20, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                "/usr/bin/python3", world.resolve("oracle/usnet_oracle.py").toString(), "rerecord",
                world.resolve("router-basic").toString(), world.resolve("out").toString());
        assertEquals(LinuxOracle.BAD_INPUT, r.exit(), r.output());
        assertTrue(r.output().contains("needs CAP_NET_ADMIN and CAP_SYS_ADMIN: run as root (sudo)"), r.output());
    }

    private static void makeWorldReadable(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.toList()) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x" : "rw-r--r--"));
            }
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
    }
}
