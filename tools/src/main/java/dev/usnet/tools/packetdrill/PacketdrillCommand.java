package dev.usnet.tools.packetdrill;

import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code usnet packetdrill}: runs packetdrill scripts against usnet (virtual time) or against this machine's
 * kernel (a fresh network namespace, real time). One line per script, a summary, optionally a JUnit report.
 */
@Command(name = "packetdrill", mixinStandardHelpOptions = true,
        description = {"Runs packetdrill scripts against usnet or this machine's kernel.",
            "Exit status: 0 when every script passes, 1 when one fails, 2 for a usage error or a script that "
                + "cannot be read. See docs/packetdrill.md."})
public final class PacketdrillCommand implements Callable<Integer> {
    /** The registered target kinds by name, in registration order. */
    static final Map<String, TargetKind> TARGETS = registeredTargets();

    @Spec
    CommandSpec spec;

    @Option(names = "--target", paramLabel = "NAME",
            description = "usnet (virtual time, the default) or kernel (needs root).")
    String target = "usnet";

    @Option(names = "--preset", paramLabel = "K",
            description = "usnet's TCP preset (usnet.tcp.kernel) for the usnet target.")
    String preset;

    @Option(names = "--set", paramLabel = "K=V",
            description = "A usnet knob or sysctl for the usnet target; repeatable.")
    Map<String, String> knobs = new LinkedHashMap<>();

    @Option(names = "--tolerance-us", paramLabel = "N",
            description = "Timing tolerance in us; overrides the scripts' --tolerance_usecs.")
    Long toleranceUs;

    @Option(names = "--ip-version", paramLabel = "V",
            description = "ipv4, ipv4-mapped-ipv6 or ipv6: run the scripts over this family (AF_INET6 sockets, and"
                    + " IPv6 packets for ipv6); overrides the scripts' --ip_version. Default: the script's, else ipv4.")
    String ipVersion;

    @Option(names = "--junit", paramLabel = "FILE", description = "Also write a JUnit XML report to FILE.")
    Path junit;

    @Option(names = {"-j", "--jobs"}, paramLabel = "N", description = "Run N scripts at once, each with its own"
            + " target (its own namespace); results are printed in script order. Default 1. On the kernel target more"
            + " jobs mean more timer jitter: raise --tolerance-us with them.")
    int jobs = 1;

    @Option(names = {"-v", "--verbose"}, description = "Print every packet and call as it happens.")
    boolean verbose;

    @Parameters(paramLabel = "SCRIPT", arity = "1..*", description = "The .pkt scripts to run.")
    List<Path> scripts = new ArrayList<>();

    /** Makes a target; tests replace it. */
    Supplier<Target> targetFactory;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (toleranceUs != null && toleranceUs < 0) {
            throw new UsageException("--tolerance-us must not be negative, got " + toleranceUs);
        }
        IpVersion version = null;
        if (ipVersion != null) {
            try {
                version = IpVersion.parse(ipVersion);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--ip-version: " + e.getMessage());
            }
        }
        if (jobs < 1 || jobs > 64) {
            throw new UsageException("--jobs must be 1..64, got " + jobs);
        }
        if (targetFactory == null && !TARGETS.containsKey(target)) {
            throw unknownTarget(target);
        }
        checkJunitPath();

