package dev.usnet.tools.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The public vectors of tcp-variants.md through the calculator CLI. */
class TcpCalculatorTest {

    private record Out(int code, String out, String err) {}

    private static Out run(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true));
        return new Out(code, so.toString().trim(), se.toString());
    }

    private static String calls(int n, String wa) {
        return String.join(",", java.util.Collections.nCopies(n, wa));
    }

    @Test
    void creditBugVectorD() {
        String c = calls(40, "50:1") + "," + calls(4, "2:1");
        String[] k318 = run("tcp", "ai", "--kernel", "3.18", "--cwnd", "20", "--cnt", "0", "--calls", c).out.split("\n");
        String[] k319 = run("tcp", "ai", "--kernel", "3.19", "--cwnd", "20", "--cnt", "0", "--calls", c).out.split("\n");
        String[] k40 = run("tcp", "ai", "--kernel", "4.0", "--cwnd", "20", "--cnt", "0", "--calls", c).out.split("\n");
        assertEquals(44, k319.length);
        assertEquals("20/40", k319[39]);
        assertEquals("21/0 21/1 21/2 22/0", String.join(" ", java.util.Arrays.copyOfRange(k318, 40, 44)));
        assertEquals("40/1 41/0 41/1 42/0", String.join(" ", java.util.Arrays.copyOfRange(k319, 40, 44)));
        assertEquals("21/1 22/0 22/1 23/0", String.join(" ", java.util.Arrays.copyOfRange(k40, 40, 44)));
    }

    @Test
    void vectorsBCEAndI() {
        assertEquals("10/4\n10/8\n11/2\n11/6\n12/0", run("tcp", "ai", "--kernel", "3.19", "--cwnd", "10", "--cnt", "0",
                "--calls", calls(5, "10:4")).out);
        assertEquals("10/1", run("tcp", "ai", "--kernel", "3.18", "--cwnd", "10", "--cnt", "0", "--calls", "10:64").out);
        assertEquals("16/4", run("tcp", "ai", "--kernel", "4.0", "--cwnd", "10", "--cnt", "0", "--calls", "10:64").out);
        assertEquals("22/0\n23/0\n24/0", run("tcp", "ai", "--kernel", "4.0", "--cwnd", "20", "--cnt", "45",
                "--calls", calls(3, "2:2")).out);
        assertEquals("43/1\n44/1\n45/1", run("tcp", "ai", "--kernel", "3.19", "--cwnd", "20", "--cnt", "45",
                "--calls", calls(3, "2:2")).out);
        assertEquals("10/1\n10/2\n11/0\n11/1", run("tcp", "ai", "--kernel", "3.18", "--cwnd", "10", "--cnt", "0",
                "--calls", calls(4, "2:2")).out);
    }

    @Test
    void renoVectors() {
        String[] kernels = {"3.18", "3.19", "4.0", "4.3"};
        String[] expect = {"11/0", "11/2", "11/2", "10/3"};
        for (int i = 0; i < kernels.length; i++) {
            assertEquals(expect[i], run("tcp", "reno", "--kernel", kernels[i], "--cwnd", "8", "--cnt", "0", "--ssthresh", "10",
                    "--acked", "5").out, kernels[i]);
            assertEquals(expect[i], run("tcp", "reno", "--kernel", kernels[i], "--cwnd", "10", "--cnt", "0", "--ssthresh", "10",
                    "--acked", "3").out, kernels[i]);
        }
    }

    @Test
    void badInputIsExit2WithTheOptionNamed() {
        Out o = run("tcp", "ai", "--kernel", "5.0", "--cwnd", "1", "--cnt", "0", "--calls", "1:1");
        assertEquals(Usnet.EXIT_USAGE, o.code);
        assertTrue(o.err.contains("--kernel"), o.err);
        o = run("tcp", "ai", "--kernel", "4.0", "--cwnd", "1", "--cnt", "0", "--calls", "1-1");
        assertEquals(Usnet.EXIT_USAGE, o.code);
        assertTrue(o.err.contains("'1-1'"), o.err);
    }

    private static Out cubic(String kernel, int hz, long wmax, long cwnd, String delayMinMs, long atMs, String... extra) {
        java.util.List<String> a = new java.util.ArrayList<>(java.util.List.of("tcp", "cubic", "--kernel", kernel,
                "--hz", Integer.toString(hz), "--wmax", Long.toString(wmax), "--cwnd", Long.toString(cwnd),
                "--delay-min-ms", delayMinMs, "--at-ms", Long.toString(atMs)));
        a.addAll(java.util.List.of(extra));
        return run(a.toArray(String[]::new));
    }

    @Test
    void cubicSanityVector() {
        Out o = cubic("4.0", 1000, 100, 70, "1", 500);
        assertEquals(0, o.code, o.err);
        assertEquals("4316 80 7", o.out);
        assertEquals("4316 87 4", cubic("4.0", 1000, 100, 70, "1", 1000).out);
        assertEquals("4316 87 4", cubic("4.3", 1000, 100, 70, "1", 1000).out);
        assertEquals("4316 87 4", cubic("3.19", 1000, 100, 70, "1", 1000).out);
        // 3.18: cnt divided by the initial delayed-ACK ratio of 2 packets per ACK.
        assertEquals("4316 80 3", cubic("3.18", 1000, 100, 70, "1", 500).out);
    }

    @Test
    void cubicPerHzAndDelayMin() {
        // The same instant in jiffies of 1000, 250 and 100 Hz, with 1 ms of delay_min rounded up to one jiffy.
        assertEquals("20033 7026 269", cubic("4.0", 1000, 10_000, 7000, "1", 50).out);
        assertEquals("20033 7026 269", cubic("4.0", 250, 10_000, 7000, "1", 50).out);
        assertEquals("20033 7030 233", cubic("4.0", 100, 10_000, 7000, "1", 50).out);
        // No RTT sample yet vs a veth-like 50 µs one (1/8 ms at least: still no whole jiffy at HZ 1000).
        assertEquals("4316 71 70", cubic("4.0", 1000, 100, 70, "0", 0).out);
        assertEquals("4316 71 70", cubic("4.0", 1000, 100, 70, "0.05", 0).out);
    }

    @Test
    void cubicFloorAndOverrides() {
        // 20 s into the epoch the target runs far ahead: cnt is the floor, 1 before 4.0 and 2 from it.
        assertEquals("4316 1675 1", cubic("3.19", 1000, 100, 70, "1", 20_000).out);
        assertEquals("4316 1675 2", cubic("4.0", 1000, 100, 70, "1", 20_000).out);
        assertEquals("4316 1675 1", cubic("4.0", 1000, 100, 70, "1", 20_000, "--set", "usnet.tcp.cubic_cnt_floor=1").out);
        // Before the first loss: K 0 and the cnt cap of 20.
        assertEquals("0 100 20", cubic("4.3", 1000, 0, 100, "1", 1000).out);
    }

    @Test
    void cubicBadInputIsExit2WithAMessage() {
        String[][] bad = {
            {"5.0", "1000", "100", "70", "1", "500", "--kernel"},
            {"4.0", "50", "100", "70", "1", "500", "--hz: "},
            {"4.0", "1000", "100", "0", "1", "500", "--cwnd must be between 1 and"},
            {"4.0", "1000", "-1", "70", "1", "500", "--wmax must be between 0 and"},
            {"4.0", "1000", "100", "70", "-1", "500", "--delay-min-ms must be between 0 and 120000"},
            {"4.0", "1000", "100", "70", "abc", "500", "--delay-min-ms: 'abc' is not a number"},
            {"4.0", "1000", "100", "70", "0.0001", "500", "finer than the 1 µs"},
            {"4.0", "1000", "100", "70", "1", "-5", "--at-ms must be between 0 and"},
        };
        for (String[] b : bad) {
            Out o = cubic(b[0], Integer.parseInt(b[1]), Long.parseLong(b[2]), Long.parseLong(b[3]), b[4], Long.parseLong(b[5]));
            assertEquals(Usnet.EXIT_USAGE, o.code, String.join(" ", b));
            assertTrue(o.err.contains(b[6]), o.err);
        }
        Out o = cubic("4.0", 1000, 100, 70, "1", 500, "--set", "usnet.tcp.cubic_cnt_floor=3");
        assertEquals(Usnet.EXIT_USAGE, o.code);
        assertTrue(o.err.contains("--set: usnet.tcp.cubic_cnt_floor: '3' is not one of 1, 2"), o.err);
        o = cubic("4.0", 1000, 100, 70, "1", 500, "--set", "floor");
        assertEquals(Usnet.EXIT_USAGE, o.code);
        assertTrue(o.err.contains("'floor' is not KEY=VALUE"), o.err);
        o = run("tcp", "cubic", "--kernel", "4.0", "--wmax", "100", "--cwnd", "x70", "--delay-min-ms", "1", "--at-ms", "5");
        assertEquals(Usnet.EXIT_USAGE, o.code);
        assertTrue(o.err.contains("--cwnd"), o.err);
    }
}
