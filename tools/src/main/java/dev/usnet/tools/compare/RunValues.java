package dev.usnet.tools.compare;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The numbers a comparison reads out of one run's results (results.json, docs/results.md) and how it combines them. */
final class RunValues {
    private RunValues() {}

    static long rxPackets(CompareRunner.Run r, String ns) {
        return rx(r, ns, "rx_packets");
    }

    /** The sum of a counter over a namespace's devices in one run. */
    static long rx(CompareRunner.Run r, String ns, String counter) {
        long n = 0;
        for (Map<String, Object> d : r.result().results().devices()) {
            if (((String) d.get("name")).startsWith(ns + "/")) {
                n += ((Number) d.get(counter)).longValue();
            }
        }
        return n;
    }

    static Double per(double v, double n) {
        return Double.isNaN(v) || n == 0 ? null : v / n;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Long> drops(Map<String, Object> ns) {
        Map<String, Long> out = new LinkedHashMap<>();
        ((Map<String, Object>) ns.get("drops")).forEach((k, v) -> out.put(k, ((Number) v).longValue()));
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> measured(CompareRunner.Run r, String key) {
        Object o = r.result().results().measured().get(key);
        return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    static double medianOf(List<CompareRunner.Run> runs, Function<CompareRunner.Run, Double> f) {
        double[] v = runs.stream().map(f).filter(x -> x != null && !Double.isNaN(x)).mapToDouble(Double::doubleValue)
                .sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    static Map<String, Object> byKey(List<Map<String, Object>> l, String key, String value) {
        for (Map<String, Object> m : l) {
            if (value.equals(m.get(key))) {
                return m;
            }
        }
        return null;
    }

    static double num(Object o) {
        return o instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    static String join(List<Long> l) {
        return String.join(", ", l.stream().map(String::valueOf).toList());
    }
}
