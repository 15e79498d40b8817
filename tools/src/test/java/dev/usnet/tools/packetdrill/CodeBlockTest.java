package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CodeBlockTest {

    private static Map<String, Object> vars(Object... kv) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private static String failure(String code, Map<String, Object> v) {
        return assertThrows(CodeBlock.AssertionFailed.class, () -> CodeBlock.run(code, 10, v)).getMessage();
    }

    @Test
    void comparisonChainsArithmeticAndBooleans() {
        Map<String, Object> v = vars("tcpi_rtt", 15_000L, "tcpi_snd_cwnd", 10L, "tcpi_ca_state", 3L);
        CodeBlock.run("""
                assert 5000 <= tcpi_rtt <= 20000, 'srtt=%d us' % tcpi_rtt
                assert tcpi_ca_state == TCP_CA_Recovery
                assert tcpi_snd_cwnd * 2 // 3 == 6 and not tcpi_snd_cwnd < 10
                assert (tcpi_snd_cwnd + 5) % 4 == 3 or False
                assert 7 / 2 == 3.5; assert -7 // 2 == -4; assert 2 ** 10 == 1024
                x = tcpi_snd_cwnd - 1
                print('cwnd', x)
                assert x == 9, (x, tcpi_snd_cwnd)
                assert max(1, x, 3) == 9 and abs(-4) == 4
                """, 1, v);
        assertEquals(9L, v.get("x"));
    }

    @Test
    void aFailedAssertShowsTheExpressionTheMessageAndTheTcpInfoValues() {
        String m = failure("assert 98000 <= tcpi_rwnd_limited <= 110000, tcpi_rwnd_limited",
                vars("tcpi_rwnd_limited", 5L));
        assertEquals("assertion failed: 98000 <= tcpi_rwnd_limited <= 110000 (5); tcpi_rwnd_limited=5", m);
        String t = failure("assert tcpi_a == tcpi_b, 'a=%d b=%d' % (tcpi_a, tcpi_b)", vars("tcpi_a", 1L, "tcpi_b", 2L));
        assertEquals("assertion failed: tcpi_a == tcpi_b (a=1 b=2); tcpi_a=1 tcpi_b=2", t);
        String tuple = failure("assert tcpi_a > 1, (tcpi_a, 'x')", vars("tcpi_a", 1L));
        assertEquals("assertion failed: tcpi_a > 1 ((1, 'x')); tcpi_a=1", tuple);
    }

    @Test
    void continuedLinesAndSemicolonsAndTheLineOfTheFailure() {
        CodeBlock.AssertionFailed f = assertThrows(CodeBlock.AssertionFailed.class, () -> CodeBlock.run(
                " assert tcpi_a == 1, tcpi_a;\\\n assert tcpi_b == 1, tcpi_b;\\\n", 20, vars("tcpi_a", 1L,
                        "tcpi_b", 2L)));
        assertEquals(21, f.line);
    }

    @Test
    void unknownNamesAndUnsupportedStatementsAreErrors() {
        CodeBlock.CodeException e = assertThrows(CodeBlock.CodeException.class,
                () -> CodeBlock.run("assert tcpi_nope == 1", 5, vars()));
        assertEquals("the target's tcp_info has no field tcpi_nope", e.getMessage());
        assertThrows(CodeBlock.CodeException.class, () -> CodeBlock.run("if 1: pass", 5, vars()));
        assertThrows(CodeBlock.CodeException.class, () -> CodeBlock.run("assert 1 // 0", 5, vars()));
    }
}
