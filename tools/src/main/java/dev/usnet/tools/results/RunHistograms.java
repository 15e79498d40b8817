package dev.usnet.tools.results;

import dev.usnet.tools.app.App;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.LatencyPaths;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The nanosecond HdrHistograms behind a run's latency percentiles, which {@link Results} keeps only as four
 * numbers: per app (by its results name, {@code <ns>.<kind>-<i>}) that has a latency (ping round trips, rr
 * transactions, burst completions), and per forwarding path (by {@link #pathKey}). Not part of the results
 * file: {@code usnet compare} plots whole percentile curves from them.
 */
public record RunHistograms(Map<String, Histogram> apps, Map<String, Histogram> paths) {
    public RunHistograms {
        apps = Collections.unmodifiableMap(new LinkedHashMap<>(apps));
        paths = paths instanceof PathHistograms ? paths : Collections.unmodifiableMap(new LinkedHashMap<>(paths));
    }

    /**
     * The paths' histograms, each taken from its path when first asked for: a bridge of many ports has a path per
     * port its floods reached, each carrying a packet or two, and a histogram each (16 KB and more) would cost
     * far more than the few that get charted. Read-only.
     */
    private static final class PathHistograms extends java.util.AbstractMap<String, Histogram> {
        private final Map<String, LatencyPaths.Path> paths;
        private final Map<String, Histogram> taken = new java.util.HashMap<>();

        PathHistograms(Map<String, LatencyPaths.Path> paths) {
            this.paths = paths;
        }

        @Override
        public synchronized Histogram get(Object key) {
            LatencyPaths.Path p = paths.get(key);
            return p == null ? null : taken.computeIfAbsent((String) key, k -> p.snapshot());
        }

        @Override
        public boolean containsKey(Object key) {
            return paths.containsKey(key);
        }

        @Override
        public int size() {
            return paths.size();
        }

        @Override
        public java.util.Set<Entry<String, Histogram>> entrySet() {
            java.util.Set<Entry<String, Histogram>> es = new java.util.LinkedHashSet<>();
            for (String k : paths.keySet()) {
                es.add(Map.entry(k, get(k)));
            }
            return Collections.unmodifiableSet(es);
        }
    }

    /** {@code ns/in->out}: a path is named within its namespace. */
    public static String pathKey(String ns, String path) {
        return ns + "/" + path;
    }

    /**
     * Copies of the histograms of {@code apps} (which have stopped) and of every path of {@code stacks} (taken
     * when first read), named as {@code results} (collected from the same apps and stacks) names them.
     */
    public static RunHistograms collect(Results results, List<App> apps, List<NetStack> stacks) {
        Map<String, Histogram> as = new LinkedHashMap<>();
        for (int i = 0; i < apps.size(); i++) {
            Histogram h = apps.get(i).histogram();
            if (h != null) {
                as.put((String) results.apps().get(i).get("name"), h.copy());
            }
        }
        Map<String, LatencyPaths.Path> ps = new LinkedHashMap<>();
        for (NetStack s : stacks) {
            for (LatencyPaths.Path p : s.latency().all()) {
                ps.put(pathKey(s.name(), p.name()), p);
            }
        }
        return new RunHistograms(as, new PathHistograms(ps));
    }
}
