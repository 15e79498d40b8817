package dev.usnet.tools.compare;

import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.run.RunCommand;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.run.VirtualRun;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code usnet compare FILE --vary KEY=V1,V2 ... --out DIR}: one topology run once per combination of knob and
 * parameter values (times seeds), in virtual time, with the results side by side. With {@code --shard K/N} only
 * the runs r with r mod N = K, written as a part ({@link ComparePart}); {@code --merge PART...} puts the parts
 * together ({@link CompareMerge}).
 */
@Command(name = "compare", mixinStandardHelpOptions = true,
        description = {"Run the topology in FILE once per combination of the --vary and --param values (times --seeds),"
                + " in virtual time (or real time), and put the runs side by side in DIR: every run's results in one JSON file,"
                + " a Markdown report with a table per app, path and namespace (a row per variant, the one that"
                + " differs most from the first in bold) and PNG charts (latency percentile curves, throughput and"
                + " CPU bars). The file format: docs/topology.md.",
                "Every variant is checked before any runs: a bad key or value exits 2 with nothing run.",
                "On a cluster: --shard K/N runs every N-th run (a part each, e.g. one per Slurm array task), then"
                + " usnet compare --merge PART... --out DIR writes what one machine would have."})
public final class CompareCommand implements Callable<Integer> {
    /** The most runs one comparison makes. */
    static final int MAX_RUNS = 10_000;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "FILE", description = "topology file (not with --merge)")
    Path file;

    @Option(names = "--vary", paramLabel = "[NS:]KEY=V1,V2", description = "a knob (for namespace NS, or every"
            + " namespace) and the values to compare, comma-separated; repeatable: every combination runs."
            + " Example: --vary host:usnet.forward.cow=full-copy,head-copy")
    List<String> vary = new ArrayList<>();

    @Option(names = "--param", paramLabel = "NAME=V1,V2", description = "a parameter the file declares and the values"
            + " to compare; repeatable")
    List<String> param = new ArrayList<>();

    @Option(names = "--set", paramLabel = "[NS:]KEY=VALUE", description = "a knob for every variant, as usnet run --set;"
            + " repeatable")
    List<String> set = new ArrayList<>();

    @Option(names = "--seeds", paramLabel = "N", description = "run each variant with N seeds (from --seed, default 1,"
            + " upwards); the report shows medians and min-max")
    Integer seeds;

    @Option(names = "--seed", paramLabel = "S", description = "the seed (with --seeds: the first); default: the file's"
            + " seed:, else 1")
    Long seed;

    @Option(names = "--duration", paramLabel = "S", description = "seconds per run, on the run's clock (default:"
            + " ${DEFAULT-VALUE})")
    double duration = 5;

    @Option(names = "--clock", paramLabel = "virtual|real", description = "virtual (default): deterministic, as fast as"
            + " the CPU allows; real: each run as usnet run --duration S runs it, one at a time")
    String clock = "virtual";

    @Option(names = "--jobs", paramLabel = "J", description = "runs at once, each on its own thread (default: 1);"
            + " the simulated results do not depend on it")
    int jobs = 1;

    @Option(names = "--warm-up", paramLabel = "S", description = "first run the baseline for S seconds (at most"
            + " --duration) and discard it, so that JIT compilation is not charged to the first variants' measured"
            + " CPU and wall time; 0 skips it (default: ${DEFAULT-VALUE})")
    double warmUp = 1;

    @Option(names = "--out", paramLabel = "DIR", required = true, description = "where results.json, report.md and the"
            + " charts go")
    Path out;

    @Option(names = "--force", description = "empty --out first when it holds an earlier comparison's output (without"
            + " it a non-empty --out is refused, so that old runs and charts never mix with new ones)")
    boolean force;

    @Option(names = "--allow-app-failures", description = "exit 0 even when an app failed in some run (without it: "
            + RunCommand.EXIT_APPS_FAILED + ")")
    boolean allowAppFailures;

    @Option(names = "--shard", paramLabel = "K/N", description = "run only the K-th (from 0) of N disjoint parts of"
            + " the matrix (run r, counted from 0 in matrix order, is shard r mod N's) and write the part into DIR"
            + " for --merge; e.g. --shard $SLURM_ARRAY_TASK_ID/8")
    String shard;

    @Option(names = "--merge", arity = "1..*", paramLabel = "PART", description = "instead of running: build"
            + " results.json, report.md and the charts in DIR from the --out directories of all N shards of one"
            + " comparison, as one run of it on one machine would have written them")
    List<Path> merge;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter e = spec.commandLine().getErr();
        if (merge != null) {
            return new CompareMerge(this, o, e).merge();
        }
        if (file == null) {
            throw new UsageException("give the topology FILE to compare (or --merge PART... to merge shards' parts)");
        }
        if (!(duration > 0 && duration <= 31_536_000)) {
            throw new UsageException("--duration must be a positive number of seconds, got " + duration);
        }
        if (!clock.equals("virtual") && !clock.equals("real")) {
            throw new UsageException("--clock must be virtual or real, got " + clock);
        }
        boolean real = clock.equals("real");
        if (real && jobs > 1) {
            throw new UsageException("--jobs " + jobs + " with --clock real: runs at once would share the CPU and measure"
                    + " each other; real-time runs go one at a time");
        }
        if (!(warmUp >= 0 && warmUp <= 31_536_000)) {
            throw new UsageException("--warm-up must be 0 or a positive number of seconds, got " + warmUp);
        }
        if (jobs < 1 || jobs > 256) {
            throw new UsageException("--jobs must be 1..256, got " + jobs);
        }
        if (seeds != null && (seeds < 1 || seeds > MAX_RUNS)) {
            throw new UsageException("--seeds must be 1.." + MAX_RUNS + ", got " + seeds);
        }
        Shard part = shard == null ? null : Shard.parse(shard);
        String text;
        try {
            text = Files.readString(file, java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.nio.file.NoSuchFileException ex) {
            e.println("usnet: " + file + ": no such file");
            e.println("usnet: compare: 1 problem; nothing was run");
            return CliProcess.EXIT_USAGE;
        } catch (IOException ex) {
            e.println("usnet: " + file + ": cannot read: " + ex.getMessage());
            e.println("usnet: compare: 1 problem; nothing was run");
            return CliProcess.EXIT_USAGE;
        }
        MatrixOptions options = new MatrixOptions(file.toString(), text, vary, param, set, seeds, seed, duration, clock, warmUp);
        Planned planned = plan(options, e, true);
        if (planned == null) {
            return CliProcess.EXIT_USAGE;
        }
        List<CompareRunner.Planned> plan = planned.runs();
        prepareOut(out, force);
        try {
            Files.createDirectories(out);
            if (part != null) {
                // A part left by an earlier shard run into this directory must not stand in for this one if it dies.
                Files.deleteIfExists(out.resolve(ComparePart.FILE));
            }
        } catch (IOException ex) {
            throw new UsageException("cannot create " + IoErrors.describe(out, ex));
        }
        List<CompareRunner.Planned> mine = part == null ? plan : part.of(plan);
        e.printf("usnet: compare: %d variant%s × %d seed%s = %d runs of %s %s seconds%s, %d at a time%n",
                planned.variants(), planned.variants() == 1 ? "" : "s", planned.seeds(), planned.seeds() == 1 ? "" : "s",
                plan.size(), MetricTable.format(duration), clock, part == null ? ""
                        : "; shard " + part + " runs " + mine.size() + " of them (run r is shard r mod " + part.n() + "'s)",
                Math.min(jobs, Math.max(1, mine.size())));
        e.flush();
        List<CompareRunner.Run> done;
        long nanos = Math.round(duration * 1e9);
        RealClockRun realRun = real ? new RealClockRun(nanos) : null;
        try {
            // A shard warms up as a whole run does, on the baseline: its measured numbers are then alike.
            if (warmUp > 0 && !mine.isEmpty()) {
                double w = Math.min(warmUp, duration);
                long wn = Math.round(w * 1e9);
                CompareRunner.Outcome r;
                if (real) {
                    try (RealClockRun rw = new RealClockRun(wn)) {
                        r = CompareRunner.warmUp(plan.getFirst(), rw, out);
                    }
                } else {
                    r = CompareRunner.warmUp(plan.getFirst(), CompareRunner.virtual(wn), out);
                }
                e.printf(java.util.Locale.ROOT, "usnet: compare: warm-up (the baseline for %s %s seconds, not"
                        + " counted): %.1f s wall%n", MetricTable.format(w), clock, r.wallNanos() / 1e9);
                e.flush();
            }
            done = CompareRunner.run(mine, jobs, real ? realRun : CompareRunner.virtual(nanos), out, e);
        } catch (CompareRunner.RunFailed ex) {
            e.println("usnet: compare: the run of #" + (ex.planned.variant().group() + 1) + " (" + ex.planned.variant().label()
                    + ", seed " + ex.planned.seed() + ") failed: " + ex.getMessage());
            return ex.getCause() instanceof UsageException || ex.getCause() instanceof TopologyException
                    ? CliProcess.EXIT_USAGE : 1;
        } finally {
            if (realRun != null) {
                realRun.close();
            }
        }
        if (part != null) {
            Path written;
            try {
                written = ComparePart.write(out, part, options, originalArgs(), plan, done);
            } catch (IOException ex) {
                throw new UsageException("cannot write " + IoErrors.describe(out, ex));
            }
            o.println("usnet: compare: shard " + part + ": wrote " + written + " (" + done.size() + " run"
                    + (done.size() == 1 ? "" : "s") + "); when all " + part.n() + " parts are done: usnet compare --merge"
                    + " PART... --out DIR");
            return exitCode(done, o, e);
        }
        return finish(done, commandLine(originalArgs()), file.toString(), duration, o, e);
    }

    /** A comparison's plan: every run in matrix order, and the matrix's shape for the progress line. */
    record Planned(List<CompareRunner.Planned> runs, int variants, int seeds) {}

    /**
     * The runs {@code m} makes, every variant's topology checked before any runs; null (the problems printed to
     * {@code e}) when one does not check. With {@code warn}, the checks' warnings are printed too.
     */
    static Planned plan(MatrixOptions m, PrintWriter e, boolean warn) {
        boolean real = m.clock().equals("real");
        List<Axis> axes = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (String v : m.vary()) {
            axes.add(Axis.parse(Axis.Kind.KNOB, v));
        }
        for (String p : m.param()) {
            axes.add(Axis.parse(Axis.Kind.PARAM, p));
        }
        long runs = m.seeds() == null ? 1 : m.seeds();
        for (Axis a : axes) {
            if (!names.add(a.name())) {
                throw new UsageException(a.kind().option + " " + a.argument() + ": " + a.name() + " is varied twice;"
                        + " give all its values in one " + a.kind().option);
            }
            runs *= a.values().size();
            if (runs > MAX_RUNS) {
                throw new UsageException("the comparison would make more than " + MAX_RUNS + " runs");
            }
        }
        if (axes.isEmpty() && (m.seeds() == null || m.seeds() < 2)) {
            throw new UsageException("nothing to compare: give --vary KEY=V1,V2, --param NAME=V1,V2 or --seeds N (N >= 2)");
        }
        List<Long> seedList = new ArrayList<>();
        if (m.seeds() == null) {
            seedList.add(m.seed());
        } else {
            long base = m.seed() == null ? 1 : m.seed();
            for (int i = 0; i < m.seeds(); i++) {
                seedList.add(base + i);
            }
        }
        List<Variant> variants = Variant.matrix(axes, seedList, m.set());

        // Every variant's topology, checked before anything runs: one loaded per group (seeds do not change it).
        VariantLoader loader = new VariantLoader(m.file(), m.text(), axes);
        Map<Integer, TopologyFile.Checked> loaded = new LinkedHashMap<>();
        Set<String> errors = new LinkedHashSet<>();
        Set<String> warnings = new LinkedHashSet<>();
        for (Variant v : variants) {
            if (loaded.containsKey(v.group())) {
                continue;
            }
            try {
                TopologyFile.Checked c = loader.load(v);
                if (!real) {
                    VirtualRun.refuseExternalDevices(c.spec());
                }
                loaded.put(v.group(), c);
                warnings.addAll(c.warnings());
                if (!real) {
                    warnings.addAll(c.virtualClockWarnings());
                }
            } catch (TopologyException ex) {
                warnings.addAll(ex.warnings());
                errors.addAll(ex.errors());
                loaded.put(v.group(), null);
            } catch (UsageException ex) {
                errors.add(ex.getMessage());
                loaded.put(v.group(), null);
            }
        }
        if (warn) {
            warnings.forEach(w -> e.println("usnet: " + w));
        }
        if (!errors.isEmpty()) {
            errors.forEach(x -> e.println("usnet: " + x));
            e.println("usnet: compare: " + errors.size() + " problem" + (errors.size() == 1 ? "" : "s")
                    + "; nothing was run");
            return null;
        }
        List<CompareRunner.Planned> plan = new ArrayList<>();
        for (Variant v : variants) {
            TopologyFile.Checked c = loaded.get(v.group());
            plan.add(new CompareRunner.Planned(v, c.spec(), v.seed() != null ? v.seed() : c.spec().seed()));
        }
        return new Planned(plan, loaded.size(), seedList.size());
    }

    /** What a comparison writes into {@code --out}: only a directory holding one of these may be emptied by --force. */
    private static final Set<String> OWN_OUTPUT = Set.of("results.json", "report.md", "runs", ComparePart.FILE);

    /**
     * Makes {@code --out} ready before any run: {@link #writable}, then a directory that is not empty is refused
     * (old charts and runs would mix with the new report) unless {@code force}, which empties it, and only when it
     * holds what a comparison writes: a mistyped {@code --out ~} must not empty a home directory.
     */
    static void prepareOut(Path out, boolean force) {
        writable(out);
        if (!Files.isDirectory(out)) {
            return;
        }
        List<Path> entries;
        try (java.util.stream.Stream<Path> s = Files.list(out)) {
            entries = s.sorted().toList();
        } catch (IOException ex) {
            throw new UsageException("--out " + IoErrors.describe(out, ex));
        }
        if (entries.isEmpty()) {
            return;
        }
        if (!force) {
            throw new UsageException("--out " + out + " is not empty (" + entries.size() + (entries.size() == 1 ? " entry" : " entries")
                    + ", e.g. " + entries.getFirst().getFileName() + "): an earlier comparison's runs and charts would mix"
                    + " with this one's; give --force to empty it first, or name a new directory");
        }
        if (entries.stream().noneMatch(p -> OWN_OUTPUT.contains(p.getFileName().toString()))) {
            throw new UsageException("--out " + out + ": --force empties only a directory an earlier usnet compare wrote"
                    + " (holding report.md, results.json, runs/ or " + ComparePart.FILE + "); it holds none of them");
        }
        for (Path p : entries) {
            try {
                deleteTree(p);
            } catch (IOException ex) {
                throw new UsageException("--force: cannot empty " + IoErrors.describe(p, ex));
            }
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (java.util.stream.Stream<Path> s = Files.list(p)) {
                for (Path q : s.toList()) {
                    deleteTree(q);
                }
            }
        }
        Files.delete(p);
    }

    /**
     * Refuses (exit 2, before any work) an {@code --out} that exists and is not a writable directory, or whose
     * nearest existing parent is not one.
     */
    static void writable(Path out) {
        Path p = out.toAbsolutePath();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        if (p == null || !Files.isDirectory(p)) {
            throw new UsageException("--out " + out + ": " + (p == null ? "no such place" : p + " is not a directory"));
        }
        if (!Files.isWritable(p)) {
            throw new UsageException("--out " + out + ": " + (p.equals(out.toAbsolutePath()) ? "not writable"
                    : p + " is not writable"));
        }
    }

    /**
     * Writes results.json, report.md and the charts of the whole matrix's runs into {@code out}, says what
     * failed, and returns the exit code: what a one-machine comparison and a merge of its shards both end with.
     */
    int finish(List<CompareRunner.Run> done, String commandLine, String fileName, double durationSeconds, PrintWriter o,
               PrintWriter e) {
        Path results = out.resolve("results.json");
        List<Path> written;
        try {
            CompareResults.write(results, done);
            written = CompareReport.write(out, commandLine, fileName, durationSeconds, done);
        } catch (IOException ex) {
            throw new UsageException("cannot write " + IoErrors.describe(out, ex));
        }
        o.println("usnet: compare: wrote " + results);
        o.println("usnet: compare: wrote " + written.getFirst() + " and " + (written.size() - 1) + " charts");
        return exitCode(done, o, e);
    }

    /** Apps that failed and expectations that did not hold in {@code done}, said; the exit code they give. */
    int exitCode(List<CompareRunner.Run> done, PrintWriter o, PrintWriter e) {
        List<String> failed = new ArrayList<>();
        for (CompareRunner.Run r : done) {
            for (Map<String, Object> a : r.result().results().apps()) {
                if ("failed".equals(a.get("outcome"))) {
                    failed.add("#" + (r.planned().variant().group() + 1) + " seed " + r.planned().seed() + " " + a.get("name") + ": "
                            + a.get("reason"));
                }
            }
        }
        int expectFailed = 0;
        for (CompareRunner.Run r : done) {
            for (dev.usnet.tools.topology.file.Expectation x : r.planned().spec().expectations()) {
                java.math.BigDecimal v = x.actual(r.result().results());
                if (!x.holds(v)) {
                    expectFailed++;
                    e.println("usnet: compare: expect failed: #" + (r.planned().variant().group() + 1) + " seed "
                            + r.planned().seed() + ": " + x.where().file() + ":" + x.where().line() + ": " + x.text()
                            + x.failure(r.result().results()));
                }
            }
        }
        int code = expectFailed > 0 ? RunCommand.EXIT_APPS_FAILED : 0;
        if (!failed.isEmpty()) {
            (allowAppFailures ? o : e).println("usnet: compare: " + failed.size() + " app run" + (failed.size() == 1 ? "" : "s")
                    + " failed" + (allowAppFailures ? " (--allow-app-failures: exit 0)" : "") + ": " + String.join("; ", failed));
            if (!allowAppFailures) {
                code = RunCommand.EXIT_APPS_FAILED;
            }
        }
        o.flush();
        e.flush();
        return code;
    }

    /** The arguments as given, without the subcommand's name. */
    List<String> originalArgs() {
        List<String> args = new ArrayList<>(spec.commandLine().getParseResult().originalArgs());
        if (!args.isEmpty() && args.getFirst().equals("compare")) {
            args.removeFirst();
        }
        return args;
    }

    /** The command as it was given ({@code args} without the subcommand's name), for the report's first lines. */
    static String commandLine(List<String> args) {
        StringBuilder b = new StringBuilder("usnet compare");
        for (String a : args) {
            b.append(' ').append(a.matches("[A-Za-z0-9_./:=,+@%-]+") ? a : "'" + a.replace("'", "'\\''") + "'");
        }
        return b.toString();
    }
}
