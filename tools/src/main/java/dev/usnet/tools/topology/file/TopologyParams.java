package dev.usnet.tools.topology.file;

import dev.usnet.tools.topology.file.TopologySpec.Param;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * The {@code params:} section of a topology file and what it does to the rest (docs/topology.md, "Parameters"):
 * every {@code ${EXPR}} in a scalar is replaced by the parameter's value or the integer expression's result, and
 * a namespace entry with {@code count: N} becomes N entries with {@code ${i}} = 0..N-1. This works on the YAML
 * node tree before the file is read, and the new nodes keep the marks of the text they came from, so every later
 * check still names the line the user wrote.
 */
public final class TopologyParams {
    static final Set<String> PARAM_KEYS = Set.of("default", "doc");
    /** The index of a repeated entry; not a parameter name, so it cannot be declared. */
    static final String INDEX = "i";
    /** The most entries one {@code count:} may make (ten times what has been measured to read fast). */
    static final long MAX_COUNT = 100_000;
    static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern NAME_IN_EXPR = Pattern.compile("(?<![0-9A-Za-z_])[A-Za-z_][A-Za-z0-9_]*");
    /** Deeper than any topology file; only a recursive alias gets here. */
    private static final int MAX_DEPTH = 64;

    private final Problems problems;
    private final String file;
    /** What {@code ${NAME}} stands for: the parameters, and {@code i} inside a repeated entry. */
    private final Map<String, String> values = new HashMap<>();
    private final List<Param> declared = new ArrayList<>();

    private TopologyParams(Problems problems, String file) {
        this.problems = problems;
        this.file = file;
    }

    /** The top mapping with its parameters applied and {@code params:} removed, and the parameters as they took effect. */
    public record Expanded(MappingNode top, List<Param> params) {}

