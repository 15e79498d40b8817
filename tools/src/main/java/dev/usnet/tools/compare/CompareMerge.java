package dev.usnet.tools.compare;

import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code usnet compare --merge PART... --out DIR}: the parts that {@code --shard K/N} runs wrote, put together
 * into what one run of the same command on one machine writes: {@code results.json}, {@code report.md} and the
 * charts from the same code, with the runs rebuilt from the parts, and each run's own directory
 * ({@code runs/<run>-seed<S>/}) copied to where that run would have put it.
 *
 * <p>Everything is checked before anything is written: every part readable, all from one command (the same
 * {@link MatrixOptions}), each of shards 0..N-1 exactly once, each holding exactly its runs, and the matrix they
 * record the one the command makes now (the topology re-checked from the text the parts carry).
 */
final class CompareMerge {
    /** Options that say what to run: the parts say it, so giving one with --merge is a mistake. */
    private static final List<String> RUN_OPTIONS = List.of("--vary", "--param", "--set", "--seeds", "--seed", "--duration",
            "--clock", "--jobs", "--warm-up", "--shard");

    private final CompareCommand c;
    private final PrintWriter o;
    private final PrintWriter e;

    CompareMerge(CompareCommand c, PrintWriter o, PrintWriter e) {
        this.c = c;
        this.o = o;
        this.e = e;
    }

    int merge() {
        var parsed = c.spec.commandLine().getParseResult();
        List<String> given = RUN_OPTIONS.stream().filter(parsed::hasMatchedOption).toList();
        if (c.file != null || !given.isEmpty()) {
            throw new UsageException("--merge takes the topology and the matrix from the parts; do not give "
                    + (c.file != null ? "FILE (" + c.file + ")" + (given.isEmpty() ? "" : " or ") : "")
                    + String.join(", ", given));
        }
        List<String> errors = new ArrayList<>();
        List<ComparePart> parts = new ArrayList<>();
        for (Path dir : c.merge) {
            try {
                parts.add(ComparePart.read(dir));
            } catch (UsageException ex) {
                errors.add(ex.getMessage());
            }
        }
        if (errors.isEmpty()) {
            errors.addAll(together(parts));
        }
        if (!errors.isEmpty()) {
            return refuse(errors);
        }
        ComparePart first = parts.stream().filter(p -> p.shard().k() == 0).findFirst().orElseThrow();
        MatrixOptions options = first.options();
        CompareCommand.Planned planned = CompareCommand.plan(options, e, false);
        if (planned == null) {
            e.println("usnet: compare: --merge: the parts' topology " + options.file() + " no longer checks with this usnet");
            return CliProcess.EXIT_USAGE;
        }
        List<CompareRunner.Planned> plan = planned.runs();
        List<ComparePart.Row> rows = new ArrayList<>();
        for (CompareRunner.Planned p : plan) {
            rows.add(new ComparePart.Row(p.variant().index() + 1, p.variant().vary(), p.seed()));
        }
        if (!rows.equals(first.matrix())) {
            return refuse(List.of("--merge: the matrix " + first.dir() + " records is not the one its command makes"
                    + " with this usnet (" + rows.size() + " runs now, " + first.matrix().size() + " recorded)"));
        }
        for (ComparePart p : parts) {
            Path abs = p.dir().toAbsolutePath().normalize();
            if (abs.equals(c.out.toAbsolutePath().normalize())) {
                return refuse(List.of("--out " + c.out + " is one of the parts; merge into a directory of its own"));
            }
            if (abs.startsWith(c.out.toAbsolutePath().normalize())) {
                return refuse(List.of("--out " + c.out + " holds the part " + p.dir() + "; merge into a directory of its own"));
            }
        }
        CompareCommand.prepareOut(c.out, c.force);

        List<CompareRunner.Run> done = new ArrayList<>();
        for (CompareRunner.Planned p : plan) {
            int run = p.variant().index() + 1;
            ComparePart from = parts.get(owner(parts, p.variant().index()));
            done.add(new CompareRunner.Run(p, from.runs().get(run).outcome()));
        }
        try {
            Files.createDirectories(c.out);
            for (ComparePart p : parts) {
                for (CompareRunner.Planned r : plan) {
                    if (p.shard().owns(r.variant().index())) {
                        copyTree(CompareRunner.runDir(p.dir(), r), CompareRunner.runDir(c.out, r));
                    }
                }
            }
            // Every shard warmed up on the baseline as a whole run does; one run's warm-up output is kept, as there.
            copyTree(first.dir().resolve("runs").resolve("warm-up"), c.out.resolve("runs").resolve("warm-up"));
        } catch (IOException ex) {
            throw new UsageException("cannot write " + IoErrors.describe(c.out, ex));
        }
        e.printf("usnet: compare: merged %d parts of %d runs (%d variant%s × %d seed%s)%n", parts.size(), plan.size(),
                planned.variants(), planned.variants() == 1 ? "" : "s", planned.seeds(), planned.seeds() == 1 ? "" : "s");
        e.flush();
        return c.finish(done, CompareCommand.commandLine(unsharded(first.args(), c.out.toString())), options.file(),
                options.duration(), o, e);
    }

