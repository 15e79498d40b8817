package dev.usnet.tools.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet experiment credit-bug} from the command line: bad input exits 2 naming the option, a run writes its files. */
class ExperimentCommandTest {
    private record Out(int code, String out, String err) {}

    private static Out run(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true));
        return new Out(code, so.toString(), se.toString());
    }

    @TempDir
    Path tmp;

    @Test
    void badInputNamesTheOptionAndExitsTwo() {
        Out k = run("experiment", "credit-bug", "--out", tmp.toString(), "--kernel", "5.10");
        assertEquals(2, k.code());
        assertTrue(k.err().contains("--kernel") && k.err().contains("5.10"), k.err());
        Out s = run("experiment", "credit-bug", "--out", tmp.toString(), "--set", "usnet.tcp.ai=sideways");
        assertEquals(2, s.code());
        assertTrue(s.err().contains("usnet.tcp.ai") && s.err().contains("per-ack"), s.err());
        Out h = run("experiment", "credit-bug", "--out", tmp.toString(), "--hz", "1001");
        assertEquals(2, h.code());
        assertTrue(h.err().contains("--hz"), h.err());
    }

    @Test
    void hzIsCheckedAsTcpCubicChecksIt() {
        for (String bad : new String[] {"99", "1001", "0"}) {
            Out e = run("experiment", "credit-bug", "--out", tmp.toString(), "--hz", bad);
            StringWriter so = new StringWriter();
            StringWriter se = new StringWriter();
            int code = Usnet.execute(new String[] {"tcp", "cubic", "--kernel", "4.0", "--hz", bad, "--wmax", "100",
                "--cwnd", "70", "--delay-min-ms", "1", "--at-ms", "500"}, new PrintWriter(so, true), new PrintWriter(se, true));
            assertEquals(2, e.code(), e.err());
            assertEquals(2, code, se.toString());
            assertEquals(se.toString(), e.err(), "the same message from both commands");
            assertTrue(e.err().startsWith("usnet: --hz: ") && e.err().contains(bad), e.err());
        }
    }

    /** Records each flush of the output with when it happened. */
    private static final class FlushLog extends java.io.Writer {
        final java.util.List<String> chunks = new java.util.ArrayList<>();
        private final StringBuilder pending = new StringBuilder();

        @Override
        public synchronized void write(char[] c, int off, int len) {
            pending.append(c, off, len);
        }

        @Override
        public synchronized void flush() {
            if (!pending.isEmpty()) {
                chunks.add(pending.toString());
                pending.setLength(0);
            }
        }

        @Override
        public void close() {}
    }

    @Test
    void theHeaderComesAtOnceAndEachPresetIsReportedAsItFinishes() {
        FlushLog log = new FlushLog();
        int code = Usnet.execute(new String[] {"experiment", "credit-bug", "--out", tmp.toString(), "--kernel", "3.18,3.19",
            "--bursts", "3", "--burst-bytes", "100000", "--compute-us", "1000"}, new PrintWriter(log, false),
                new PrintWriter(new StringWriter(), true));
        log.flush();
        assertEquals(0, code, String.join("", log.chunks));
        // The header is written out by itself, before the first preset has run; then one flush per preset.
        String first = log.chunks.get(0);
        assertTrue(first.startsWith("credit-bug: 3 bursts of 100000 bytes"), first);
        assertTrue(first.contains("running 2 kernel presets in virtual time: 3.18, 3.19") && !first.contains("done"), first);
        assertTrue(log.chunks.size() >= 4, "header, two presets, the table: " + log.chunks);
        assertTrue(log.chunks.get(1).startsWith("preset 3.18 done (1 of 2, "), log.chunks.get(1));
        assertTrue(log.chunks.get(2).startsWith("preset 3.19 done (2 of 2, "), log.chunks.get(2));
        assertTrue(String.join("", log.chunks.subList(3, log.chunks.size())).contains("kernel burst p50 us"), log.chunks.toString());
    }

    @Test
    void oneSwitchOnItsOwnTakesTheCreditBugOutOf319() throws Exception {
        String[] common = {"experiment", "credit-bug", "--kernel", "3.19", "--rate-mbit", "1000", "--queue", "100",
            "--burst-bytes", "296000", "--compute-us", "300000", "--bursts", "30"};
        Out with = run(concat(common, "--out", tmp.resolve("bug").toString()));
        Out without = run(concat(common, "--out", tmp.resolve("revert").toString(), "--set", "usnet.tcp.ai=per-ack"));
        assertEquals(0, with.code(), with.err());
        assertEquals(0, without.code(), without.err());
        assertTrue(without.out().contains("knobs on both ends: {usnet.tcp.ai=per-ack}"), without.out());
        assertTrue(Files.exists(tmp.resolve("revert").resolve("cwnd-3.19.png")));
        long jumpWith = jump(with.out());
        long jumpWithout = jump(without.out());
        assertTrue(jumpWith > 5 * jumpWithout, "one-ACK jump " + jumpWith + " with the 3.19 rule, " + jumpWithout + " without");
    }

    /** The bundled examples/credit-bug.yaml, as a user would copy and edit it. */
    private static String bundledYaml() throws Exception {
        try (var in = CreditBugExperiment.class.getResourceAsStream(CreditBugExperiment.RESOURCE)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    @Test
    void anEditedCopyOfTheTopologyFileIsWhatRunsAndTheOptionsOverrideIt() throws Exception {
        String yaml = bundledYaml().replace("burst_size: 2m", "burst_size: 100000").replace("count: 300", "count: 3")
                .replace("compute: 100ms", "compute: 2ms").replace("rate: 10gbit, delay: 10us, limit: 1000",
                        "rate: 1gbit, delay: 25us, limit: 200").replace("usnet.hz: 1000", "usnet.hz: 250");
        Path f = tmp.resolve("edited.yaml");
        Files.writeString(f, yaml);
        Out o = run("experiment", "credit-bug", "--file", f.toString(), "--kernel", "4.3", "--out", tmp.resolve("o").toString());
        assertEquals(0, o.code(), o.err());
        assertTrue(o.out().startsWith("credit-bug: 3 bursts of 100000 bytes, 2.000 ms compute, CUBIC, link 1 Gbit/s, one-way"
                + " delay 25.0 us, receive queue 200 frames, HZ 250, 1448-byte segments, seed 1\n"), o.out());
        assertEquals(4, Files.readAllLines(tmp.resolve("o").resolve("bursts-4.3.csv")).size());
        // Options override what the file says.
        Out q = run("experiment", "credit-bug", "--file", f.toString(), "--kernel", "4.3", "--queue", "50", "--bursts", "2",
                "--hz", "1000", "--seed", "9", "--out", tmp.resolve("q").toString());
        assertEquals(0, q.code(), q.err());
        assertTrue(q.out().startsWith("credit-bug: 2 bursts of 100000 bytes, 2.000 ms compute, CUBIC, link 1 Gbit/s, one-way"
                + " delay 25.0 us, receive queue 50 frames, HZ 1000, 1448-byte segments, seed 9\n"), q.out());
        assertEquals(3, Files.readAllLines(tmp.resolve("q").resolve("bursts-4.3.csv")).size());
    }

    @Test
    void aBrokenTopologyFileIsRefusedWithItsLine() throws Exception {
        Path f = tmp.resolve("broken.yaml");
        Files.writeString(f, bundledYaml().replace("compute: 100ms", "compute: 100"));
        Out o = run("experiment", "credit-bug", "--file", f.toString(), "--out", tmp.resolve("o").toString());
        assertEquals(2, o.code());
        assertTrue(o.err().contains(f + ":") && o.err().contains("namespaces.node1.apps[0].compute: '100' needs a unit"),
                o.err());
        Path noBurst = tmp.resolve("no-burst.yaml");
        Files.writeString(noBurst, "namespaces:\n  a: {}\n");
        Out n = run("experiment", "credit-bug", "--file", noBurst.toString(), "--out", tmp.resolve("n").toString());
        assertEquals(2, n.code());
        assertTrue(n.err().contains("needs a burst app"), n.err());
    }

    private static String[] concat(String[] a, String... b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** The "max cwnd jump" column of the summary's 3.19 row. */
    private static long jump(String out) {
        for (String line : out.split("\n")) {
            if (line.startsWith("3.19 ")) {
                String[] f = line.trim().split("\\s+");
                return Long.parseLong(f[6]);
            }
        }
        throw new AssertionError("no 3.19 row in\n" + out);
    }
}
