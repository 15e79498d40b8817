package dev.usnet.tools.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.Usnet;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet compare}: a knob varied over a small in-JVM topology, its files, its checks, its determinism. */
class CompareTest {
    /**
     * A bridge in {@code host} with one port towards {@code a}, routed to {@code b}: a's traffic to b is bridged
     * (hb1 -> br0), then routed (br0 -> hr2), so the forwarding path copies on write. Link emulation gives the
     * latencies something to show.
     */
    static final String TOPOLOGY = """
            version: 1
            name: cmp
            namespaces:
              host:
                knobs: {net.ipv4.ip_forward: 1}
                devices:
                  - {name: br0, kind: bridge, ports: [hb1], addresses: [198.18.0.1/24]}
                histograms: true
              a:
                devices:
                  - {name: eth0, kind: veth, netem: {rate: 200mbit, delay: 50us, jitter: 20us}, addresses: [198.18.0.11/24], peer: {namespace: host, name: hb1}}
                routes: [default via 198.18.0.1]
                apps:
                  - {kind: ping, to: 198.18.1.12, interval: 0.05}
                  - {kind: stream, server: b, port: 5001, bytes: 256k, trace: true}
                  - {kind: rr, server: b, port: 5002, count: 100}
              b:
                devices:
                  - {name: eth0, kind: veth, netem: {delay: 30us, jitter: 10us}, addresses: [198.18.1.12/24], peer: {namespace: host, name: hr2, addresses: [198.18.1.1/24]}}
                routes: [default via 198.18.1.1]
            """;
    private static final String COW = "host:usnet.forward.cow=full-copy,head-copy";

    record Result(int code, String out, String err) {}

    static Result compare(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        List<String> a = new ArrayList<>(List.of("compare"));
        a.addAll(List.of(args));
        int code = Usnet.execute(a.toArray(String[]::new), new PrintWriter(so, true), new PrintWriter(se, true));
        return new Result(code, so.toString(), se.toString());
    }

    static Path topology(Path tmp) throws IOException {
        Path f = tmp.resolve("cmp.yaml");
        Files.writeString(f, TOPOLOGY);
        return f;
    }

    /** The text with every {@code "measured" : {...}} object taken out: what the wall clock measured. */
    static String withoutMeasured(String json) {
        StringBuilder b = new StringBuilder();
        String end = null;
        int removed = 0;
        for (String line : json.split("\n", -1)) {
            if (end != null) {
                if (line.startsWith(end)) {
                    end = null;
                }
                continue;
            }
            int i = line.indexOf("\"measured\" : {");
            if (i >= 0) {
                removed++;
                if (!line.endsWith("}")) {
                    end = " ".repeat(i) + "}";
                }
                continue;
            }
            b.append(line).append('\n');
        }
        assertTrue(removed > 0, "no measured object in " + json);
        return b.toString();
    }

    static void assertPng(Path p) throws IOException {
        byte[] head = new byte[8];
        try (var in = Files.newInputStream(p)) {
            assertEquals(8, in.read(head), p.toString());
        }
        assertEquals("\u0089PNG\r\n\u001a\n", new String(head, java.nio.charset.StandardCharsets.ISO_8859_1), p.toString());
        BufferedImage img = ImageIO.read(p.toFile());
        assertNotNull(img, p + " does not decode");
        assertEquals(1200, img.getWidth());
        assertEquals(700, img.getHeight());
    }

