package dev.usnet.perf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** What the scenario benchmarks (tap-throughput, tcp-throughput) share for options, statistics and reports. */
public final class BenchSupport {
    private BenchSupport() {}

    /** {@code parse.get()}; on a bad option (IllegalArgumentException) prints it and {@code usage}, exits 2. */
    public static <T> T parseOrExit(String prog, String usage, java.util.function.Supplier<T> parse) {
        try {
            return parse.get();
        } catch (IllegalArgumentException e) {
            System.err.println(prog + ": " + e.getMessage());
            System.err.println("usage: " + usage);
            System.exit(2);
            throw e;
        }
    }

    /** Exits 2 naming {@code missing} (tools, devices) and how to do without, unless nothing is missing. */
    public static void exitIfMissing(String prog, List<String> missing, String hint) {
        if (!missing.isEmpty()) {
            System.err.println(prog + ": missing " + String.join(", ", missing) + hint);
            System.exit(2);
        }
    }

    /** {@code v} as a positive integer; otherwise an IllegalArgumentException naming option {@code opt}. */
    public static int positive(String opt, String v) {
        try {
            int n = Integer.parseInt(v);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new IllegalArgumentException(opt + " needs a positive integer, not '" + v + "'");
    }

    /** The median of {@code xs}, NaNs left out; NaN when nothing is left. */
    public static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (a.length == 0) {
            return Double.NaN;
        }
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
    }

    public static double min(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    public static double max(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    /** The 1, 5 and 15 minute load averages from /proc/loadavg, or {@code n/a}. */
    public static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "n/a";
        }
    }

    /** The last {@code n} lines of a command's output, joined by {@code " / "}. */
    public static String lastLines(String s, int n) {
        String[] lines = s.strip().split("\n");
        return String.join(" / ", Arrays.copyOfRange(lines, Math.max(0, lines.length - n), lines.length));
    }

    /**
     * The {@code --name value} pairs of a command line, in order; {@code -h}/{@code --help} and a name without a
     * value throw an IllegalArgumentException (the caller prints its usage).
     */
    public static List<String[]> options(String[] args) {
        List<String[]> pairs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                throw new IllegalArgumentException("help");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            pairs.add(new String[] {a, args[++i]});
        }
        return pairs;
    }

    /** The comma-separated path names of {@code --paths v}, each one of {@code known}. */
    public static List<String> paths(String v, List<String> known) {
        List<String> paths = Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
        for (String p : paths) {
            if (!known.contains(p)) {
                throw new IllegalArgumentException("unknown path " + p + " (known: " + String.join(",", known) + ")");
            }
        }
        return paths;
    }

    /** The report's {@code host} object: CPUs, kernel, Java and the load averages before and after the run. */
    public static String hostJson(String loadBefore, String loadAfter) {
        return "{\"cpus\": " + Runtime.getRuntime().availableProcessors() + ", \"kernel\": "
                + MiniJson.quote(System.getProperty("os.version")) + ", \"java\": " + MiniJson.quote(Runtime.version().toString())
                + ", \"loadavg_before\": " + MiniJson.quote(loadBefore) + ", \"loadavg_after\": " + MiniJson.quote(loadAfter) + "}";
    }

    /** Prints {@code table} after a blank line, writes {@code json} to {@code out} (creating its directory) and says where. */
    public static void report(String table, Path out, String json) throws IOException {
        System.out.println();
        System.out.print(table);
        if (out.toAbsolutePath().getParent() != null) {
            Files.createDirectories(out.toAbsolutePath().getParent());
        }
        Files.writeString(out, json, StandardCharsets.UTF_8);
        System.out.println("JSON: " + out.toAbsolutePath());
    }
}
