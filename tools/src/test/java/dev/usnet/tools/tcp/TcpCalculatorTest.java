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
}
