package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import dev.usnet.tools.topology.RunCommandTest.Result;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet run --clock virtual}: deterministic for a seed, no sleeping, TAP and pcap refused. */
class VirtualRunTest {
    private static final Pattern CPU = Pattern.compile(", cpu [0-9.]+ ms");
    private static final Pattern SPEED = Pattern.compile(
            "usnet: virtual time ([0-9.]+) s in ([0-9.]+) s of wall time \\(([0-9.]+)x\\), ([0-9.]+) s of CPU on the"
            + " simulation thread, [0-9]+ events\\n");

    /** The report with what the wall clock measured (app CPU time, the speed line) taken out. */
    private static String simulated(String out, Path dir) {
        return SPEED.matcher(CPU.matcher(out.replace(dir.toString(), "DIR")).replaceAll("")).replaceAll("");
    }

    private static Result virtual(Path out, String seed, String duration) {
        return RunCommandTest.run("run", "--clock", "virtual", "--duration", duration, "--seed", seed, "--out",
                out.toString(), "--results", out.resolve("results.json").toString(),
                RunCommandTest.examples().resolve("in-jvm-containers.yaml").toString());
    }

    /** The results file without its {@code measured} key (the last one: what the wall clock measured). */
    private static String simulatedResults(Path out) throws java.io.IOException {
        String json = java.nio.file.Files.readString(out.resolve("results.json"));
        int m = json.indexOf("\n  \"measured\" : ");
        assertTrue(m > 0 && json.indexOf("\n  \"", m + 1) < 0, json);
        return json.substring(0, m);
    }

    @Test
    void theSameSeedGivesTheSameRunAndADifferentSeedAnotherOne(@TempDir Path tmp) throws java.io.IOException {
        Result a = virtual(tmp.resolve("a"), "7", "1");
        Result b = virtual(tmp.resolve("b"), "7", "1");
        assertEquals(0, a.code(), a.out() + a.err());
        assertEquals(0, b.code(), b.out() + b.err());
        assertTrue(a.out().contains("burst client 198.18.0.11:"), a.out());
        assertTrue(a.out().contains("udp-sink :5001: 201 received"), a.out());
        assertEquals(simulated(a.out(), tmp.resolve("a")), simulated(b.out(), tmp.resolve("b")));
        assertEquals(simulatedResults(tmp.resolve("a")), simulatedResults(tmp.resolve("b")));
        assertTrue(simulatedResults(tmp.resolve("a")).contains("\"name\" : \"ctr1.burst-0\""));
        // The ephemeral port (and ISN) of the burst client is a seeded draw.
        Result c = virtual(tmp.resolve("c"), "8", "1");
        assertEquals(0, c.code(), c.out() + c.err());
        assertNotEquals(simulated(a.out(), tmp.resolve("a")), simulated(c.out(), tmp.resolve("c")));
        assertTrue(simulatedResults(tmp.resolve("c")).contains("\"seed\" : 8,"));
    }

