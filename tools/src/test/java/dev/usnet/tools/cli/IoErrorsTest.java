package dev.usnet.tools.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An I/O failure is reported with its reason, not only the path Java's exception carries as its message. */
class IoErrorsTest {

    @Test
    void pathOnlyExceptionsGetTheirStrerrorWords(@TempDir Path tmp) {
        Path f = tmp.resolve("out/a.pcap");
        IOException missing = assertThrowsIo(() -> Files.newOutputStream(f));
        assertEquals(f.toString(), missing.getMessage(), "the JDK's message is the path alone");
        assertEquals(f + ": No such file or directory", IoErrors.describe(f, missing));
        assertEquals(f + ": Permission denied", IoErrors.describe(f, new AccessDeniedException(f.toString())));
        assertEquals(f + ": Is a directory", IoErrors.describe(f, new FileSystemException(f.toString(), null, "Is a directory")));
        assertEquals(f + ": No such file or directory (" + tmp.resolve("out") + ")",
                IoErrors.describe(f, new NoSuchFileException(tmp.resolve("out").toString())));
        assertEquals(f + ": IOException", IoErrors.describe(f, new IOException()));
        assertEquals(f + ": disk on fire", IoErrors.describe(f, new IOException("disk on fire")));
    }

    @Test
    void theDemoSaysWhyItCannotWriteItsOutput(@TempDir Path tmp) throws IOException {
        Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(new String[] {"demo", "--out", file.resolve("out").toString()}, new PrintWriter(so, true),
                new PrintWriter(se, true));
        assertEquals(Usnet.EXIT_USAGE, code, so + "" + se);
        assertTrue(se.toString().contains("cannot write the demo's captures and histograms: " + file.resolve("out")), se.toString());
        assertTrue(se.toString().contains("Not a directory") || se.toString().contains("File exists"), se.toString());
    }

    private interface IoAction {
        Object run() throws IOException;
    }

    private static IOException assertThrowsIo(IoAction a) {
        try {
            a.run();
        } catch (IOException e) {
            return e;
        }
        throw new AssertionError("no IOException");
    }
}
