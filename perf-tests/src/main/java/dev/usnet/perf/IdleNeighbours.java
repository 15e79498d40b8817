package dev.usnet.perf;

import static dev.usnet.perf.BenchSupport.max;
import static dev.usnet.perf.BenchSupport.median;
import static dev.usnet.perf.BenchSupport.min;
import static dev.usnet.perf.MiniJson.list;
import static dev.usnet.perf.MiniJson.num;
import static dev.usnet.perf.MiniJson.quote;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scenario benchmark {@code idle-neighbours}: does a bridge with many idle containers on it slow the traffic that
 * crosses it? {@code perf-tests/idle-neighbours.yaml} is run by {@code usnet run} (one process per run, as a user
 * runs it) once per number of idle containers {@code n} and mode, round after round with the order of {@code n}
 * alternating, so drifting load on a shared host hits every {@code n} alike:
 *
 * <ul>
 *   <li>{@code stream}: a TCP stream sa0 → sb0 through br0 for the whole run, and a ping pa → pb every 10 ms beside
 *       it (throughput, retransmissions, RTOs; the ping's RTT under the stream's load);
 *   <li>{@code ping}: the ping alone (the bridge's own latency, nothing queued in front of it).
 * </ul>
 *
 * Per run it takes, from the run's {@code --results} JSON, the stream's Mbit/s (measured from its handshake on),
 * retransmissions and RTOs, the ping's p50/p99/p99.9/max RTT and replies, and host's forwarding latency (receive
 * to transmit, p50/p99) on the stream's path {@code hsa0->hsb0} and the ping's {@code hpa->hpb}; and the seconds
 * until {@code usnet: ready} (JVM start, parse, build) from its output. The ping's first echoes wait for ARP, whose
 * first request br0 floods to every port: its max (and with many ports its p99) is that wait. It prints medians and min–max per mode and {@code n}, and the change of each median against the
 * smallest {@code n}, and writes every run and the summary to a JSON file.
 *
 * <p>With {@code --clock virtual} the same file runs in virtual time, the stream's link limited by a netem rate
 * (without a rate or delay a stream cannot advance the virtual clock); the simulated numbers are then the same for
 * every {@code n} unless the idle containers change what happens, and the wall time shows what they cost.
 *
 * <p>Options: {@code --n 0,10000} {@code --rounds 3} {@code --seconds 10} {@code --modes stream,ping}
 * {@code --clock real|virtual} {@code --rate 1gbit} (virtual only) {@code --json FILE}
 * {@code --usnet PATH} (the launcher, default {@code ./usnet}) {@code --file PATH} (default
 * {@code perf-tests/idle-neighbours.yaml}).
 */
public final class IdleNeighbours {
    private static final String PROG = "idle-neighbours";
    private static final String USAGE = "perf-tests/idle-neighbours.sh [--n 0,10000] [--rounds 3] [--seconds 10]"
            + " [--modes stream,ping] [--clock real|virtual] [--rate 1gbit] [--json FILE]";
    private static final Pattern PING_LINE = Pattern.compile("ping \\S+: (\\d+) sent, (\\d+) received");

    private record Options(List<Integer> ns, int rounds, int seconds, List<String> modes, String clock, String rate,
                           Path json, Path usnet, Path file) {}

    /** One {@code usnet run}: what it measured, or why it failed. */
    private record Run(String mode, int n, int round, Map<String, Double> metrics, String error) {}

    /** The metrics taken from each run, in report order; the stream's only in mode {@code stream}. */
    private static final List<String> STREAM_METRICS = List.of("stream_mbit_s", "stream_retrans", "stream_rtos",
            "bridge_stream_p50_us", "bridge_stream_p99_us", "bridge_stream_p999_us");
    private static final List<String> PING_METRICS = List.of("ping_p50_us", "ping_p99_us", "ping_p999_us", "ping_max_us",
            "ping_sent", "ping_received", "bridge_ping_p50_us", "bridge_ping_p99_us");
    private static final List<String> RUN_METRICS = List.of("ready_s", "wall_s");

    private IdleNeighbours() {}

    public static void main(String[] args) throws Exception {
        Options o = BenchSupport.parseOrExit(PROG, USAGE, () -> parse(args));
        String loadBefore = BenchSupport.loadavg();
        Path work = o.json.toAbsolutePath().getParent().resolve("idle-neighbours");
        Files.createDirectories(work);
        List<Run> runs = new ArrayList<>();
        int k = 0;
        for (int r = 0; r < o.rounds; r++) {
            List<Integer> order = new ArrayList<>(o.ns);
            if (r % 2 == 1) {
                java.util.Collections.reverse(order);
            }
            for (int n : order) {
                for (String mode : o.modes) {
                    Run run = runOnce(o, work, k++, mode, n, r);
                    runs.add(run);
                    System.out.println(line(run));
                }
            }
        }
        String loadAfter = BenchSupport.loadavg();
        StringBuilder table = new StringBuilder();
        StringBuilder summary = new StringBuilder("[");
        for (String mode : o.modes) {
            List<String> metrics = new ArrayList<>(mode.equals("stream") ? STREAM_METRICS : List.of());
            metrics.addAll(PING_METRICS);
            metrics.addAll(o.clock.equals("virtual") ? List.of("wall_s") : RUN_METRICS);
            table.append(String.format(Locale.ROOT, "%n%s (%s time, %d s per run, %d rounds): median [min-max]%n", mode,
                    o.clock, o.seconds, o.rounds));
            table.append(String.format(Locale.ROOT, "%-16s", "metric"));
            for (int n : o.ns) {
                table.append(String.format(Locale.ROOT, "%34s", "n=" + n));
            }
            table.append(String.format(Locale.ROOT, "%12s%n", "change"));
            for (String m : metrics) {
                table.append(String.format(Locale.ROOT, "%-16s", m));
                double base = Double.NaN;
                double last = Double.NaN;
                for (int n : o.ns) {
                    List<Double> xs = values(runs, mode, n, m);
                    double med = median(xs);
                    if (Double.isNaN(base)) {
                        base = med;
                    }
                    last = med;
                    table.append(String.format(Locale.ROOT, "%34s", String.format(Locale.ROOT, "%.1f [%.1f-%.1f]", med,
                            min(xs), max(xs))));
                    summary.append(summary.length() > 1 ? ",\n    " : "\n    ")
                            .append("{\"mode\": ").append(quote(mode)).append(", \"n\": ").append(n)
                            .append(", \"metric\": ").append(quote(m)).append(", \"median\": ").append(num(round(med)))
                            .append(", \"min\": ").append(num(round(min(xs)))).append(", \"max\": ").append(num(round(max(xs))))
                            .append(", \"values\": ").append(list(xs)).append('}');
                }
                table.append(String.format(Locale.ROOT, "%12s%n", change(base, last)));
            }
        }
        summary.append("\n  ]");
        long failed = runs.stream().filter(r -> r.error != null).count();
        if (failed > 0) {
            table.append(String.format(Locale.ROOT, "%n%d of %d runs failed (their metrics are left out; see above)%n",
                    failed, runs.size()));
        }
        StringBuilder runJson = new StringBuilder("[");
        for (Run r : runs) {
            runJson.append(runJson.length() > 1 ? ",\n    " : "\n    ").append("{\"mode\": ").append(quote(r.mode))
                    .append(", \"n\": ").append(r.n).append(", \"round\": ").append(r.round);
            for (var e : r.metrics.entrySet()) {
                runJson.append(", ").append(quote(e.getKey())).append(": ").append(num(round(e.getValue())));
            }
            runJson.append(", \"error\": ").append(quote(r.error)).append('}');
        }
        runJson.append("\n  ]");
        String json = "{\"benchmark\": \"idle-neighbours\", \"clock\": " + quote(o.clock) + ", \"seconds\": " + o.seconds
                + ", \"rounds\": " + o.rounds + ", \"rate\": " + quote(o.clock.equals("virtual") ? o.rate : null)
                + ",\n  \"host\": " + BenchSupport.hostJson(loadBefore, loadAfter)
                + ",\n  \"summary\": " + summary + ",\n  \"runs\": " + runJson + "\n}\n";
        BenchSupport.report(table.toString(), o.json, json);
        if (failed > 0) {
            System.exit(1);
        }
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    /** The change of the last median against the first, in percent. */
    private static String change(double base, double last) {
        if (Double.isNaN(base) || Double.isNaN(last) || base == 0) {
            return "-";
        }
        return String.format(Locale.ROOT, "%+.1f%%", (last - base) / base * 100);
    }

    private static List<Double> values(List<Run> runs, String mode, int n, String metric) {
        List<Double> xs = new ArrayList<>();
        for (Run r : runs) {
            if (r.mode.equals(mode) && r.n == n && r.error == null && r.metrics.containsKey(metric)) {
                xs.add(r.metrics.get(metric));
            }
        }
        return xs;
    }

    private static String line(Run r) {
        if (r.error != null) {
            return String.format(Locale.ROOT, "round %d %-6s n=%-6d FAILED: %s", r.round, r.mode, r.n, r.error);
        }
        Map<String, Double> m = r.metrics;
        String stream = m.containsKey("stream_mbit_s") ? String.format(Locale.ROOT, "stream %.1f Mbit/s (retrans %.0f, rto %.0f), ",
                m.get("stream_mbit_s"), m.get("stream_retrans"), m.get("stream_rtos")) : "";
        return String.format(Locale.ROOT, "round %d %-6s n=%-6d %sping p50 %.1f p99 %.1f p99.9 %.1f max %.1f us (%.0f/%.0f),"
                        + "%s wall %.2f s", r.round, r.mode, r.n, stream, m.get("ping_p50_us"),
                m.get("ping_p99_us"), m.get("ping_p999_us"), m.get("ping_max_us"), m.get("ping_received"),
                m.get("ping_sent"), m.containsKey("ready_s") ? String.format(Locale.ROOT, " ready after %.2f s,",
                        m.get("ready_s")) : "", m.get("wall_s"));
    }

    private static Run runOnce(Options o, Path work, int k, String mode, int n, int round) throws Exception {
        Path results = work.resolve("run-" + k + ".json");
        Path log = work.resolve("run-" + k + ".log");
        Files.deleteIfExists(results);
        List<String> cmd = new ArrayList<>(List.of(o.usnet.toString(), "run", "--duration", Integer.toString(o.seconds),
                "--param", "n=" + n, "--param", "streams=" + (mode.equals("stream") ? 1 : 0),
                "--results", results.toString(), "--out", work.resolve("out-" + k).toString()));
        if (o.clock.equals("virtual")) {
            cmd.addAll(List.of("--clock", "virtual"));
            if (mode.equals("stream")) {
                cmd.addAll(List.of("--set", "sa0:usnet.netem.eth0.rate=" + o.rate));
            }
        }
        cmd.add(o.file.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        long t0 = System.nanoTime();
        Process p = pb.start();
        double ready = Double.NaN;
        int sent = -1;
        int received = -1;
        StringBuilder out = new StringBuilder();
        try (BufferedReader rd = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = rd.readLine()) != null) {
                out.append(l).append('\n');
                if (Double.isNaN(ready) && l.startsWith("usnet: ready")) {
                    ready = (System.nanoTime() - t0) / 1e9;
                }
                Matcher m = PING_LINE.matcher(l);
                if (m.find()) {
                    sent = Integer.parseInt(m.group(1));
                    received = Integer.parseInt(m.group(2));
                }
            }
        }
        int rc = p.waitFor();
        double wall = (System.nanoTime() - t0) / 1e9;
        Files.writeString(log, out);
        if (rc != 0 || !Files.exists(results)) {
            return new Run(mode, n, round, Map.of(), "usnet run exited " + rc + " (" + BenchSupport.lastLines(out.toString(), 2)
                    + "; log " + log + ")");
        }
        Object doc = MiniJson.parse(Files.readString(results));
        Map<String, Double> m = new LinkedHashMap<>();
        Map<?, ?> stream = app(doc, "sa0.stream-0");
        Map<?, ?> ping = app(doc, "pa.ping-0");
        if (mode.equals("stream")) {
            if (stream == null) {
                return new Run(mode, n, round, Map.of(), "no sa0.stream-0 in " + results);
            }
            m.put("stream_mbit_s", d(stream.get("mbit_s")));
            m.put("stream_retrans", d(stream.get("retrans")));
            m.put("stream_rtos", d(stream.get("rtos")));
            Map<?, ?> fwd = path(doc, "host", "hsa0->hsb0");
            m.put("bridge_stream_p50_us", fwd == null ? Double.NaN : d(fwd.get("p50_us")));
            m.put("bridge_stream_p99_us", fwd == null ? Double.NaN : d(fwd.get("p99_us")));
            m.put("bridge_stream_p999_us", fwd == null ? Double.NaN : d(fwd.get("p999_us")));
        }
        if (ping == null) {
            return new Run(mode, n, round, Map.of(), "no pa.ping-0 in " + results);
        }
        m.put("ping_p50_us", d(ping.get("p50_us")));
        m.put("ping_p99_us", d(ping.get("p99_us")));
        m.put("ping_p999_us", d(ping.get("p999_us")));
        m.put("ping_max_us", d(ping.get("max_us")));
        m.put("ping_sent", (double) sent);
        m.put("ping_received", d(ping.get("ops")));
        Map<?, ?> fwd = path(doc, "host", "hpa->hpb");
        m.put("bridge_ping_p50_us", fwd == null ? Double.NaN : d(fwd.get("p50_us")));
        m.put("bridge_ping_p99_us", fwd == null ? Double.NaN : d(fwd.get("p99_us")));
        if (!Double.isNaN(ready)) {
            // A virtual run prints no "ready": it builds and runs in one go.
            m.put("ready_s", ready);
        }
        m.put("wall_s", wall);
        return new Run(mode, n, round, m, null);
    }

    private static double d(Object v) {
        return v instanceof Number x ? x.doubleValue() : Double.NaN;
    }

    private static Map<?, ?> path(Object doc, String ns, String name) {
        if (MiniJson.at(doc, "paths") instanceof List<?> paths) {
            for (Object a : paths) {
                if (a instanceof Map<?, ?> m && ns.equals(m.get("ns")) && name.equals(m.get("name"))) {
                    return m;
                }
            }
        }
        return null;
    }

    private static Map<?, ?> app(Object doc, String name) {
        if (MiniJson.at(doc, "apps") instanceof List<?> apps) {
            for (Object a : apps) {
                if (a instanceof Map<?, ?> m && name.equals(m.get("name"))) {
                    return m;
                }
            }
        }
        return null;
    }

    private static Options parse(String[] args) {
        List<Integer> ns = List.of(0, 10_000);
        int rounds = 3;
        int seconds = 10;
        List<String> modes = List.of("stream", "ping");
        String clock = "real";
        String rate = "1gbit";
        Path json = Path.of("perf-tests/target/idle-neighbours.json");
        Path usnet = Path.of("./usnet");
        Path file = Path.of("perf-tests/idle-neighbours.yaml");
        for (String[] kv : BenchSupport.options(args)) {
            String v = kv[1];
            switch (kv[0]) {
                case "--n" -> ns = Arrays.stream(v.split(",")).map(String::trim).map(s -> {
                    try {
                        int x = Integer.parseInt(s);
                        if (x >= 0 && x <= 100_000) {
                            return x;
                        }
                    } catch (NumberFormatException e) {
                        // below
                    }
                    throw new IllegalArgumentException("--n takes counts 0..100000, not '" + s + "'");
                }).toList();
                case "--rounds" -> rounds = BenchSupport.positive("--rounds", v);
                case "--seconds" -> seconds = BenchSupport.positive("--seconds", v);
                case "--modes" -> {
                    modes = Arrays.stream(v.split(",")).map(String::trim).toList();
                    for (String m : modes) {
                        if (!m.equals("stream") && !m.equals("ping")) {
                            throw new IllegalArgumentException("--modes takes stream and ping, not '" + m + "'");
                        }
                    }
                }
                case "--clock" -> {
                    if (!v.equals("real") && !v.equals("virtual")) {
                        throw new IllegalArgumentException("--clock is real or virtual, not '" + v + "'");
                    }
                    clock = v;
                }
                case "--rate" -> rate = v;
                case "--json" -> json = Path.of(v);
                case "--usnet" -> usnet = Path.of(v);
                case "--file" -> file = Path.of(v);
                default -> throw new IllegalArgumentException("unknown option " + kv[0]);
            }
        }
        if (ns.isEmpty() || modes.isEmpty()) {
            throw new IllegalArgumentException("--n and --modes need at least one value");
        }
        return new Options(ns, rounds, seconds, modes, clock, rate, json, usnet, file);
    }
}