    private int refuse(List<String> errors) {
        errors.forEach(x -> e.println("usnet: " + x));
        e.println("usnet: compare: " + errors.size() + " problem" + (errors.size() == 1 ? "" : "s") + "; nothing was written");
        e.flush();
        return CliProcess.EXIT_USAGE;
    }

    /** What keeps {@code parts} from being one whole comparison: each problem a sentence naming the parts. */
    static List<String> together(List<ComparePart> parts) {
        List<String> errors = new ArrayList<>();
        ComparePart a = parts.getFirst();
        for (ComparePart p : parts.subList(1, parts.size())) {
            String d = a.options().firstDifference(p.options());
            if (d != null) {
                errors.add("--merge: " + p.dir() + " and " + a.dir() + " are parts of different comparisons: " + d);
            } else if (p.shard().n() != a.shard().n()) {
                errors.add("--merge: " + p.dir() + " is shard " + p.shard() + " but " + a.dir() + " is shard " + a.shard()
                        + ": parts of one comparison have the same N");
            }
        }
        if (!errors.isEmpty()) {
            return errors;
        }
        int n = a.shard().n();
        ComparePart[] byK = new ComparePart[n];
        for (ComparePart p : parts) {
            ComparePart other = byK[p.shard().k()];
            if (other != null) {
                errors.add("--merge: shard " + p.shard() + " is given twice: " + other.dir() + " and " + p.dir());
            }
            byK[p.shard().k()] = p;
        }
        List<String> missing = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (byK[k] == null) {
                missing.add(k + "/" + n);
            }
        }
        if (!missing.isEmpty()) {
            errors.add("--merge: shard" + (missing.size() == 1 ? " " : "s ") + String.join(", ", missing) + " of "
                    + n + (missing.size() == 1 ? " is" : " are") + " missing (give every part's --out directory)");
        }
        for (ComparePart p : parts) {
            List<Integer> expected = new ArrayList<>();
            for (ComparePart.Row r : p.matrix()) {
                if (p.shard().owns(r.run() - 1)) {
                    expected.add(r.run());
                }
            }
            if (!expected.equals(new ArrayList<>(p.runs().keySet()))) {
                errors.add("--merge: " + p.dir() + " (shard " + p.shard() + ") holds runs " + p.runs().keySet()
                        + ", not its runs " + expected);
            }
        }
        return errors;
    }

    private static int owner(List<ComparePart> parts, int index) {
        for (int i = 0; i < parts.size(); i++) {
            if (parts.get(i).shard().owns(index)) {
                return i;
            }
        }
        throw new IllegalStateException("no part owns run " + (index + 1));
    }

    /**
     * The shard's command as the one-machine command: without {@code --shard K/N}, with the merge's {@code --out}.
     * The report's first lines show it, so a merge's report.md is the one-machine run's.
     */
    static List<String> unsharded(List<String> args, String out) {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--shard")) {
                i++;
            } else if (a.startsWith("--shard=")) {
                continue;
            } else if (a.equals("--out")) {
                l.add(a);
                l.add(out);
                i++;
            } else if (a.startsWith("--out=")) {
                l.add("--out=" + out);
            } else {
                l.add(a);
            }
        }
        return l;
    }

    /** Copies the files under {@code from} (when it exists) to the same places under {@code to}. */
    private static void copyTree(Path from, Path to) throws IOException {
        if (!Files.isDirectory(from)) {
            return;
        }
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
