package dev.usnet.tools.experiment.pidns;

import dev.usnet.tap.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * The kernel's own (multilevel) pid namespaces: a shell {@code depth} pid namespaces deep (nested
 * {@code unshare --pid --fork}, the shell pid 1 of the innermost) runs a spawn loop (a subshell that exits at once:
 * fork, exit, wait) and an exec loop ({@code /bin/true}: fork, exec, exit, wait) and times each with the clock inside.
 * Depth 0 runs the same shell without unshare. Rounds visit the depths in turn, so drift on a busy machine hits each
 * alike; the figure is the median over rounds of the loop's mean. Each round also reads the shell's NSpid line
 * (/proc/self/status) to prove it is as deep as asked.
 */
public final class KernelPidnsLoops {
    /**
     * One depth: median microseconds per spawn and per exec over the rounds, with the lowest and highest round (how
     * noisy the machine was), and the shell's pid at each level, outermost first.
     */
    public record Row(int depth, double spawnUs, double spawnMinUs, double spawnMaxUs, double execUs, double execMinUs,
                      double execMaxUs, List<Integer> nspid) {}

    /** Depths (0..32), loop iterations per round, rounds. */
    public record Params(List<Integer> depths, int iterations, int rounds) {
        public Params {
            depths = List.copyOf(depths);
            if (depths.isEmpty() || depths.stream().anyMatch(d -> d < 0 || d > 32)) {
                throw new IllegalArgumentException("kernel depths must be 0..32, got " + depths);
            }
            if (iterations < 1 || rounds < 1) {
                throw new IllegalArgumentException("iterations and rounds must be at least 1");
            }
        }

        public static Params defaults() {
            return new Params(List.of(0, 1, 2, 3, 4), 2000, 7);
        }
    }

    /**
     * $1 iterations of each loop; prints "spawn_ns exec_ns" and the NSpid line. Builtins only inside the loops, so each
     * iteration is one fork (and for exec one execve of /bin/true) plus the shell's own bookkeeping, the same at every
     * depth.
     */
    static final String SCRIPT = """
            n=$1
            while read -r k v; do case $k in NSpid:) nspid="$v";; esac; done < /proc/self/status
            t0=$(date +%s%N)
            i=0; while [ $i -lt $n ]; do ( : ); i=$((i+1)); done
            t1=$(date +%s%N)
            i=0; while [ $i -lt $n ]; do /bin/true; i=$((i+1)); done
            t2=$(date +%s%N)
            echo "times $((t1-t0)) $((t2-t1))"
            echo "nspid $nspid"
            """;

    private KernelPidnsLoops() {}

    /** The command for one round at {@code depth}. */
    static List<String> command(int depth, int iterations) {
        List<String> cmd = new ArrayList<>();
        for (int d = 0; d < depth; d++) {
            cmd.addAll(List.of("unshare", "--pid", "--fork", "--kill-child"));
        }
        cmd.addAll(List.of("/bin/sh", "-c", SCRIPT, "usnet-pidns", Integer.toString(iterations)));
        return cmd;
    }

    /** What /bin/sh is here (dash, bash, ...), for the report. */
    public static String shell() {
        try {
            return Path.of("/bin/sh").toRealPath().toString();
        } catch (IOException e) {
            return "/bin/sh";
        }
    }

    public static List<Row> run(Params p, Consumer<String> progress) throws IOException {
        int n = p.depths().size();
        double[][] spawn = new double[n][p.rounds()];
        double[][] exec = new double[n][p.rounds()];
        List<List<Integer>> nspid = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            nspid.add(List.of());
        }
        progress.accept("kernel: " + p.rounds() + " rounds of " + p.iterations() + " spawns and " + p.iterations()
                + " execs at depths " + p.depths() + " (" + shell() + ")");
        // A warm-up round at every depth (page cache, binaries), not counted.
        for (int r = -1; r < p.rounds(); r++) {
            for (int k = 0; k < n; k++) {
                int j = Math.floorMod(k + r, n);
                int depth = p.depths().get(j);
                String[] cmd = command(depth, p.iterations()).toArray(new String[0]);
                HostCommand.Result res = HostCommand.run(600, cmd);
                if (!res.ok()) {
                    throw new IOException("depth " + depth + ": " + String.join(" ", cmd).replace(SCRIPT, "SCRIPT") + " exited "
                            + res.exit() + ": " + res.output().trim());
                }
                long[] t = parseTimes(res.output());
                List<Integer> ids = parseNspid(res.output());
                if (ids.size() != depth + 1) {
                    throw new IOException("depth " + depth + ": the shell's NSpid is " + ids + ", expected " + (depth + 1)
                            + " levels");
                }
                if (r >= 0) {
                    spawn[j][r] = t[0] / 1000.0 / p.iterations();
                    exec[j][r] = t[1] / 1000.0 / p.iterations();
                }
                nspid.set(j, ids);
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            rows.add(new Row(p.depths().get(j), UsnetPidCosts.median(spawn[j]), min(spawn[j]), max(spawn[j]),
                    UsnetPidCosts.median(exec[j]), min(exec[j]), max(exec[j]), nspid.get(j)));
        }
        return rows;
    }

    private static double min(double[] xs) {
        return Arrays.stream(xs).min().orElse(Double.NaN);
    }

    private static double max(double[] xs) {
        return Arrays.stream(xs).max().orElse(Double.NaN);
    }

    static long[] parseTimes(String out) throws IOException {
        for (String line : out.split("\n")) {
            if (line.startsWith("times ")) {
                String[] f = line.trim().split("\\s+");
                return new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])};
            }
        }
        throw new IOException("no times in the loop's output: " + out.trim());
    }

    static List<Integer> parseNspid(String out) {
        for (String line : out.split("\n")) {
            if (line.startsWith("nspid ")) {
                return Arrays.stream(line.substring(6).trim().split("\\s+")).filter(s -> !s.isEmpty()).map(Integer::valueOf)
                        .toList();
            }
        }
        return List.of();
    }

    /** True when {@code unshare} is on the PATH. */
    public static boolean hasUnshare() {
        return HostCommand.has("unshare") && Files.isExecutable(Path.of("/bin/sh"));
    }
}