    /**
     * Reads {@code params:} from {@code top}, applies {@code overrides} (from {@code --param NAME=VALUE}), and
     * returns the rest of the file with every {@code ${...}} replaced and every {@code count:} expanded. Returns
     * null when anything could not be resolved (all of it reported): reading on would only repeat those errors.
     */
    public static Expanded expand(Problems problems, String file, MappingNode top, Map<String, String> overrides) {
        TopologyParams p = new TopologyParams(problems, file);
        int before = problems.errorCount();
        List<NodeTuple> rest = new ArrayList<>();
        NodeTuple params = null;
        for (NodeTuple t : top.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("params") && params == null) {
                params = t;
            } else {
                rest.add(t);
            }
        }
        if (params != null) {
            p.declare(params.getValueNode());
        }
        p.override(overrides);
        if (problems.errorCount() > before) {
            return null;
        }
        List<NodeTuple> out = new ArrayList<>(rest.size());
        for (NodeTuple t : rest) {
            Node k = p.substituteKey(t.getKeyNode(), "");
            String key = k instanceof ScalarNode s ? s.getValue() : "";
            Node v = key.equals("namespaces") && t.getValueNode() instanceof MappingNode ns
                    ? p.namespaces(ns, key) : p.walk(t.getValueNode(), key, 0);
            out.add(new NodeTuple(k, v));
        }
        if (problems.errorCount() > before) {
            return null;
        }
        return new Expanded(copy(top, out), List.copyOf(p.declared));
    }

    private void declare(Node node) {
        YamlMap m = YamlMap.of(problems, file, node, "params");
        if (m == null) {
            return;
        }
        for (var e : m.entries()) {
            String name = e.getKey();
            YamlMap.Item it = e.getValue();
            if (!NAME.matcher(name).matches()) {
                problems.add(it.where(), "invalid parameter name (letters, digits and '_', not starting with a digit)");
                continue;
            }
            if (name.equals(INDEX)) {
                problems.add(it.where(), "'" + INDEX + "' is the index of entries repeated by count:; give the parameter another name");
                continue;
            }
            String value;
            String doc = "";
            if (it.node() instanceof MappingNode) {
                YamlMap pm = YamlMap.of(problems, file, it.node(), it.where().path());
                pm.allow(PARAM_KEYS);
                if (!pm.require("default")) {
                    continue;
                }
                value = pm.scalar(pm.node("default"), pm.where("default"), "a value (a number or a word)");
                if (pm.has("doc")) {
                    doc = pm.string("doc");
                }
                if (value == null || doc == null) {
                    continue;
                }
            } else {
                value = m.scalar(it.node(), it.where(), "a value, or {default: V, doc: \"what it is\"}");
                if (value == null) {
                    continue;
                }
            }
            values.put(name, value.trim());
            declared.add(new Param(name, value.trim(), value.trim(), doc.trim(), it.where()));
        }
    }

    private void override(Map<String, String> overrides) {
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < declared.size(); i++) {
            index.put(declared.get(i).name(), i);
        }
        for (var e : overrides.entrySet()) {
            Integer i = index.get(e.getKey());
            if (i == null) {
                problems.add(new Where("--param " + e.getKey() + "=" + e.getValue(), 0, ""), "no parameter " + e.getKey()
                        + " in " + file + " (declared: " + (declared.isEmpty() ? "none"
                        : String.join(", ", declared.stream().map(Param::name).toList())) + ")");
                continue;
            }
            Param d = declared.get(i);
            String v = e.getValue().trim();
            declared.set(i, new Param(d.name(), v, d.defaultValue(), d.doc(), d.where()));
            values.put(d.name(), v);
        }
    }

    /** The {@code namespaces:} mapping: entries with {@code count:} repeated, every other entry substituted. */
    private Node namespaces(MappingNode ns, String path) {
        List<NodeTuple> out = new ArrayList<>();
        for (NodeTuple t : ns.getValue()) {
            Node countNode = t.getValueNode() instanceof MappingNode m ? valueOf(m, "count") : null;
            if (countNode == null) {
                Node k = substituteKey(t.getKeyNode(), path);
                Node v = when(walk(t.getValueNode(), child(path, k), 1), child(path, k));
                if (v != null) {
                    out.add(new NodeTuple(k, v));
                }
                continue;
            }
            String rawName = t.getKeyNode() instanceof ScalarNode s ? s.getValue() : "";
            String entryPath = child(path, rawName);
            Where cw = YamlMap.at(file, countNode, entryPath + ".count");
            Long count = count(walk(countNode, entryPath + ".count", 2), cw);
            if (count == null) {
                continue;
            }
            if (!usesIndex(rawName)) {
                problems.add(YamlMap.at(file, t.getKeyNode(), entryPath), "a namespace entry with count: needs ${" + INDEX
                        + "} in its name (like idle${" + INDEX + "}), so each of its " + count + " namespaces has its own name");
                continue;
            }
            MappingNode body = (MappingNode) t.getValueNode();
            List<NodeTuple> rest = new ArrayList<>(body.getValue().size());
            for (NodeTuple bt : body.getValue()) {
                if (!(bt.getKeyNode() instanceof ScalarNode k && k.getValue().equals("count"))) {
                    rest.add(bt);
                }
            }
            MappingNode withoutCount = copy(body, rest);
            int errors = problems.errorCount();
            // With count: 0 the entry is still substituted once (and dropped), so a mistake in it shows before
            // someone raises the count.
            for (long i = 0; i < Math.max(count, 1); i++) {
                values.put(INDEX, Long.toString(i));
                Node k = substituteKey(t.getKeyNode(), path);
                Node v = when(walk(withoutCount, child(path, k), 1), child(path, k));
                if (i < count && v != null) {
                    out.add(new NodeTuple(k, v));
                }
                if (problems.errorCount() > errors) {
                    // The same mistake in every copy: once is enough.
                    break;
                }
            }
            values.remove(INDEX);
        }
        return copy(ns, out);
    }

    private Long count(Node n, Where w) {
        String s = n instanceof ScalarNode sc && !YamlMap.isNull(n) ? sc.getValue().trim() : null;
        try {
            long v = s == null ? -1 : Long.parseLong(s);
            if (v >= 0 && v <= MAX_COUNT) {
                return v;
            }
        } catch (NumberFormatException ignored) {
            // Reported below with what was there.
        }
        problems.add(w, "expected a count 0.." + MAX_COUNT + " (how many namespaces this entry makes), got "
                + YamlMap.describe(n));
        return null;
    }

    private static Node valueOf(MappingNode m, String key) {
        for (NodeTuple t : m.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) {
                return t.getValueNode();
            }
        }
        return null;
    }

    private static String child(String path, Node key) {
        return child(path, key instanceof ScalarNode s ? s.getValue() : "?");
    }

    private static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private Node substituteKey(Node key, String path) {
        if (!(key instanceof ScalarNode s)) {
            return key;
        }
        return scalar(s, YamlMap.at(file, key, child(path, s.getValue())));
    }

    /** Whether some {@code ${...}} of {@code raw} uses the index {@code i}. */
    public static boolean usesIndex(String raw) {
        int i = raw.indexOf("${");
        while (i >= 0) {
            int end = raw.indexOf('}', i + 2);
            if (end < 0) {
                return false;
            }
            var m = NAME_IN_EXPR.matcher(raw.substring(i + 2, end));
            while (m.find()) {
                if (m.group().equals(INDEX)) {
                    return true;
                }
            }
            i = raw.indexOf("${", end + 1);
        }
        return false;
    }

    private Node walk(Node n, String path, int depth) {
        if (depth > MAX_DEPTH) {
            problems.add(YamlMap.at(file, n, path), "nested too deeply (a recursive alias?)");
            return n;
        }
        switch (n) {
            case ScalarNode s -> {
                return scalar(s, YamlMap.at(file, n, path));
            }
            case SequenceNode seq -> {
                List<Node> out = new ArrayList<>(seq.getValue().size());
                int i = 0;
                for (Node item : seq.getValue()) {
                    String itemPath = path + "[" + i++ + "]";
                    Node v = when(walk(item, itemPath, depth + 1), itemPath);
                    if (v != null) {
                        out.add(v);
                    }
                }
                return new SequenceNode(seq.getTag(), true, out, seq.getFlowStyle(), seq.getStartMark(), seq.getEndMark());
            }
            case MappingNode m -> {
                List<NodeTuple> out = new ArrayList<>(m.getValue().size());
                for (NodeTuple t : m.getValue()) {
                    Node k = substituteKey(t.getKeyNode(), path);
                    out.add(new NodeTuple(k, walk(t.getValueNode(), child(path, k), depth + 1)));
                }
                return copy(m, out);
            }
            default -> {
                return n;
            }
        }
    }

    private static MappingNode copy(MappingNode m, List<NodeTuple> tuples) {
        return new MappingNode(m.getTag(), true, tuples, m.getFlowStyle(), m.getStartMark(), m.getEndMark());
    }

    /** The scalar with every {@code ${...}} replaced ({@code $$} is a literal {@code $}); the node itself when it has none. */
    private Node scalar(ScalarNode s, Where w) {
        String v = s.getValue();
        if (v.indexOf('$') < 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(v.length() + 8);
        int i = 0;
        while (i < v.length()) {
            char c = v.charAt(i);
            if (c == '$' && i + 1 < v.length() && v.charAt(i + 1) == '$') {
                out.append('$');
                i += 2;
            } else if (c == '$' && i + 1 < v.length() && v.charAt(i + 1) == '{') {
                int end = v.indexOf('}', i + 2);
                if (end < 0) {
                    problems.add(w, "'${' without its '}' in \"" + v + "\" (write $$ for a literal $)");
                    return s;
                }
                String r = ParamExpression.evaluate(v.substring(i + 2, end), w, problems, this::value);
                if (r == null) {
                    return s;
                }
                out.append(r);
                i = end + 1;
            } else {
                out.append(c);
                i++;
            }
        }
        return new ScalarNode(s.getTag(), true, out.toString(), s.getScalarStyle(), s.getStartMark(), s.getEndMark());
    }

    /**
     * A namespace entry or list item that holds {@code when: V}, after substitution: kept (without its
     * {@code when:}) when V is 1/true/yes, dropped when 0/false/no; anything else is reported and drops it.
     * Returns the node to keep, or null to drop it.
     */
    private Node when(Node n, String path) {
        if (!(n instanceof MappingNode m)) {
            return n;
        }
        Node w = valueOf(m, "when");
        if (w == null) {
            return n;
        }
        String v = w instanceof ScalarNode sc ? sc.getValue().trim().toLowerCase(Locale.ROOT) : null;
        boolean keep;
        if ("1".equals(v) || "true".equals(v) || "yes".equals(v)) {
            keep = true;
        } else if ("0".equals(v) || "false".equals(v) || "no".equals(v)) {
            keep = false;
        } else {
            problems.add(YamlMap.at(file, w, child(path, "when")), "expected a condition that gives 1 or 0 (true or false),"
                    + " like ${mode == \"netns\"}, got " + YamlMap.describe(w));
            return null;
        }
        if (!keep) {
            return null;
        }
        List<NodeTuple> rest = new ArrayList<>(m.getValue().size());
        for (NodeTuple t : m.getValue()) {
            if (!(t.getKeyNode() instanceof ScalarNode k && k.getValue().equals("when"))) {
                rest.add(t);
            }
        }
        return copy(m, rest);
    }

    private String value(String name, String inner, Where w) {
        String v = values.get(name);
        if (v == null) {
            String declaredNames = declared.isEmpty() ? "none" : String.join(", ", declared.stream().map(Param::name).toList());
            problems.add(w, "${" + inner + "}: undefined parameter " + name + (name.equals(INDEX)
                    ? " (${" + INDEX + "} is the index of a namespace entry with count:, and only defined inside one)"
                    : " (declared under params: " + declaredNames + ")"));
        }
        return v;
    }

    /** The effective values in declaration order. */
    public static Map<String, String> values(List<Param> params) {
        Map<String, String> m = new LinkedHashMap<>();
        params.forEach(p -> m.put(p.name(), p.value()));
        return m;
    }
}
