package dev.usnet.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** Mistakes on the command line are said in usnet's words, naming the command and the option. */
class CliErrorsTest {
    private record Result(int code, String err) {}

    private static Result run(String... args) {
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(new StringWriter(), true), new PrintWriter(se, true));
        return new Result(code, se.toString());
    }

    private static String firstLine(Result r) {
        return r.err().lines().findFirst().orElse("");
    }

    @Test
    void aValueOfTheWrongTypeNamesTheOptionAndWhatItTakes() {
        Result r = run("run", "--duration", "5x", "t.yaml");
        assertEquals(Usnet.EXIT_USAGE, r.code());
        assertEquals("usnet run: --duration takes a number (like 2 or 0.5), got '5x'", firstLine(r));
        r = run("run", "--threads", "two", "t.yaml");
        assertEquals("usnet run: --threads takes a whole number, got 'two'", firstLine(r));
        assertFalse(r.err().contains("is not a"), r.err());
    }

    @Test
    void unmatchedArgumentsAreUnknownCommandsOptionsOrOneArgumentTooMany() {
        Result r = run("frobnicate");
        assertEquals(Usnet.EXIT_USAGE, r.code());
        assertTrue(firstLine(r).startsWith("usnet: unknown command 'frobnicate' (commands: demo, run, ctl,"), r.err());
        r = run("run", "--frob", "t.yaml");
        assertEquals("usnet run: unknown option '--frob'", firstLine(r));
        r = run("run", "a.yaml", "b.yaml");
        assertEquals("usnet run: unexpected argument 'b.yaml' (this command takes no more)", firstLine(r));
        assertFalse(r.err().contains("Unmatched argument at index"), r.err());
    }
}
