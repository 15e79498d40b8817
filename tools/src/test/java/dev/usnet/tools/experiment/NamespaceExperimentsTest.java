package dev.usnet.tools.experiment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tap.HostCommand;
import dev.usnet.tap.netns.Netns;
import dev.usnet.tools.Usnet;
import dev.usnet.tools.experiment.nsid.KernelNsidQueries;
import dev.usnet.tools.experiment.nsid.NsidExperiment;
import dev.usnet.tools.experiment.pidns.KernelPidnsLoops;
import dev.usnet.tools.experiment.pidns.PidnsExperiment;
import dev.usnet.tools.experiment.pidns.UsnetPidCosts;
import dev.usnet.tools.kernel.Privileges;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet experiment nsid} and {@code usnet experiment pidns} with tiny sizes: both tables and the historical
 * figures, a clear word naming CAP_SYS_ADMIN when the kernel part cannot run (and the usnet part still printed), bad
 * options refused, kernel namespaces deleted afterwards. The kernel parts need root: skipped without it, required
 * when CI=true.
 */
class NamespaceExperimentsTest {
    private record Out(int code, String out, String err) {}

    private static Out run(String... args) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int code = Usnet.execute(args, new PrintWriter(so, true), new PrintWriter(se, true));
        return new Out(code, so.toString(), se.toString());
    }

    private static void requireRoot() {
        boolean root = HostCommand.isRoot() && HostCommand.has("ip") && HostCommand.has("unshare");
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(root, "CI must provide root, iproute2 and unshare");
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(root, "needs root, iproute2 and unshare");
        }
    }

    /** Kernel namespaces of this process the nsid experiment may have left. */
    private static List<String> ownNetns() throws IOException {
        Path dir = Path.of(Netns.RUN_DIR);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        String prefix = KernelNsidQueries.PREFIX + "-" + ProcessHandle.current().pid() + "-";
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix)).toList();
        }
    }

    @Test
    void nsidPrintsTheUsnetAndKernelTablesBesideTheHistoricalOneAndLeavesNoNamespace(@TempDir Path tmp) throws Exception {
        requireRoot();
        Path json = tmp.resolve("nsid.json");
        Out o = run("experiment", "nsid", "--namespaces", "1,20", "--queries", "300", "--kernel-namespaces", "3",
                "--kernel-queries", "300", "--json", json.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("historical: RTM_GETADDR with IFA_IF_NETNSID, mean 81 us per query, against 162 us"), o.out());
        for (String n : new String[] {"1", "20"}) {
            for (String dump : new String[] {"addresses", "links"}) {
                assertTrue(Pattern.compile("\n  " + n + " +" + dump + " +[0-9.]+ \\([0-9.]+\\) +[0-9.]+ \\([0-9.]+\\) +[0-9.]+x")
                        .matcher(o.out()).find(), n + " " + dump + " in\n" + o.out());
            }
        }
        Matcher k = Pattern.compile("\n  3 +([0-9.]+) \\([0-9.]+\\) +([0-9.]+) \\([0-9.]+\\) +([0-9.]+) \\([0-9.]+\\) +[0-9.]+x")
                .matcher(o.out());
        assertTrue(k.find(), o.out());
        assertTrue(Double.parseDouble(k.group(1)) > 0 && Double.parseDouble(k.group(3)) > 0);
        assertEquals(List.of(), ownNetns(), "every kernel namespace the run created is gone");
        JsonNode doc = new ObjectMapper().readTree(json.toFile());
        assertEquals(8, doc.path("usnet").size(), "2 counts x 2 dumps x 2 ways");
        assertEquals(3, doc.path("kernel").size(), "1 count x 3 ways");
        assertEquals(300, doc.path("kernel").get(0).path("queries").asInt());
        assertEquals("RTM_GETADDR by nsid", doc.path("kernel").get(0).path("mode").asText());
    }

    @Test
    void withoutCapSysAdminTheKernelPartsSaySoAndTheUsnetPartsStillRun() throws Exception {
        Privileges none = () -> 0;
        StringWriter s = new StringWriter();
        NsidExperiment.run(new NsidExperiment.Options(List.of(2), 200, 1, true, List.of(2), 200, null), none,
                new PrintWriter(s, true));
        String out = s.toString();
        assertTrue(out.contains("usnet, real time, 1 event loop:"), out);
        assertTrue(out.contains("kernel part skipped: it needs root: CAP_SYS_ADMIN to create kernel namespaces (ip netns add)"
                + " and to setns() into them"), out);
        StringWriter p = new StringWriter();
        PidnsExperiment.run(new PidnsExperiment.Options(new UsnetPidCosts.Params(List.of(1), 1, 100, 100, 1, 10), true,
                new KernelPidnsLoops.Params(List.of(0, 1), 10, 1), null), none, new PrintWriter(p, true));
        assertTrue(p.toString().contains("usnet's model, in process"), p.toString());
        assertTrue(p.toString().contains("kernel part skipped: it needs root: CAP_SYS_ADMIN for unshare --pid"), p.toString());
    }

    @Test
    void pidnsPrintsEveryModelAndDepthAndTheKernelsDepthsWithTheirNspid(@TempDir Path tmp) throws Exception {
        requireRoot();
        Path json = tmp.resolve("pidns.json");
        Out o = run("experiment", "pidns", "--depths", "1,2", "--rounds", "2", "--spawns", "300", "--lookups", "1000",
                "--walks", "2", "--tasks", "50", "--kernel-depths", "0,2", "--kernel-iterations", "20", "--kernel-rounds", "1",
                "--json", json.toString());
        assertEquals(0, o.code(), o.out() + o.err());
        assertTrue(o.out().contains("multilevel, as posted                             1.5 %      1.3 %      1.4 %             1.8 %"),
                o.out());
        for (String row : new String[] {"none        -", "flat        1", "flat        2", "multilevel  1", "multilevel  2"}) {
            assertTrue(o.out().contains("\n  " + row + " "), row + " in\n" + o.out());
        }
        // The depth-2 shell is pid 1 of the innermost namespace and 2 in the one above: NSpid "<global> 2 1".
        assertTrue(Pattern.compile("\n  2 +[0-9.]+ \\([0-9]+-[0-9]+\\) +[+-][0-9.]+ % +[0-9.]+ \\([0-9]+-[0-9]+\\) +[+-][0-9.]+ %"
                + " +[0-9]+ 2 1\n").matcher(o.out()).find(), o.out());
        JsonNode doc = new ObjectMapper().readTree(json.toFile());
        assertEquals(5, doc.path("usnet").size());
        assertEquals(0, doc.path("usnet").get(0).path("depth").asInt());
        assertEquals(List.of(0, 2), List.of(doc.path("kernel").get(0).path("depth").asInt(), doc.path("kernel").get(1).path("depth").asInt()));
        assertEquals(3, doc.path("kernel").get(1).path("nspid").size());
    }

    @Test
    void badSizesAreRefusedNamingTheOption() {
        Out a = run("experiment", "pidns", "--depths", "0,2");
        assertEquals(2, a.code());
        assertTrue(a.err().contains("--depths: 0 is out of range 1..32"), a.err());
        Out b = run("experiment", "nsid", "--kernel-namespaces", "0");
        assertEquals(2, b.code());
        assertTrue(b.err().contains("--kernel-namespaces: 0 is out of range 1..100000"), b.err());
        Out c = run("experiment", "nsid", "--queries", "0");
        assertEquals(2, c.code());
        assertTrue(c.err().contains("--queries must be at least 1, got 0"), c.err());
        Out d = run("experiment", "nsid", "--no-kernel", "--no-usnet");
        assertEquals(2, d.code());
        assertTrue(d.err().contains("leave nothing to run"), d.err());
    }
}
