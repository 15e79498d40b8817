package dev.usnet.tools.oracle;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.replay.FixtureComparator;
import dev.usnet.tools.replay.FrameDifference;
import dev.usnet.tools.replay.Replayer;
import dev.usnet.tools.replay.Scenario;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code usnet oracle record|check}: fixtures from the Linux kernel of this machine. */
@Command(name = "oracle", mixinStandardHelpOptions = true,
        description = {"Record conformance fixtures from this machine's Linux kernel, or check that it still agrees "
                + "with one. Needs root: the DUT is built as Linux in new kernel network namespaces (usnet-or-*), "
                + "deleted afterwards. See docs/oracle.md."},
        subcommands = {OracleCommand.Record.class, OracleCommand.Check.class})
public final class OracleCommand implements Runnable {
    /** Exit code of {@code check} when the kernel here sends other frames than the fixture holds. */
    public static final int EXIT_DIFFERS = 1;

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The script's failures as CLI exit codes: bad input stays 2, a refused kernel step is 3. */
    private static int exitFor(int scriptExit) {
        return scriptExit == LinuxOracle.BAD_INPUT ? CliProcess.EXIT_USAGE : scriptExit;
    }

    /** {@code usnet oracle record SCENARIO.py OUTDIR}. */
    @Command(name = "record", mixinStandardHelpOptions = true,
            description = {"Build the scenario's bridge or router as Linux, inject its frames at their times, capture "
                    + "every port and write the fixture OUTDIR (scenario.json, in/*.pcap, expected/*.pcap).",
                "OUTDIR must be new, empty or a fixture (then its three parts are replaced). Exit 0 recorded, "
                        + "2 bad input or no privilege, 3 the kernel refused a step."})
    public static final class Record implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "SCENARIO.py", description = "a scenario script defining SCENARIO = {...}")
        Path scenario;

        @Parameters(index = "1", paramLabel = "OUTDIR", description = "the fixture directory to write")
        Path outDir;

        @Override
        public Integer call() throws IOException, InterruptedException {
            PrintWriter o = spec.commandLine().getOut();
            if (!Files.isRegularFile(scenario)) {
                throw new UsageException(scenario + ": no such scenario script");
            }
            int rc = LinuxOracle.run("record", scenario, outDir, o);
            if (rc != LinuxOracle.RECORDED) {
                return exitFor(rc);
            }
            Scenario.load(outDir);  // what was written must be a fixture usnet reads
            o.println("replay it: usnet replay " + outDir + " --out OUT --expect");
            return 0;
        }
    }

    /** {@code usnet oracle check FIXTURE [--out DIR]}. */
    @Command(name = "check", mixinStandardHelpOptions = true,
            description = {"Record FIXTURE again on this kernel (its scenario.json and in/*.pcap) and compare with its "
                    + "expected/ by the conformance rule, port by port.",
                "Exit 0 when the kernel agrees, 1 when it differs, 2 on bad input or no privilege, 3 when the "
                        + "kernel refused a step. Timer-driven fixtures (ageing, ARP timers, proxy ARP delay) may "
                        + "legitimately differ: Linux fires multi-second timers up to ~0.5 s late."})
    public static final class Check implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "FIXTURE", description = "directory with scenario.json, in/ and expected/")
        Path fixture;

        @Option(names = "--out", paramLabel = "DIR",
                description = "keep the new recording there as a fixture (default: a temporary directory, removed)")
        Path out;

        @Override
        public Integer call() throws IOException, InterruptedException {
            PrintWriter o = spec.commandLine().getOut();
            if (!Files.isDirectory(fixture)) {
                throw new UsageException(fixture + ": no such fixture directory");
            }
            Scenario sc = Scenario.load(fixture);
            Path dir = out != null ? out : Files.createTempDirectory("usnet-oracle-check-");
            // A JVM stopped by a signal skips finally blocks; the temporary recording goes in either case.
            Thread removeTemp = new Thread(() -> deleteQuietly(dir), "usnet-oracle-remove-temp");
            if (out == null) {
                Runtime.getRuntime().addShutdownHook(removeTemp);
            }
            try {
                o.println("recording " + sc.name() + " again (the fixture is from Linux " + recordedOn(fixture)
                        + ") on Linux " + System.getProperty("os.version"));
                int rc = LinuxOracle.run("rerecord", fixture, dir, o);
                if (rc != LinuxOracle.RECORDED) {
                    return exitFor(rc);
                }
                return report(sc, dir, o);
            } finally {
                if (out == null) {
                    try {
                        Runtime.getRuntime().removeShutdownHook(removeTemp);
                    } catch (IllegalStateException shuttingDown) {
                        // the hook is running and removes it
                    }
                    deleteTree(dir);
                }
            }
        }

        private int report(Scenario sc, Path recorded, PrintWriter o) throws IOException {
            Map<String, List<PcapRecord>> fixtureOut = Replayer.readPorts(fixture, "expected", sc);
            Map<String, List<PcapRecord>> now = Replayer.readPorts(recorded, "expected", sc);
            FrameDifference diff = new FrameDifference(sc);
            int differing = 0;
            for (FixtureComparator.PortResult r : FixtureComparator.compare(sc, fixtureOut, now)) {
                String head = sc.name() + "/" + r.port() + ": ";
                if (r.ok()) {
                    o.println(head + "agrees (" + r.expected() + " frames)");
                    continue;
                }
                differing++;
                List<PcapRecord> was = fixtureOut.get(r.port());
                List<PcapRecord> got = now.get(r.port());
                int i = r.firstDiff();
                o.println(head + "DIFFERS at frame " + (i + 1) + " of expected/" + r.port() + ".pcap (the fixture has "
                        + r.expected() + " frames, this kernel sent " + r.actual() + ")");
                o.println("  fixture:     " + (r.expectedFrame() != null ? r.expectedFrame() : "(no such frame)"));
                o.println("  this kernel: " + (r.actualFrame() != null ? r.actualFrame() : "(no such frame)"));
                if (i < was.size() && i < got.size()) {
                    byte[] e = was.get(i).data();
                    byte[] a = got.get(i).data();
                    int at = diff.firstDifferentByte(e, a);
                    o.println("  first different byte: " + at + " of " + e.length + "/" + a.length
                            + " (fixture " + hexAt(e, at) + ", this kernel " + hexAt(a, at) + ")");
                }
            }
            if (differing == 0) {
                o.println("the kernel here agrees with " + sc.name());
                return 0;
            }
            o.println("the kernel here differs from " + sc.name() + " on " + differing + " of " + sc.ports().size()
                    + " ports");
            return EXIT_DIFFERS;
        }

        private static String hexAt(byte[] f, int at) {
            return at < f.length ? String.format("0x%02x", f[at] & 0xff) : "end of frame";
        }
    }

    private static String recordedOn(Path fixture) {
        try {
            String k = new ObjectMapper().readTree(fixture.resolve("scenario.json").toFile()).path("linux").path("kernel")
                    .asText("");
            return k.isEmpty() ? "an unnamed kernel" : k;
        } catch (IOException e) {
            return "an unnamed kernel";
        }
    }

    private static void deleteQuietly(Path dir) {
        try {
            deleteTree(dir);
        } catch (IOException e) {
            System.err.println("usnet oracle: could not remove " + dir + ": " + e.getMessage());
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