    @Test
    void twoCowPoliciesRunAsTwoVariantsWhoseCowBytesDifferWithTablesAndCharts(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out");
        Result r = compare(topology(tmp).toString(), "--vary", COW, "--set", "usnet.cpu.model=1", "--duration", "1",
                "--out", out.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("usnet: compare: 2 variants × 1 seed = 2 runs of 1 virtual seconds, 1 at a time"), r.err());
        assertTrue(Pattern.compile("usnet: compare: 1/2 done: #1 host:usnet.forward.cow=full-copy, seed 1: [0-9.]+ s wall"
                + " \\([0-9.]+x\\); ETA [0-9]+ s\n").matcher(r.err()).find(), r.err());
        assertTrue(r.err().contains("usnet: compare: 2/2 done: #2 host:usnet.forward.cow=head-copy, seed 1:"), r.err());
        assertTrue(r.err().contains("usnet: compare: warm-up (the baseline for 1 virtual seconds, not counted): "), r.err());

        JsonNode doc = new ObjectMapper().readTree(out.resolve("results.json").toFile());
        assertEquals(List.of("variants"), iterable(doc.fieldNames()));
        JsonNode vs = doc.path("variants");
        assertEquals(2, vs.size());
        String[] policies = {"full-copy", "head-copy"};
        long[] cowBytes = new long[2];
        for (int i = 0; i < 2; i++) {
            JsonNode v = vs.get(i);
            assertEquals(List.of("vary", "seed", "results"), iterable(v.fieldNames()));
            assertEquals("{\"host:usnet.forward.cow\":\"" + policies[i] + "\"}", v.path("vary").toString());
            assertEquals(1, v.path("seed").asLong());
            JsonNode res = v.path("results");
            assertEquals("usnet-results/1", res.path("schema").asText());
            // The varied knob is in force in the run, in its namespace only; --set applies everywhere.
            assertEquals(policies[i], res.path("knobs").path("host").path("usnet.forward.cow").asText());
            assertTrue(res.path("knobs").path("a").path("usnet.forward.cow").isMissingNode());
            assertEquals("1", res.path("knobs").path("b").path("usnet.cpu.model").asText());
            for (JsonNode n : res.path("namespaces")) {
                if (n.path("name").asText().equals("host")) {
                    cowBytes[i] = n.path("cow_bytes").asLong();
                }
            }
            assertTrue(res.path("measured").has("wall_s"), res.toString());
        }
        // The modelled CPU per packet divides the host's cpu_model_ns by what its devices received.
        JsonNode first = vs.get(0).path("results");
        long rxPackets = 0;
        long rxBytes = 0;
        for (JsonNode d : first.path("devices")) {
            if (d.path("name").asText().startsWith("host/")) {
                rxPackets += d.path("rx_packets").asLong();
                rxBytes += d.path("rx_bytes").asLong();
            }
        }
        long model = first.path("namespaces").get(0).path("cpu_model_ns").asLong();
        assertTrue(model > 0 && rxPackets > 0, first.toString());
        String perPacket = MetricTable.format((double) model / rxPackets);
        String perByte = MetricTable.format((double) model / rxBytes);
        // full-copy copies whole frames, head-copy only their headers: the routed stream shows it.
        assertTrue(cowBytes[0] > 10 * cowBytes[1] && cowBytes[1] > 0, cowBytes[0] + " vs " + cowBytes[1]);

        String report = Files.readString(out.resolve("report.md"));
        for (String s : List.of("# usnet compare: cmp", "### app a.ping-0 (ping → 198.18.1.12)",
                "### app a.stream-0 (stream → 198.18.1.12:5001)", "### app a.rr-0 (rr → 198.18.1.12:5002)",
                "### path host/br0->hr2", "### namespace host", "| variant | COW copies | COW bytes | model CPU ns |"
                        + " model ns/packet | model ns/byte | model CPU util | CPU ns ‡ | ns/packet ‡ | ns/byte ‡ |",
                "| #1 host:usnet.forward.cow=full-copy (baseline) | ",
                " | " + model + " | " + perPacket + " | " + perByte + " | ",
                "| **#2 host:usnet.forward.cow=head-copy** | ",
                "Differs most from the baseline: **#2 host:usnet.forward.cow=head-copy**, in COW bytes: " + cowBytes[0]
                        + " → " + cowBytes[1], "| p50 µs | p99 µs | p99.9 µs | max µs |",
                "![a.rr-0 latency percentiles](latency-app-a.rr-0.png)", "![TCP throughput](throughput.png)",
                "## Largest differences from the baseline\n\n| table | variant | column | baseline | variant's | relative"
                        + " difference | rank |\n|---|---|---|---:|---:|---:|---|\n| namespace host | #2 host:usnet.forward.cow=head-copy"
                        + " | COW bytes | " + cowBytes[0] + " | " + cowBytes[1] + " | ")) {
            assertTrue(report.contains(s), s + " not in\n" + report);
        }
        assertTrue(report.contains("![a.stream-0 cwnd](cwnd-a.stream-0.png)"), report);
        List<String> pngs = List.of("cwnd-a.stream-0.png", "latency-app-a.ping-0.png", "latency-app-a.rr-0.png", "latency-path-host_br0-hr2.png",
                "throughput.png", "cpu-model.png", "cpu-measured.png");
        for (String p : pngs) {
            assertPng(out.resolve(p));
        }
        try (Stream<Path> s = Files.list(out)) {
            assertEquals(s.filter(p -> p.toString().endsWith(".png")).count() + " charts",
                    r.out().replaceAll("(?s).*report.md and ([0-9]+ charts).*", "$1"));
        }
    }

