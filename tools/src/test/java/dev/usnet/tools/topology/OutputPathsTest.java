package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.RunCommandTest.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet run} checks where it will write before anything runs (exit 2 with the reason in strerror's words), and
 * a run whose histograms could not be written exits non-zero.
 */
class OutputPathsTest {
    /** a -- b, a ping and a request/response app (which writes a histogram), a delay so the clock moves. */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    netem: {delay: 1ms}
                    peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}
                apps:
                  - {kind: rr, server: b, count: 10}
              b: {}
            """;

    private static Path topology(Path tmp) throws IOException {
        Path f = tmp.resolve("t.yaml");
        Files.writeString(f, FILE);
        return f;
    }

    @Test
    void anOutputDirectoryThatIsAFileIsRefusedBeforeTheRun(@TempDir Path tmp) throws IOException {
        Path f = topology(tmp);
        Path afile = Files.writeString(tmp.resolve("afile"), "x");
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", afile.toString(), f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("--out " + afile + ": Not a directory"), r.err());
        assertFalse(r.out().contains("deleted"), "nothing ran: " + r.out());
        // Below a file: the file is named.
        r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", afile.resolve("sub").toString(),
                f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains(afile + ": Not a directory"), r.err());
        r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", tmp.resolve("o").toString(),
                "--results", afile.resolve("r.json").toString(), f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("--results " + afile.resolve("r.json") + ": " + afile + ": Not a directory"), r.err());
        r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", tmp.resolve("o").toString(),
                "--results", tmp.toString(), f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("--results " + tmp + ": Is a directory"), r.err());
    }

    @Test
    void aResultsFileThatWouldMakeADirectoryAtTheFilesystemRootIsRefused(@TempDir Path tmp) throws IOException {
        Path f = topology(tmp);
        Path root = Path.of("/usnet-test-no-such-dir-" + ProcessHandle.current().pid());
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", tmp.resolve("o").toString(),
                "--results", root.resolve("r.json").toString(), f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains(root + ": No such file or directory; usnet does not make directories at the"
                + " filesystem root"), r.err());
        assertFalse(Files.exists(root));
        // Deeper down, a missing directory is made as before.
        r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", tmp.resolve("o").toString(),
                "--results", tmp.resolve("new/dir/r.json").toString(), f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(Files.isRegularFile(tmp.resolve("new/dir/r.json")));
    }

    @Test
    void aRunWhoseHistogramCannotBeWrittenSaysWhyAndExitsNonZero(@TempDir Path tmp) throws IOException {
        Path f = topology(tmp);
        Path out = tmp.resolve("o");
        // A non-empty directory where the histogram goes: the run completes, the histogram cannot replace it.
        Files.createDirectories(out.resolve("a.rr-198.18.0.2-5001.hgrm/x"));
        Result r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "0.2", "--out", out.toString(), f.toString());
        assertEquals(1, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("cannot write " + out.resolve("a.rr-198.18.0.2-5001.hgrm") + ": "), r.err());
        assertTrue(r.err().matches("(?s).*cannot write \\S+: [A-Z][a-z]+[^\\n]*.*"), "a reason in words: " + r.err());
    }
}
