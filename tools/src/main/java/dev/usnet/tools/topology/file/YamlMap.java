package dev.usnet.tools.topology.file;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;

/**
 * A YAML mapping read with positions: typed getters that report a problem naming the file, line and key
 * path and return null instead of throwing, so one pass finds every problem in a file.
 */
public final class YamlMap {
    /** A node of a sequence or mapping value together with where it is. */
    public record Item(Node node, Where where) {}

    private final Problems problems;
    private final String file;
    private final Where where;
    private final Map<String, NodeTuple> entries = new LinkedHashMap<>();

    private YamlMap(Problems problems, String file, Where where) {
        this.problems = problems;
        this.file = file;
        this.where = where;
    }

    public static int line(Node n) {
        return n.getStartMark().map(m -> m.getLine() + 1).orElse(0);
    }

    public static Where at(String file, Node n, String path) {
        return new Where(file, line(n), path);
    }

    public static boolean isNull(Node n) {
        return n instanceof ScalarNode s && (Tag.NULL.equals(s.getTag()) || s.isPlain() && s.getValue().isEmpty());
    }

    /**
     * The mapping at {@code node}, or null (reported) when it is something else. An empty value reads as an
     * empty mapping, so {@code knobs:} with nothing under it is allowed.
     */
    public static YamlMap of(Problems problems, String file, Node node, String path) {
        Where w = at(file, node, path);
        YamlMap m = new YamlMap(problems, file, w);
        if (isNull(node)) {
            return m;
        }
        if (!(node instanceof MappingNode mn)) {
            problems.add(w, "expected a mapping (key: value lines), got " + describe(node));
            return null;
        }
        for (NodeTuple t : mn.getValue()) {
            Node k = t.getKeyNode();
            if (!(k instanceof ScalarNode ks)) {
                problems.add(at(file, k, path), "keys must be plain words, got " + describe(k));
                continue;
            }
            String key = ks.getValue();
            NodeTuple first = m.entries.get(key);
            if (first != null) {
                problems.add(at(file, k, m.path(key)), "duplicate key (first at line " + line(first.getKeyNode()) + ")");
                continue;
            }
            m.entries.put(key, t);
        }
        return m;
    }

    public static String describe(Node n) {
        if (n instanceof MappingNode) {
            return "a mapping";
        }
        if (n instanceof SequenceNode) {
            return "a list";
        }
        if (isNull(n)) {
            return "nothing";
        }
        return "\"" + ((ScalarNode) n).getValue() + "\"";
    }

    public Where where() {
        return where;
    }

    public String path(String key) {
        return where.path().isEmpty() ? key : where.path() + "." + key;
    }

    /** Where the value of {@code key} is (the mapping itself when the key is absent). */
    public Where where(String key) {
        NodeTuple t = entries.get(key);
        return t == null ? new Where(file, where.line(), path(key)) : at(file, t.getValueNode(), path(key));
    }

    public Set<String> keys() {
        return entries.keySet();
    }

    public boolean has(String key) {
        return entries.containsKey(key);
    }

    public Node node(String key) {
        NodeTuple t = entries.get(key);
        return t == null ? null : t.getValueNode();
    }

    /** Reports every key not in {@code allowed}, suggesting the nearest allowed one. */
    public void allow(Set<String> allowed) {
        allow(allowed, Map.of());
    }

    /**
     * As {@link #allow(Set)}; {@code elsewhere} names keys that are valid in another context (say, for a
     * bridge but not a veth) with a note saying where.
     */
    public void allow(Set<String> allowed, Map<String, String> elsewhere) {
        for (var e : entries.entrySet()) {
            String k = e.getKey();
            if (allowed.contains(k)) {
                continue;
            }
            Where w = at(file, e.getValue().getKeyNode(), path(k));
            String note = elsewhere.get(k);
            if (note != null) {
                problems.add(w, "'" + k + "' " + note);
                continue;
            }
            String near = nearest(k, allowed);
            problems.add(w, "unknown key" + (near != null ? " (did you mean '" + near + "'?)" : "")
                    + "; expected one of: " + String.join(", ", new TreeSet<>(allowed)));
        }
    }

    public static String nearest(String k, Set<String> candidates) {
        return dev.usnet.core.knob.NearestNames.nearest(k, new TreeSet<>(candidates));
    }