    @Test
    void jobsDoNotChangeTheResultsAndSeedsGiveMediansWithMinAndMax(@TempDir Path tmp) throws IOException {
        Path f = topology(tmp);
        String[] json = new String[2];
        for (int j = 1; j <= 2; j++) {
            Path out = tmp.resolve("j" + j);
            // The first with the default warm-up, the second without: neither changes what is simulated.
            Result r = compare(f.toString(), "--vary", COW, "--seeds", "2", "--seed", "5", "--duration", "0.5",
                    "--jobs", String.valueOf(j), "--warm-up", j == 1 ? "1" : "0", "--out", out.toString());
            assertEquals(0, r.code(), r.out() + r.err());
            assertTrue(r.err().contains(j + " at a time"), r.err());
            assertEquals(j == 1, r.err().contains("usnet: compare: warm-up (the baseline for 0.5 virtual seconds, not"
                    + " counted): "), r.err());
            json[j - 1] = Files.readString(out.resolve("results.json"));
        }
        assertEquals(withoutMeasured(json[0]), withoutMeasured(json[1]));
        JsonNode vs = new ObjectMapper().readTree(json[1]).path("variants");
        assertEquals(4, vs.size());
        String[] expected = {"full-copy 5", "full-copy 6", "head-copy 5", "head-copy 6"};
        for (int i = 0; i < 4; i++) {
            assertEquals(expected[i], vs.get(i).path("vary").path("host:usnet.forward.cow").asText() + " "
                    + vs.get(i).path("seed").asLong());
            assertEquals(vs.get(i).path("seed").asLong(), vs.get(i).path("results").path("seed").asLong());
        }
        String report = Files.readString(tmp.resolve("j2").resolve("report.md"));
        assertTrue(report.contains("2 variants × 2 seeds (5, 6) = 4 runs. Each cell is the median over the seeds"), report);
        // The seeds draw different jitter, so the ping's percentiles differ between them: median (min–max).
        JsonNode ping0 = vs.get(0).path("results").path("apps").get(0);
        JsonNode ping1 = vs.get(1).path("results").path("apps").get(0);
        double a = ping0.path("p50_us").asDouble();
        double b = ping1.path("p50_us").asDouble();
        assertTrue(a != b, ping0 + " vs " + ping1);
        String cell = MetricTable.format((a + b) / 2) + " (" + MetricTable.format(Math.min(a, b)) + "–"
                + MetricTable.format(Math.max(a, b)) + ")";
        assertTrue(Pattern.compile("\\| #1 host:usnet\\.forward\\.cow=full-copy \\(baseline\\) \\| [0-9]+ \\| "
                + Pattern.quote(cell) + " \\|").matcher(report).find(), cell + " not in\n" + report);
    }

    @Test
    void theFilesExpectationsAreJudgedPerRunAndOneThatFailsExitsOne(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("cmp.yaml");
        Files.writeString(f, TOPOLOGY + "expect:\n  - ns host cow_bytes < 100000\n  - app a.ping-0 ok == 1\n");
        Path out = tmp.resolve("out");
        Result r = compare(f.toString(), "--vary", COW, "--duration", "0.5", "--warm-up", "0", "--out", out.toString());
        assertEquals(1, r.code(), r.out() + r.err());
        JsonNode vs = new ObjectMapper().readTree(out.resolve("results.json").toFile()).path("variants");
        long full = vs.get(0).path("results").path("namespaces").get(0).path("cow_bytes").asLong();
        assertTrue(full >= 100000, "full-copy copies the stream's payload: " + full);
        assertTrue(r.err().contains("usnet: compare: expect failed: #1 seed 1: " + f + ":22: ns host cow_bytes < 100000"
                + " (was " + full + ")"), r.err());
        assertFalse(r.err().contains("expect failed: #2"), r.err());
        String report = Files.readString(out.resolve("report.md"));
        assertTrue(report.contains("| variant | `ns host cow_bytes < 100000` | `app a.ping-0 ok == 1` |\n"), report);
        assertTrue(report.contains("| #1 host:usnet.forward.cow=full-copy (baseline) | **failed** (was " + full + ") | held |\n"),
                report);
        assertTrue(report.contains("| #2 host:usnet.forward.cow=head-copy | held | held |\n"), report);
    }