        // Read every script first: a script that cannot be read stops the run before anything is started.
        List<Script> parsed = new ArrayList<>();
        List<ScriptSettings> settings = new ArrayList<>();
        List<ScriptResult> results = new ArrayList<>();
        boolean broken = false;
        ScriptSettings.CommandLine cli = new ScriptSettings.CommandLine(toleranceUs, preset, knobs, version);
        for (Path p : scripts) {
            try {
                String src = Files.readString(p, StandardCharsets.UTF_8);
                Script s = Parser.parse(p.toString(), src);
                new ExprEvaluator(s.file()).checkAll(s);
                for (Event e : s.events()) {
                    if (e.action() instanceof Action.Code c) {
                        try {
                            CodeBlock.checkTokens(c.text(), c.line());
                        } catch (CodeBlock.CodeException ce) {
                            throw new ScriptSyntaxException(s.file(), ce.line, "in code: " + ce.getMessage());
                        }
                    }
                }
                Path dir = p.toAbsolutePath().getParent();
                String notForVersion = version == null ? null : ScriptSettings.notForVersion(s, version);
                if (notForVersion != null) {
                    parsed.add(null);
                    settings.add(null);
                    results.add(new ScriptResult(p.toString(), ScriptResult.Outcome.SKIPPED, null, 0, notForVersion,
                            ""));
                    continue;
                }
                settings.add(ScriptSettings.resolve(s, cli, dir));
                parsed.add(s);
                results.add(null);
            } catch (IOException e) {
                broken = true;
                err.println("usnet: cannot read " + IoErrors.describe(p, e));
                parsed.add(null);
                settings.add(null);
                results.add(new ScriptResult(p.toString(), ScriptResult.Outcome.BROKEN, null, 0,
                        "cannot read " + IoErrors.describe(p, e), ""));
            } catch (ScriptSyntaxException e) {
                broken = true;
                err.println("usnet: " + e.getMessage());
                parsed.add(null);
                settings.add(null);
                results.add(new ScriptResult(p.toString(), ScriptResult.Outcome.BROKEN, null, 0, e.getMessage(), ""));
            }
        }
        if (broken) {
            for (int k = 0; k < results.size(); k++) {
                if (results.get(k) == null) {
                    results.set(k, new ScriptResult(scripts.get(k).toString(), ScriptResult.Outcome.SKIPPED, null, 0,
                            "not run: another script cannot be read", ""));
                }
            }
            writeJunit(results, err);
            return 2;
        }
        Supplier<Target> factory = targetFactory != null ? targetFactory : loadTarget(target);
        int passed = 0;
        int skipped = 0;
        java.util.concurrent.ExecutorService pool = jobs == 1 ? null
                : java.util.concurrent.Executors.newFixedThreadPool(jobs, Thread.ofPlatform().name("packetdrill-", 0).factory());
        try {
            List<java.util.concurrent.Future<Ran>> running = new ArrayList<>();
            for (int k = 0; k < parsed.size(); k++) {
                int i = k;
                if (parsed.get(k) == null) {
                    // Skipped: not a script for the --ip-version asked for.
                    running.add(java.util.concurrent.CompletableFuture.completedFuture(new Ran(results.get(k), "")));
                    continue;
                }
                java.util.concurrent.Callable<Ran> job = () -> {
                    // A script's own -v trace, printed with its result so that scripts run at once do not interleave.
                    StringWriter trace = new StringWriter();
                    PrintWriter to = pool == null ? out : new PrintWriter(trace);
                    ScriptResult r = runOne(scripts.get(i).toString(), parsed.get(i), settings.get(i), factory, to);
                    to.flush();
                    return new Ran(r, trace.toString());
                };
                running.add(pool == null ? java.util.concurrent.CompletableFuture.completedFuture(call(job)) : pool.submit(job));
            }
            for (int k = 0; k < parsed.size(); k++) {
                Ran ran = await(running.get(k));
                ScriptResult r = ran.result();
                results.set(k, r);
                out.print(ran.trace());
                if (r.outcome() == ScriptResult.Outcome.PASSED) {
                    passed++;
                    out.printf(Locale.ROOT, "PASS %s (%s, %.2f s)%n", r.name(), r.target(), r.wallSeconds());
                } else if (r.outcome() == ScriptResult.Outcome.SKIPPED) {
                    skipped++;
                    out.println("SKIP " + r.name() + ": " + r.message());
                } else {
                    out.println("FAIL " + r.name() + ": " + r.message());
                    if (r.details() != null && !r.details().isEmpty()) {
                        for (String l : r.details().split("\n")) {
                            out.println("    " + l);
                        }
                    }
                }
                out.flush();
            }
        } finally {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
        out.println(passed + "/" + (parsed.size() - skipped) + " passed"
                + (skipped == 0 ? "" : ", " + skipped + " skipped (not for --ip-version " + version + ")"));
        out.flush();
        writeJunit(results, err);
        return passed + skipped == parsed.size() ? 0 : 1;
    }