    @Test
    void withTheCpuModelOnEveryNamespaceReportsTheSameModelledCpuEachRunAndItsMeasuredCpuApart(@TempDir Path tmp)
            throws java.io.IOException {
        Path f = RunCommandTest.examples().resolve("in-jvm-containers.yaml");
        long[] host = new long[2];
        String[] simulated = new String[2];
        for (int i = 0; i < 2; i++) {
            Path out = tmp.resolve("r" + i);
            Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "1", "--seed", "3", "--out",
                    out.toString(), "--results", out.resolve("results.json").toString(), "--set", "usnet.cpu.model=1",
                    f.toString());
            assertEquals(0, r.code(), r.out() + r.err());
            var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.resolve("results.json").toFile());
            for (var n : doc.path("namespaces")) {
                assertTrue(n.has("cpu_util"), n.toString());
                if (n.path("name").asText().equals("host")) {
                    host[i] = n.path("cpu_model_ns").asLong();
                }
            }
            assertTrue(doc.path("measured").path("cpu_ns").path("host").asLong() > 0, doc.toString());
            simulated[i] = simulatedResults(out);
        }
        assertTrue(host[0] > 0, "the host forwards, so the model charges it");
        assertEquals(host[0], host[1]);
        assertEquals(simulated[0], simulated[1]);
        // Without the model the field is absent, not zero.
        Result off = virtual(tmp.resolve("off"), "3", "1");
        assertEquals(0, off.code(), off.out() + off.err());
        assertTrue(!simulatedResults(tmp.resolve("off")).contains("cpu_model_ns"));
    }

    @Test
    void tenVirtualSecondsTakeFarLessWallTimeAndTheSpeedIsPrinted(@TempDir Path tmp) throws java.io.IOException {
        Path f = tmp.resolve("two.yaml");
        java.nio.file.Files.writeString(f, """
                version: 1
                namespaces:
                  a:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}}
                    apps:
                      - {kind: ping, to: 198.18.0.2, interval: 0.1}
                  b: {}
                """);
        long t0 = System.nanoTime();
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "10", "--out", tmp.toString(), f.toString());
        double wall = (System.nanoTime() - t0) / 1e9;
        assertEquals(0, r.code(), r.out() + r.err());
        Matcher m = SPEED.matcher(r.out());
        assertTrue(m.find(), r.out());
        assertTrue(Double.parseDouble(m.group(1)) >= 10.0, m.group());
        assertTrue(wall < 10, "10 virtual seconds took " + wall + " s of wall time");
        assertTrue(r.out().contains("ping 198.18.0.2: 101 sent, 101 received"), r.out());
    }

    /** The {@code Total count} an .hgrm percentile file ends with. */
    private static long totalCount(Path hgrm) throws java.io.IOException {
        Matcher m = Pattern.compile("Total count += +([0-9]+)").matcher(java.nio.file.Files.readString(hgrm));
        assertTrue(m.find(), hgrm.toString());
        return Long.parseLong(m.group(1));
    }

    @Test
    void histogramFilesAreWrittenInVirtualTimeTooWithWhatTheResultsCounted(@TempDir Path tmp) throws java.io.IOException {
        Path out = tmp.resolve("h");
        Result r = virtual(out, "4", "2");
        assertEquals(0, r.code(), r.out() + r.err());
        var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.resolve("results.json").toFile());
        java.util.Map<String, Long> want = new java.util.TreeMap<>();
        // host and ctr1 have histograms: true: every forwarding path of the host, ctr1's pings; the burst app's always.
        for (var p : doc.path("paths")) {
            want.put("host." + p.path("name").asText().replace("->", "-to-") + ".hgrm", p.path("packets").asLong());
        }
        for (var a : doc.path("apps")) {
            switch (a.path("name").asText()) {
                case "ctr1.ping-0" -> want.put("ctr1.ping-198.18.0.12.hgrm", a.path("ops").asLong());
                case "ctr1.ping-1" -> want.put("ctr1.ping-198.18.1.13.hgrm", a.path("ops").asLong());
                case "ctr1.burst-0" -> want.put("ctr1.burst-198.18.1.13-5002.hgrm", a.path("ops").asLong());
                default -> { }
            }
        }
        assertTrue(want.containsKey("host.hb1-to-br0.hgrm") && want.containsKey("host.br0-to-hr3.hgrm"), want.toString());
        java.util.Map<String, Long> got = new java.util.TreeMap<>();
        try (var files = java.nio.file.Files.list(out)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".hgrm")).toList()) {
                got.put(f.getFileName().toString(), totalCount(f));
            }
        }
        assertEquals(want, got);
        assertTrue(r.out().contains("usnet: wrote " + want.size() + " histograms to " + out + "\n"), r.out());
    }

    @Test
    void aTopologyWithATapIsRefusedNamingTheDevice(@TempDir Path tmp) {
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "1", "--out", tmp.toString(),
                RunCommandTest.examples().resolve("bridge-two-kernels.yaml").toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("bridge-two-kernels.yaml:29:") && r.err().contains("tap device switch/tap-a cannot run"
                + " in virtual time"), r.err());
        assertEquals("", r.out());
    }

    @Test
    void virtualTimeNeedsADuration(@TempDir Path tmp) {
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--out", tmp.toString(),
                RunCommandTest.examples().resolve("in-jvm-containers.yaml").toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("--clock virtual needs --duration"), r.err());
    }
}