    @Test
    void aParameterVariesLikeAKnobAndIsInEachRunsParams(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("params.yaml");
        Files.writeString(f, TOPOLOGY.replace("name: cmp\n", "name: cmp\nparams:\n  rate: {default: 200mbit, doc: a's link}\n")
                .replace("netem: {rate: 200mbit,", "netem: {rate: \"${rate}\","));
        Path out = tmp.resolve("out");
        Result r = compare(f.toString(), "--param", "rate=50mbit,200mbit", "--vary", COW, "--duration", "0.5",
                "--warm-up", "0", "--out", out.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        JsonNode vs = new ObjectMapper().readTree(out.resolve("results.json").toFile()).path("variants");
        assertEquals(4, vs.size());
        // --vary first, then --param: the order the axes were given is the order of "vary".
        assertEquals("{\"host:usnet.forward.cow\":\"full-copy\",\"rate\":\"200mbit\"}", vs.get(1).path("vary").toString());
        double[] mbit = new double[4];
        for (int i = 0; i < 4; i++) {
            String rate = i % 2 == 0 ? "50mbit" : "200mbit";
            assertEquals(rate, vs.get(i).path("vary").path("rate").asText());
            assertEquals("{\"rate\":\"" + rate + "\"}", vs.get(i).path("results").path("params").toString());
            mbit[i] = vs.get(i).path("results").path("apps").get(1).path("mbit_s").asDouble();
        }
        // The stream is limited by a's link: about 50 and 200 Mbit/s.
        assertTrue(mbit[0] > 40 && mbit[0] < 50 && mbit[1] > 160 && mbit[1] < 200, java.util.Arrays.toString(mbit));
        assertEquals(mbit[0], mbit[2], 1e-9);

        Result bad = compare(f.toString(), "--param", "rate=50mbit,fast", "--out", tmp.resolve("bad").toString());
        assertEquals(Usnet.EXIT_USAGE, bad.code(), bad.out() + bad.err());
        assertTrue(bad.err().contains("'fast' is not a rate") && bad.err().contains("(with --param rate=fast)"), bad.err());
        Result undeclared = compare(f.toString(), "--param", "rtt=1,2", "--out", tmp.resolve("bad").toString());
        assertEquals(Usnet.EXIT_USAGE, undeclared.code());
        assertTrue(undeclared.err().contains("--param rtt=1: no parameter rtt in " + f + " (declared: rate)"), undeclared.err());
        assertFalse(Files.exists(tmp.resolve("bad")), "nothing is written");
    }

    @Test
    void inRealTimeEachVariantRunsAsTheDaemonWithItsKnob(@TempDir Path tmp) throws IOException {
        Path out = tmp.resolve("out");
        Result r = compare(topology(tmp).toString(), "--vary", COW, "--clock", "real", "--duration", "0.5", "--warm-up", "0",
                "--out", out.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        JsonNode vs = new ObjectMapper().readTree(out.resolve("results.json").toFile()).path("variants");
        assertEquals(2, vs.size());
        long[] cow = new long[2];
        for (int i = 0; i < 2; i++) {
            JsonNode res = vs.get(i).path("results");
            assertEquals("real", res.path("clock").asText());
            String policy = i == 0 ? "full-copy" : "head-copy";
            assertEquals(policy, vs.get(i).path("vary").path("host:usnet.forward.cow").asText());
            assertEquals(policy, res.path("knobs").path("host").path("usnet.forward.cow").asText());
            cow[i] = res.path("namespaces").get(0).path("cow_bytes").asLong();
            assertTrue(res.path("apps").get(0).path("ops").asLong() >= 5, res.path("apps").toString());
        }
        assertTrue(cow[0] > 10 * cow[1] && cow[1] > 0, cow[0] + " vs " + cow[1]);
        String report = Files.readString(out.resolve("report.md"));
        assertTrue(report.contains("0.5 seconds per run, clock real;"), report);
        CompareTest.assertPng(out.resolve("latency-app-a.ping-0.png"));
    }

    @Test
    void pathsOfAFewFloodedPacketsAreListedInOneLineWithoutTablesOrCharts(@TempDir Path tmp) throws IOException {
        // a's first ARP request for the bridge's address floods to the idle containers' ports: one flood path.
        Path f = tmp.resolve("flood.yaml");
        Files.writeString(f, """
                version: 1
                name: flood
                params:
                  idle: 3
                namespaces:
                  host:
                    devices:
                      - {name: br0, kind: bridge, ports: [hb1], addresses: [198.18.0.1/24]}
                  a:
                    devices:
                      - {name: eth0, kind: veth, addresses: [198.18.0.11/24], peer: {namespace: host, name: hb1}}
                    apps:
                      - {kind: ping, to: 198.18.0.1, interval: 0.01}
                  idle${i}:
                    count: ${idle}
                    devices:
                      - {name: eth0, kind: veth, addresses: ["198.18.0.${i+20}/24"], peer: {namespace: host, name: "hi${i}", master: br0}}
                """);
        Path out = tmp.resolve("out");
        Result r = compare(f.toString(), "--vary", "host:usnet.forward.cow=full-copy,head-copy", "--duration", "1",
                "--warm-up", "0", "--out", out.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        String md = Files.readString(out.resolve("report.md"));
        assertTrue(md.contains("### path host/hb1->br0"), md);
        assertTrue(out.resolve("latency-path-host_hb1-br0.png").toFile().isFile());
        assertTrue(md.contains("1 path carried fewer than 10 packets in every run (no table or chart): host/hb1->flood (3)."), md);
        assertFalse(md.contains("### path host/hb1->flood"), md);
        assertFalse(out.resolve("latency-path-host_hb1-flood.png").toFile().exists());
        // The idle containers received that one request each: listed, not tabled; host and a keep their tables.
        assertTrue(md.contains("3 namespaces received fewer than 10 packets in every run (no table or bar): idle0, idle1,"
                + " idle2."), md);
        assertFalse(md.contains("### namespace idle0"), md);
        assertTrue(md.contains("### namespace host") && md.contains("### namespace a"), md);
    }

    @Test
    void badKeysAndValuesAreErrorsBeforeAnythingRuns(@TempDir Path tmp) throws IOException {
        Path f = topology(tmp);
        Path out = tmp.resolve("out");
        Result r = compare(f.toString(), "--vary", "host:usnet.forward.cow=full-copy,bogus", "--vary",
                "usnet.forwrd.cow=a", "--vary", "nons:usnet.tcp.kernel=3.19", "--out", out.toString());
        assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("usnet: --vary host:usnet.forward.cow=bogus: usnet.forward.cow: 'bogus' is not one of"),
                r.err());
        assertTrue(r.err().contains("usnet: --vary usnet.forwrd.cow=a: unknown knob 'usnet.forwrd.cow' (did you mean"
                + " 'usnet.forward.cow'?)"), r.err());
        assertTrue(r.err().contains("usnet: --vary nons:usnet.tcp.kernel=3.19: no namespace 'nons'"), r.err());
        assertTrue(r.err().contains("; nothing was run"), r.err());
        assertFalse(r.err().contains(" done: "), r.err());
        assertFalse(r.err().contains("Exception"), r.err());
        assertFalse(Files.exists(out), "nothing is written");

        for (String[] bad : new String[][] {
                {"--vary", "usnet.forward.cow", "--vary usnet.forward.cow: expected [NS:]KEY=V1,V2,..."},
                {"--vary", "usnet.forward.cow=a,,b", "--vary usnet.forward.cow=a,,b: empty value"},
                {"--vary", "usnet.forward.cow=full-copy,full-copy", "value 'full-copy' is given twice"},
                {"--clock", "real", "--jobs", "2", "--jobs 2 with --clock real: runs at once would share the CPU"},
                {"--clock", "wall", "--clock must be virtual or real, got wall"},
                {"--jobs", "0", "--jobs must be 1..256, got 0"},
                {"--warm-up", "-1", "--warm-up must be 0 or a positive number of seconds, got -1.0"},
                {"--seeds", "1", "nothing to compare"}}) {
            List<String> args = new ArrayList<>(List.of(f.toString(), "--out", out.toString()));
            args.addAll(List.of(bad).subList(0, bad.length - 1));
            if (!bad[0].equals("--vary") && !bad[0].equals("--seeds")) {
                args.addAll(List.of("--vary", COW));
            }
            Result x = compare(args.toArray(String[]::new));
            assertEquals(Usnet.EXIT_USAGE, x.code(), String.join(" ", bad) + ": " + x.out() + x.err());
            assertTrue(x.err().contains(bad[bad.length - 1]), x.err());
        }
        Result twice = compare(f.toString(), "--vary", COW, "--vary", "host:usnet.forward.cow=skip-ttl", "--out",
                out.toString());
        assertEquals(Usnet.EXIT_USAGE, twice.code());
        assertTrue(twice.err().contains("host:usnet.forward.cow is varied twice"), twice.err());
        assertFalse(Files.exists(out), "nothing is written");
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> l = new ArrayList<>();
        it.forEachRemaining(l::add);
        return l;
    }
}
