package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.kernel.KernelNet;
import dev.usnet.tools.kernel.Privileges;
import dev.usnet.tools.kernel.UsnetMark;
import dev.usnet.tools.run.CleanupCommand;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code usnet cleanup FILE} with a fake kernel: what it deletes, what it leaves alone and why, its exit code. */
class CleanupCommandTest {
    private static final String FILE = """
            kernel:
              namespaces: [usnet-a, usnet-b, usnet-c, usnet-d]
            namespaces:
              sw:
                devices:
                  - {name: br0, kind: bridge, ports: [t0, t1]}
                  - {name: t0, kind: tap, kernel: {namespace: usnet-a, name: usnet-a0}}
                  - {name: t1, kind: tap, kernel: {name: usnet-pt0}}
            """;

    private record Result(int code, String out, String err) {}

    private static Result cleanup(Path file, DaemonTest.FakeKernel k, Privileges p) {
        CleanupCommand c = new CleanupCommand(k, p);
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        CommandLine cl = new CommandLine(c);
        cl.setOut(new PrintWriter(so, true));
        cl.setErr(new PrintWriter(se, true));
        int code = cl.execute(file.toString());
        return new Result(code, so.toString(), se.toString());
    }

    private static Path file(Path tmp) throws IOException {
        Path f = tmp.resolve("topo.yaml");
        Files.writeString(f, FILE);
        return f;
    }

    @Test
    void onlyNamespacesOfAUsnetRunThatIsGoneAreDeleted(@TempDir Path tmp) throws IOException {
        DaemonTest.FakeKernel k = new DaemonTest.FakeKernel();
        UsnetMark gone = new UsnetMark(ProcessHandle.current().pid(), Instant.EPOCH);
        k.existingNamespace("usnet-a", gone.format());
        k.existingNamespace("usnet-b", null);
        k.existingNamespace("usnet-c", UsnetMark.ofThisProcess().format());
        k.links.put("/usnet-pt0", new KernelNet.Link("usnet-pt0", "tap", null, true));
        Path f = file(tmp);
        Result r = cleanup(f, k, Privileges.all());
        assertEquals(List.of("netns del usnet-a"), k.commands);
        assertEquals(List.of(
                "usnet: deleted kernel namespace usnet-a (left by usnet pid " + gone.pid() + ", started 1970-01-01T00:00:00Z,"
                        + " no longer running)",
                "usnet: left alone: kernel namespace usnet-b already exists (not created by usnet); delete it (ip netns del"
                        + " usnet-b) or choose another name",
                "usnet: left alone: kernel namespace usnet-c already exists and belongs to a running usnet (pid "
                        + ProcessHandle.current().pid() + ", started " + UsnetMark.ofThisProcess().started() + "); stop that one first",
                "usnet: left alone: interface usnet-pt0 already exists (not created by usnet); delete it or choose another name"),
                List.of(r.out.split("\n")));
        // A running usnet's namespace is still there: not done.
        assertEquals(1, r.code, r.err);

        k.existing.remove("usnet-c");
        k.commands.clear();
        r = cleanup(f, k, Privileges.all());
        assertEquals(List.of(), k.commands);
        assertEquals(0, r.code, r.out + r.err);
        k.existing.remove("usnet-b");
        k.links.clear();
        r = cleanup(f, k, Privileges.all());
        assertEquals("usnet: nothing to clean up: none of " + f + "'s kernel namespaces and interfaces exist\n", r.out);
        assertEquals(0, r.code);
    }

    @Test
    void withoutTheCapabilitiesItSaysSoAndTouchesNothing(@TempDir Path tmp) throws IOException {
        DaemonTest.FakeKernel k = new DaemonTest.FakeKernel();
        k.existingNamespace("usnet-a", new UsnetMark(1, Instant.EPOCH).format());
        Result r = cleanup(file(tmp), k, () -> 0L);
        assertEquals(2, r.code);
        assertTrue(r.err.contains("needs CAP_NET_ADMIN and CAP_SYS_ADMIN") && r.err.contains("run as root (sudo)"), r.err);
        assertEquals(List.of(), k.commands);
    }
}