    /** Reports a missing required key; returns false when it is missing. */
    public boolean require(String key) {
        if (!entries.containsKey(key)) {
            problems.add(new Where(file, where.line(), path(key)), "missing (required)");
            return false;
        }
        return true;
    }

    /** The scalar text of {@code key}, null when absent or not a scalar (reported). */
    public String string(String key) {
        Node n = node(key);
        if (n == null) {
            return null;
        }
        return scalar(n, where(key), "a string");
    }

    public String scalar(Node n, Where w, String expected) {
        if (n instanceof ScalarNode s && !isNull(n)) {
            return s.getValue();
        }
        problems.add(w, "expected " + expected + ", got " + describe(n));
        return null;
    }

    /** An integer in {@code min..max}; null when absent or invalid (reported). */
    public Long integer(String key, long min, long max) {
        Node n = node(key);
        if (n == null) {
            return null;
        }
        return integer(n, where(key), min, max);
    }

    public Long integer(Node n, Where w, long min, long max) {
        String expected = "an integer " + min + ".." + max;
        String s = scalar(n, w, expected);
        if (s == null) {
            return null;
        }
        try {
            long v = Long.decode(s.trim().replace("_", ""));
            if (v < min || v > max) {
                problems.add(w, "expected " + expected + ", got " + v);
                return null;
            }
            return v;
        } catch (NumberFormatException e) {
            problems.add(w, "expected " + expected + ", got \"" + s + "\"");
            return null;
        }
    }

    /** A number (seconds, rates) in {@code min..max}; null when absent or invalid (reported). */
    public Double number(String key, double min, double max) {
        Node n = node(key);
        if (n == null) {
            return null;
        }
        String expected = "a number " + fmt(min) + ".." + fmt(max);
        String s = scalar(n, where(key), expected);
        if (s == null) {
            return null;
        }
        try {
            double v = Double.parseDouble(s.trim());
            if (!(v >= min && v <= max)) {
                problems.add(where(key), "expected " + expected + ", got " + s.trim());
                return null;
            }
            return v;
        } catch (NumberFormatException e) {
            problems.add(where(key), "expected " + expected + ", got \"" + s + "\"");
            return null;
        }
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    /** true/false (also yes/no, on/off); null when absent or invalid (reported). */
    public Boolean bool(String key) {
        Node n = node(key);
        if (n == null) {
            return null;
        }
        String s = scalar(n, where(key), "true or false");
        if (s == null) {
            return null;
        }
        return switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on" -> true;
            case "false", "no", "off" -> false;
            default -> {
                problems.add(where(key), "expected true or false, got \"" + s + "\"");
                yield null;
            }
        };
    }

    /** One of {@code choices}; null when absent or invalid (reported). */
    public String choice(String key, String... choices) {
        String s = string(key);
        if (s == null) {
            return null;
        }
        if (!Arrays.asList(choices).contains(s.trim())) {
            problems.add(where(key), "expected one of " + String.join(", ", choices) + ", got \"" + s + "\"");
            return null;
        }
        return s.trim();
    }

    /**
     * The items of a list under {@code key}, each with its path {@code key[i]}. Absent or empty gives an
     * empty list; a single scalar where a list is expected is reported.
     */
    public List<Item> list(String key) {
        Node n = node(key);
        List<Item> l = new ArrayList<>();
        if (n == null || isNull(n)) {
            return l;
        }
        if (!(n instanceof SequenceNode seq)) {
            problems.add(where(key), "expected a list (lines starting with '- ', or [a, b]), got " + describe(n));
            return l;
        }
        int i = 0;
        for (Node item : seq.getValue()) {
            l.add(new Item(item, at(file, item, path(key) + "[" + i++ + "]")));
        }
        return l;
    }

    /** The mapping under {@code key}, or null when absent or not a mapping (reported). */
    public YamlMap map(String key) {
        Node n = node(key);
        return n == null ? null : of(problems, file, n, path(key));
    }

    /** The entries of a mapping as key, value node and where the value is (for free-form maps like knobs). */
    public List<Map.Entry<String, Item>> entries() {
        List<Map.Entry<String, Item>> l = new ArrayList<>();
        for (var e : entries.entrySet()) {
            Node v = e.getValue().getValueNode();
            l.add(Map.entry(e.getKey(), new Item(v, at(file, v, path(e.getKey())))));
        }
        return l;
    }

    public Problems problems() {
        return problems;
    }

    public String file() {
        return file;
    }
}