    /** A script's result and, with -v in parallel, its trace. */
    private record Ran(ScriptResult result, String trace) {}

    private static Ran call(java.util.concurrent.Callable<Ran> job) {
        try {
            return job.call();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Ran await(java.util.concurrent.Future<Ran> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while scripts ran", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    private ScriptResult runOne(String name, Script script, ScriptSettings s, Supplier<Target> factory,
                                PrintWriter out) {
        long t0 = System.nanoTime();
        String described = target;
        Target t = null;
        try {
            t = factory.get();
            t.open(s.options());
            described = t.describe();
            new Runner(script, s, t, verbose ? out : null).run();
            return new ScriptResult(name, ScriptResult.Outcome.PASSED, described, seconds(t0), null, "");
        } catch (ScriptFailure f) {
            return new ScriptResult(name, ScriptResult.Outcome.FAILED, described, seconds(t0),
                    script.file() + ":" + f.line() + ": " + f.reason(), f.details());
        } catch (ScriptSyntaxException e) {
            return new ScriptResult(name, ScriptResult.Outcome.FAILED, described, seconds(t0), e.getMessage(), "");
        } catch (TargetException e) {
            return new ScriptResult(name, ScriptResult.Outcome.FAILED, described, seconds(t0),
                    "target " + described + ": " + e.getMessage(), "");
        } catch (RuntimeException e) {
            // A bug in a target or the runner fails this script, not the whole run: the others still run.
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            return new ScriptResult(name, ScriptResult.Outcome.FAILED, described, seconds(t0),
                    "internal error: " + e, trace.toString().strip());
        } finally {
            if (t != null) {
                try {
                    t.close();
                } catch (RuntimeException e) {
                    spec.commandLine().getErr().println("usnet: closing target " + described + " after " + name
                            + ": " + e.getMessage());
                }
            }
        }
    }

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static Supplier<Target> loadTarget(String name) {
        TargetKind kind = TARGETS.get(name);
        if (kind == null) {
            throw unknownTarget(name);
        }
        return () -> {
            try {
                return kind.create();
            } catch (RuntimeException e) {
                throw new TargetException("cannot create the " + name + " target: " + e.getMessage(), e);
            }
        };
    }

    private static UsageException unknownTarget(String name) {
        return new UsageException("unknown target '" + name + "': use one of " + String.join(", ", TARGETS.keySet()));
    }

    private static Map<String, TargetKind> registeredTargets() {
        Map<String, TargetKind> kinds = new LinkedHashMap<>();
        for (TargetKind k : ServiceLoader.load(TargetKind.class, PacketdrillCommand.class.getClassLoader())) {
            TargetKind before = kinds.putIfAbsent(k.name(), k);
            if (before != null) {
                throw new IllegalStateException("packetdrill target '" + k.name() + "' is registered twice: "
                        + before.getClass().getName() + " and " + k.getClass().getName());
            }
        }
        return kinds;
    }

    private void checkJunitPath() {
        if (junit == null) {
            return;
        }
        Path abs = junit.toAbsolutePath();
        if (Files.isDirectory(abs)) {
            throw new UsageException("--junit " + junit + " is a directory");
        }
        Path dir = abs.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new UsageException("--junit " + junit + ": directory " + dir + " does not exist");
        }
        if (Files.exists(abs) ? !Files.isWritable(abs) : !Files.isWritable(dir)) {
            throw new UsageException("--junit " + junit + " is not writable");
        }
    }

    private void writeJunit(List<ScriptResult> results, PrintWriter err) {
        if (junit == null) {
            return;
        }
        try {
            String described = results.stream().map(ScriptResult::target).filter(java.util.Objects::nonNull)
                    .findFirst().orElse(target);
            JunitXmlWriter.write(junit, "packetdrill", target, described, results);
        } catch (IOException e) {
            err.println("usnet: cannot write --junit " + IoErrors.describe(junit, e));
        }
    }
}
