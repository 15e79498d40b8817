package dev.usnet.tools.replay;

import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code usnet replay FIXTURE_DIR --out OUT_DIR [--expect]}. */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Replay a conformance fixture through usnet in virtual time and write what left each port.",
                "With --expect, compare with the fixture's expected/ frames (exit 1 on a difference)."})
public final class ReplayCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FIXTURE_DIR", description = "directory with scenario.json, in/ and expected/")
    Path fixture;

    @Option(names = "--out", paramLabel = "OUT_DIR", description = "where to write <port>.pcap (default: a new temporary directory, which"
            + " it names; with --expect, none unless a port differs)")
    Path out;

    @Option(names = "--expect", description = "compare with expected/ by the conformance rule")
    boolean expect;

    @Option(names = "--seed", description = "seed for the stack's random draws (default: ${DEFAULT-VALUE})")
    long seed = Replayer.DEFAULT_SEED;

    @Override
    public Integer call() throws IOException {
        PrintWriter o = spec.commandLine().getOut();
        if (!Files.isDirectory(fixture)) {
            throw new UsageException(fixture + ": no such fixture directory");
        }
        Scenario sc = Scenario.load(fixture);
        // Read expected/ before replaying, so a broken fixture fails before anything is written.
        Map<String, List<PcapRecord>> expected = expect ? FixtureComparator.expected(fixture, sc) : null;
        Map<String, List<PcapRecord>> result = Replayer.run(fixture, seed);
        if (!expect) {
            Path dir = out != null ? out : Files.createTempDirectory("usnet-replay-");
            Replayer.write(result, dir);
            o.println("wrote " + result.size() + " port captures to " + dir + (out != null ? ""
                    : " (a new temporary directory, kept for you to read: delete it when done, or give --out DIR)"));
            for (var e : result.entrySet()) {
                o.println(sc.name() + "/" + e.getKey() + ": " + e.getValue().size() + " frames");
            }
            return 0;
        }
        boolean ok = true;
        for (FixtureComparator.PortResult r : FixtureComparator.compare(sc, expected, result)) {
            o.println(r.line(sc.name()));
            ok &= r.ok();
        }
        // Compared in memory: the captures are written where asked, or, without --out, only when they differ
        // (to look at), never left behind in a temporary directory for a run that matched.
        if (out != null || !ok) {
            Path dir = out != null ? out : Files.createTempDirectory("usnet-replay-");
            Replayer.write(result, dir);
            o.println("wrote " + result.size() + " port captures to " + dir + (out != null ? ""
                    : " (a new temporary directory, kept to look at the difference: delete it when done)"));
        } else {
            o.println("no captures written (every port matched; give --out DIR to keep them)");
        }
        return ok ? 0 : 1;
    }
}
