package dev.usnet.tools.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.usnet.tools.Usnet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Linux fixture kept in the project, replayed through {@code usnet replay --expect}: usnet must send the
 * same frames out of the same ports as the kernel did, byte for byte. A fixture whose scenario.json says
 * {@code "pending": "WHAT"} needs something usnet's replay does not apply yet (e.g. its nftables ruleset) and is
 * skipped with that reason; deleting the key from the fixture's scenario.json (and its scenario script) enables it.
 */
class LinuxConformanceTest {

    static Path fixturesDir() {
        String prop = System.getProperty("usnet.conformance");
        Path base = prop != null ? Path.of(prop) : Path.of("conformance");
        return base.resolve("fixtures");
    }

    static Stream<Path> fixtures() throws IOException {
        Path dir = fixturesDir();
        assertTrue(Files.isDirectory(dir), "fixtures at " + dir.toAbsolutePath());
        List<Path> l;
        try (Stream<Path> s = Files.list(dir)) {
            l = s.filter(p -> Files.exists(p.resolve("scenario.json"))).sorted().toList();
        }
        assertFalse(l.isEmpty());
        return l.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void replayMatchesLinux(Path fixture, @TempDir Path out) {
        String pending = Scenario.load(fixture).pending();
        assumeTrue(pending == null, () -> fixture.getFileName() + ": pending " + pending
                + " (usnet's replay does not apply it yet)");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(new String[] {"replay", fixture.toString(), "--out", out.toString(), "--expect"},
                new PrintWriter(so, true), new PrintWriter(se, true));
        assertEquals(0, code, so + "\n" + se);
        Scenario sc = Scenario.load(fixture);
        for (Scenario.Port p : sc.ports()) {
            assertTrue(Files.exists(out.resolve(p.name() + ".pcap")), "capture for " + p.name());
            assertTrue(so.toString().contains(sc.name() + "/" + p.name() + ": ok"), so.toString());
        }
    }
}
