package dev.usnet.tools.topology.file;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.Where;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One {@code expect:} line of a topology file, {@code app|ns|path|device SELECTOR FIELD OP VALUE}, checked
 * against a run's results.json: e.g. {@code app ctr1.ping-0 ops >= 100}, {@code ns host drops.NEIGH_QUEUE_FULL == 0},
 * {@code path host/hb1->br0 p99_us < 50}, {@code device host/br0 tx_dropped == 0}; or, written as a mapping, a check on a
 * capture ({@link CaptureCheck}, kind {@code capture}, field {@code count} or {@code matches}), whose value the run
 * computes from the capture file and keeps in the results' {@code expectations}.
 */
public record Expectation(String kind, String selector, String field, String op, BigDecimal value, String text, Where where,
                          CaptureCheck capture) {
    /** An expectation on the run's results (not on a capture). */
    public Expectation(String kind, String selector, String field, String op, BigDecimal value, String text, Where where) {
        this(kind, selector, field, op, value, text, where, null);
    }

    public static final Set<String> APP_FIELDS = Set.of("bytes", "mbit_s", "ops", "p50_us", "p99_us", "p999_us", "max_us",
            "retrans", "rtos", "ok",
            // mpi apps (an app without the field is "absent from the run")
            "completion_s", "completion_us", "mb_s", "tcp_mb_s", "connections", "shm_bytes");
    static final Set<String> NS_FIELDS = Set.of("cow_copies", "cow_bytes", "cow_shared", "cow_headroom_copies");
    static final Set<String> PATH_FIELDS = Set.of("packets", "bytes", "p50_us", "p99_us", "p999_us", "max_us");
    public static final Set<String> DEVICE_FIELDS = Set.of("rx_packets", "rx_bytes", "rx_dropped", "tx_packets", "tx_bytes",
            "tx_dropped");
    static final List<String> OPS = List.of("==", "!=", "<=", ">=", "<", ">");

    /** Parses {@code text}, reporting what is wrong at {@code w}; null when it is wrong. */
    public static Expectation parse(String text, Where w, Problems p) {
        String[] t = text.trim().split("\\s+");
        if (t.length != 5) {
            p.add(w, "expected 'app|ns|path|device SELECTOR FIELD OP VALUE', got \"" + text + "\"");
            return null;
        }
        String kind = t[0];
        String field = t[2];
        boolean fieldOk = switch (kind) {
            case "app" -> APP_FIELDS.contains(field);
            case "ns" -> NS_FIELDS.contains(field) || field.startsWith("drops.") && isDropReason(field.substring(6))
                    || field.startsWith("mib.") && isMib(field.substring(4));
            case "path" -> PATH_FIELDS.contains(field);
            case "device" -> DEVICE_FIELDS.contains(field);
            default -> {
                p.add(w, "unknown selector kind '" + kind + "' (app, ns, path or device)");
                yield true;
            }
        };
        if (!Set.of("app", "ns", "path", "device").contains(kind)) {
            return null;
        }
        if (!fieldOk) {
            p.add(w, "unknown field '" + field + "' for " + kind + " (" + switch (kind) {
                case "app" -> String.join(", ", new java.util.TreeSet<>(APP_FIELDS));
                case "ns" -> "cow_copies, cow_bytes, cow_shared, cow_headroom_copies, drops.<DropReason>, mib.<Mib counter>";
                case "path" -> String.join(", ", new java.util.TreeSet<>(PATH_FIELDS));
                default -> String.join(", ", new java.util.TreeSet<>(DEVICE_FIELDS));
            } + ")");
            return null;
        }
        if (!OPS.contains(t[3])) {
            p.add(w, "unknown comparison '" + t[3] + "' (== != < <= > >=)");
            return null;
        }
        BigDecimal v;
        try {
            v = new BigDecimal(t[4]);
        } catch (NumberFormatException e) {
            p.add(w, "expected a number, got '" + t[4] + "'");
            return null;
        }
        return new Expectation(kind, t[1], field, t[3], v, text.trim(), w);
    }

    private static boolean isDropReason(String s) {
        try {
            DropReason.valueOf(s);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static boolean isMib(String s) {
        try {
            Mib.valueOf(s);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Reports a selector naming an app, namespace, device or path device that {@code spec} does not have. */
    public static void checkSelectors(List<Expectation> l, TopologySpec spec, Problems p) {
        List<String> apps = appNames(spec);
        for (Expectation x : l) {
            switch (x.kind) {
                case "capture" -> CaptureCheck.find(spec, x.selector, x.where, p);
                case "app" -> {
                    if (!apps.contains(x.selector)) {
                        p.add(x.where, "no app '" + x.selector + "' (apps are named <ns>.<kind>-<i>: "
                                + (apps.isEmpty() ? "this file has none" : String.join(", ", apps)) + ")");
                    }
                }
                case "ns" -> {
                    if (spec.namespaces().stream().noneMatch(n -> n.name().equals(x.selector))) {
                        p.add(x.where, "no namespace '" + x.selector + "'");
                    }
                }
                case "device" -> {
                    int slash = x.selector.indexOf('/');
                    var ns = slash < 0 ? null : spec.namespaces().stream()
                            .filter(n -> n.name().equals(x.selector.substring(0, slash))).findFirst().orElse(null);
                    String dev = slash < 0 ? "" : x.selector.substring(slash + 1);
                    if (ns == null || !dev.equals("lo") && ns.device(dev) == null) {
                        p.add(x.where, "no device '" + x.selector + "' (devices are named <ns>/<device>)");
                    }
                }
                default -> {
                    String err = ForwardingPaths.check(spec, x.selector);
                    if (err != null) {
                        p.add(x.where, err);
                    }
                }
            }
        }
    }

    /** The names results.json gives the apps: {@code <ns>.<kind>-<i>}, as results.json counts them. */
    public static List<String> appNames(TopologySpec spec) {
        List<String> l = new ArrayList<>();
        for (var ns : spec.namespaces()) {
            Map<String, Integer> i = new HashMap<>();
            for (var a : ns.apps()) {
                String kind = a.kind();
                l.add(ns.name() + "." + kind + "-" + (i.merge(kind, 1, Integer::sum) - 1));
            }
        }
        return l;
    }

    /** The value the results have for this expectation, or null when the run has no such app, path or device. */
    public BigDecimal actual(ResultRows r) {
        if (capture != null) {
            Map<String, Object> v = verdict(r);
            return v == null || v.get("value") == null ? null : new BigDecimal(v.get("value").toString());
        }
        Map<String, Object> row = switch (kind) {
            case "app" -> find(r.apps(), "name", selector);
            case "ns" -> find(r.namespaces(), "name", selector);
            case "device" -> find(r.devices(), "name", selector);
            default -> r.paths().stream().filter(m -> ForwardingPaths.matches(selector, (String) m.get("ns"),
                    (String) m.get("name"))).findFirst().orElse(null);
        };
        if (row == null) {
            return null;
        }
        Object v;
        if (field.equals("ok")) {
            v = "ok".equals(row.get("outcome")) ? 1 : 0;
        } else if (field.startsWith("drops.") || field.startsWith("mib.")) {
            int dot = field.indexOf('.');
            Object m = row.get(field.substring(0, dot));
            v = m instanceof Map<?, ?> mm ? mm.get(field.substring(dot + 1)) : null;
            v = v == null ? 0 : v;
        } else {
            v = row.get(field);
        }
        return v == null ? null : new BigDecimal(v.toString());
    }

    /** This expectation's entry in the results' {@code expectations} (by line and text), or null. */
    private Map<String, Object> verdict(ResultRows r) {
        for (Map<String, Object> v : r.expectations()) {
            if (v.get("line") instanceof Number n && n.intValue() == where.line() && text.equals(v.get("expect"))) {
                return v;
            }
        }
        return null;
    }

    /**
     * What a failed expectation says after its text: the value the run had ({@code  (was 6.598)}, {@code  (was absent
     * from the run)}), or for a capture check {@code : } and what differed or why it could not be judged.
     */
    public String failure(ResultRows r) {
        Map<String, Object> v = capture == null ? null : verdict(r);
        if (v != null && v.get("detail") != null) {
            return ": " + v.get("detail");
        }
        BigDecimal a = actual(r);
        return " (was " + (a == null ? "absent from the run" : a.stripTrailingZeros().toPlainString()) + ")";
    }

    private static Map<String, Object> find(List<Map<String, Object>> l, String key, String value) {
        return l.stream().filter(m -> value.equals(m.get(key))).findFirst().orElse(null);
    }

    /** Whether {@code actual} satisfies it. */
    public boolean holds(BigDecimal actual) {
        if (actual == null) {
            return false;
        }
        int c = actual.compareTo(value);
        return switch (op) {
            case "==" -> c == 0;
            case "!=" -> c != 0;
            case "<" -> c < 0;
            case "<=" -> c <= 0;
            case ">" -> c > 0;
            default -> c >= 0;
        };
    }
}
