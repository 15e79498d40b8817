package dev.usnet.tools.topology;

import dev.usnet.core.device.Device;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.app.AppKinds;
import dev.usnet.tools.topology.file.CaptureCheck;
import dev.usnet.tools.topology.file.Expectation;
import dev.usnet.tools.topology.file.NeighSyntax;
import dev.usnet.tools.topology.file.TopologyParams;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.App;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.Capture;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelNs;
import dev.usnet.tools.topology.file.TopologySpec.Knob;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.TopologySpec.Neigh;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import dev.usnet.tools.topology.file.TopologySpec.Text;
import dev.usnet.tools.topology.file.PcapReplay;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * Reads a topology file (YAML; format in docs/topology.md) into a {@link TopologySpec}. Every problem is
 * reported as {@code file:line: key.path: message}, all of them at once; structural checks across the file
 * (references, duplicates) are made here too, also when some entries could not be read. What only a built
 * stack can judge (routes, knob values) is left to {@link TopologyBuilder}; {@link #check} runs all of it.
 */
public final class TopologyFile {
    static final Set<String> TOP_KEYS = Set.of("version", "name", "seed", "params", "output", "kernel", "namespaces",
            "expect");
    static final Set<String> OUTPUT_KEYS = Set.of("dir", "histogram_interval");
    static final Set<String> KERNEL_KEYS = Set.of("namespaces");
    static final Set<String> NS_KEYS = Set.of("knobs", "devices", "routes", "neighbours", "captures", "histograms", "apps",
            "nftables");
    static final Set<String> LINK_KEYS = Set.of("name", "kind", "mac", "mtu", "up", "addresses", "tx_checksumming", "gso",
            "gro", "netem", "needed_headroom");
    static final Set<String> CAPTURE_KEYS = Set.of("device", "direction", "file", "max_frames");
    /** A namespace name; compiled once, since count: can make thousands. */
    private static final java.util.regex.Pattern NS_NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /** Linux IFNAMSIZ - 1. */
    static final int IFNAME_MAX = 15;

    private final String file;
    private final Problems problems = new Problems();
    /** The {@code master:} of veth ends, joined to their bridges once every namespace's devices are known. */
    private final List<Master> masters = new ArrayList<>();

    /** A veth end {@code dev} of namespace {@code ns} that is to be a port of bridge {@code bridge} there. */
    private record Master(String ns, String dev, String bridge, Where where) {}

    private TopologyFile(String file) {
        this.file = file;
    }

    /** Reads and checks {@code path} with its parameters' defaults; the file is named in errors as the user gave it. */
    public static TopologySpec load(Path path) {
        return read(path, Map.of());
    }

    /** As {@link #load(Path)}. */
    public static TopologySpec read(Path path) {
        return read(path, Map.of());
    }

    /**
     * Reads and checks {@code path} with {@code params} overriding the defaults of its {@code params:} (as
     * {@code --param NAME=VALUE} does); the values that took effect are {@link TopologySpec#params()}. Throws
     * {@link TopologyException} with every problem, also a name in {@code params} the file does not declare.
     */
    public static TopologySpec read(Path path, Map<String, String> params) {
        return parse(path.toString(), readText(path), params);
    }

    private static String readText(Path path) {
        try {
            return Files.readString(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new TopologyException(List.of(path + ": no such file"));
        } catch (IOException e) {
            throw new TopologyException(List.of(path + ": cannot read: " + e.getMessage()));
        }
    }

    /**
     * Parses topology text and checks its references; {@code file} names it in errors. Throws
     * {@link TopologyException} with every problem. What only a built stack can judge is left to {@link #check}.
     */
    public static TopologySpec parse(String file, String text) {
        return parse(file, text, Map.of());
    }

    /** As {@link #parse(String, String)} with {@code params} overriding the file's parameter defaults. */
    public static TopologySpec parse(String file, String text, Map<String, String> params) {
        TopologyFile f = new TopologyFile(file);
        TopologySpec spec = f.readSpec(text, params);
        if (spec != null) {
            TopologyChecks.check(spec, f.problems);
        }
        f.problems.throwIfAny();
        return spec;
    }

    /**
     * A topology that would build, with the warnings found on the way (each {@code file:line: key: warning: ...}),
     * and apart from them those that matter only in virtual time ({@code --clock virtual}).
     */
    public record Checked(TopologySpec spec, List<String> warnings, List<String> virtualClockWarnings) {}

    /**
     * What {@code usnet run --check} judges, in one pass: reads {@code path}, checks its references, adds the
     * command line's captures ({@code NS/DEV[:in|out|inout]=FILE}) and knobs ({@code [NS:]KEY=VALUE}), and builds it
     * in virtual time. Throws {@link TopologyException} with every error of all of these at once.
     */
    public static Checked check(Path path, List<String> captures, List<String> knobs) {
        return check(path, Map.of(), captures, knobs);
    }

    /** As {@link #check(Path, List, List)} with {@code params} overriding the file's parameter defaults. */
    public static Checked check(Path path, Map<String, String> params, List<String> captures, List<String> knobs) {
        return check(path.toString(), readText(path), params, captures, knobs);
    }

    /** As {@link #check(Path, List, List)} for text named {@code file}. */
    public static Checked check(String file, String text, List<String> captures, List<String> knobs) {
        return check(file, text, Map.of(), captures, knobs);
    }

    /** As {@link #check(Path, Map, List, List)} for text named {@code file}. */
    public static Checked check(String file, String text, Map<String, String> params, List<String> captures,
                                List<String> knobs) {
        TopologyFile f = new TopologyFile(file);
        TopologySpec spec = f.readSpec(text, params);
        if (spec == null) {
            f.problems.throwIfAny();
        }
        TopologyChecks.check(spec, f.problems);
        spec = spec.withCaptures(captures, f.problems).withKnobs(knobs, f.problems);
        TopologyBuilder.check(spec, f.problems);
        f.problems.throwIfAny();
        return new Checked(spec, f.problems.warnings(), f.problems.virtualClockWarnings());
    }

    private TopologySpec readSpec(String text, Map<String, String> params) {
        LoadSettings settings = LoadSettings.builder().setLabel(file).setUseMarks(true).setAllowDuplicateKeys(true)
                .setMaxAliasesForCollections(50).build();
        Optional<Node> root;
        try {
            root = new Compose(settings).composeString(text);
        } catch (MarkedYamlEngineException e) {
            int line = e.getProblemMark().or(e::getContextMark).map(Mark::getLine).orElse(-1) + 1;
            String ctx = e.getContext() == null ? "" : e.getContext() + ": ";
            problems.addRaw(file + ":" + line + ": YAML syntax: " + ctx + e.getProblem(), line);
            return null;
        } catch (YamlEngineException e) {
            problems.addRaw(file + ": YAML: " + e.getMessage(), 0);
            return null;
        }
        if (root.isEmpty()) {
            problems.addRaw(file + ":1: the file is empty (expected at least 'namespaces:')", 1);
            return null;
        }
        List<TopologySpec.Param> declared = List.of();
        Node rootNode = root.get();
        if (rootNode instanceof org.snakeyaml.engine.v2.nodes.MappingNode mn) {
            TopologyParams.Expanded x = TopologyParams.expand(problems, file, mn, params);
            if (x == null) {
                return null;
            }
            rootNode = x.top();
            declared = x.params();
        } else if (!params.isEmpty()) {
            TopologyParams.expand(problems, file, new org.snakeyaml.engine.v2.nodes.MappingNode(
                    org.snakeyaml.engine.v2.nodes.Tag.MAP, List.of(), org.snakeyaml.engine.v2.common.FlowStyle.BLOCK), params);
        }
        YamlMap top = YamlMap.of(problems, file, rootNode, "");
        if (top == null) {
            return null;
        }
        top.allow(TOP_KEYS);
        Long version = top.integer("version", 1, 1);
        String name = top.string("name");
        Long seed = top.integer("seed", Long.MIN_VALUE, Long.MAX_VALUE);
        TopologySpec.Output output = new TopologySpec.Output(null, 0);
        YamlMap out = top.map("output");
        if (out != null) {
            out.allow(OUTPUT_KEYS);
            Double iv = out.number("histogram_interval", 0, 86_400);
            output = new TopologySpec.Output(out.string("dir"), iv == null ? 0 : iv);
        }
        List<KernelNs> kernel = new ArrayList<>();
        YamlMap k = top.map("kernel");
        if (k != null) {
            k.allow(KERNEL_KEYS);
            for (YamlMap.Item it : k.list("namespaces")) {
                String n = k.scalar(it.node(), it.where(), "a kernel namespace name");
                if (n != null) {
                    if (!n.matches("[A-Za-z0-9_.-]{1,64}") || n.equals(".") || n.equals("..")) {
                        problems.add(it.where(), "invalid namespace name \"" + n + "\" (letters, digits, '_', '.', '-'; at most 64)");
                    } else {
                        kernel.add(new KernelNs(n, it.where()));
                    }
                }
            }
        }
        List<Ns> namespaces = new ArrayList<>();
        if (top.require("namespaces")) {
            YamlMap nsMap = top.map("namespaces");
            if (nsMap != null) {
                Map<String, List<DeviceSpec>> peers = new LinkedHashMap<>();
                List<NsDraft> drafts = new ArrayList<>();
                for (var e : nsMap.entries()) {
                    NsDraft d = readNamespace(e.getKey(), e.getValue(), peers);
                    if (d != null) {
                        drafts.add(d);
                    }
                }
                if (drafts.isEmpty() && problems.isEmpty()) {
                    problems.add(nsMap.where(), "declares no namespace");
                }
                for (NsDraft d : drafts) {
                    d.devices.addAll(peers.getOrDefault(d.name, List.of()));
                }
                joinMasters(drafts);
                for (NsDraft d : drafts) {
                    namespaces.add(d.build());
                }
            }
        }
        String nm = name != null ? name : stem(file);
        List<Expectation> expect = new ArrayList<>();
        for (YamlMap.Item it : top.list("expect")) {
            if (it.node() instanceof org.snakeyaml.engine.v2.nodes.MappingNode) {
                // A check on a capture: {capture: NS/DEV, count: {...}} or {capture: NS/DEV, matches: FILE}.
                YamlMap cm = YamlMap.of(problems, file, it.node(), it.where().path());
                Expectation e = CaptureCheck.read(cm, PcapReplay.baseDir(file), problems);
                if (e != null) {
                    expect.add(e);
                }
                continue;
            }
            String x = top.scalar(it.node(), it.where(), "an expectation: app|ns|path|device SELECTOR FIELD OP VALUE,"
                    + " or a capture check {capture: NS/DEV, count: {...} | matches: FILE}");
            Expectation e = x == null ? null : Expectation.parse(x, it.where(), problems);
            if (e != null) {
                expect.add(e);
            }
        }
        TopologySpec spec = new TopologySpec(file, nm, seed == null ? 1 : seed, output, List.copyOf(kernel),
                List.copyOf(namespaces), List.copyOf(expect), declared);
        Expectation.checkSelectors(expect, spec, problems);
        return spec;
    }

    static String stem(String file) {
        String f = Path.of(file).getFileName().toString();
        int dot = f.lastIndexOf('.');
        return dot > 0 ? f.substring(0, dot) : f;
    }

    private final class NsDraft {
        final String name;
        final Where where;
        final List<Knob> knobs = new ArrayList<>();
        final List<DeviceSpec> devices = new ArrayList<>();
        final List<Text> routes = new ArrayList<>();
        final List<Neigh> neighbours = new ArrayList<>();
        final List<Capture> captures = new ArrayList<>();
        final List<App> apps = new ArrayList<>();
        boolean histograms;
        Text nftables;

        NsDraft(String name, Where where) {
            this.name = name;
            this.where = where;
        }

        Ns build() {
            return new Ns(name, where, List.copyOf(knobs), List.copyOf(devices), List.copyOf(routes), List.copyOf(neighbours),
                    List.copyOf(captures), histograms, List.copyOf(apps), nftables);
        }
    }

    private NsDraft readNamespace(String name, YamlMap.Item item, Map<String, List<DeviceSpec>> peers) {
        if (!NS_NAME.matcher(name).matches()) {
            problems.add(item.where(), "invalid namespace name (letters, digits, '_', '.', '-'; at most 64)");
            return null;
        }
        YamlMap m = YamlMap.of(problems, file, item.node(), item.where().path());
        if (m == null) {
            return null;
        }
        m.allow(NS_KEYS);
        if (!NS_KEYS.containsAll(m.keys())) {
            // A misspelt 'routes:' or 'devices:' leaves the namespace without what the file means it to have.
            problems.incomplete(name);
        }
        NsDraft d = new NsDraft(name, item.where());
        YamlMap knobs = m.map("knobs");
        if (knobs != null) {
            for (var e : knobs.entries()) {
                YamlMap.Item v = e.getValue();
                String s = knobs.scalar(v.node(), v.where(), "a value (a number or a word)");
                if (s != null) {
                    String val = switch (s.trim().toLowerCase(Locale.ROOT)) {
                        case "true", "yes", "on" -> "1";
                        case "false", "no", "off" -> "0";
                        default -> s.trim();
                    };
                    d.knobs.add(new Knob(e.getKey(), val, v.where()));
                }
            }
        }
        for (YamlMap.Item it : m.list("devices")) {
            DeviceSpec dev = readDevice(name, it, peers);
            if (dev != null) {
                d.devices.add(dev);
            } else {
                problems.dropped(name, rawName(it.node()));
            }
        }
        for (YamlMap.Item it : m.list("routes")) {
            String s = m.scalar(it.node(), it.where(), "a route in 'ip route' syntax, like \"default via 198.18.0.1\"");
            if (s != null) {
                d.routes.add(new Text(s.trim(), it.where()));
            }
        }
        for (YamlMap.Item it : m.list("neighbours")) {
            String s = m.scalar(it.node(), it.where(), "a neighbour like \"198.18.0.2 lladdr 02:00:00:00:00:02 dev eth0\"");
            if (s != null) {
                Neigh n = NeighSyntax.parse(s, it.where(), problems);
                if (n != null) {
                    d.neighbours.add(n);
                }
            }
        }
        for (YamlMap.Item it : m.list("captures")) {
            Capture c = readCapture(name, it);
            if (c != null) {
                d.captures.add(c);
            }
        }
        Boolean h = m.bool("histograms");
        d.histograms = h != null && h;
        d.nftables = readNftables(m);
        for (YamlMap.Item it : m.list("apps")) {
            App a = readApp(it);
            if (a != null) {
                d.apps.add(a);
            }
        }
        return d;
    }

    /**
     * {@code nftables:} the namespace's ruleset, applied when it is built. Its Where is the line before the
     * ruleset's first line, so ruleset line N is file line where + N: the {@code |} line of a literal block, the
     * line before a one-line scalar. A folded block ({@code >}) would join the rules into one line: refused.
     */
    private Text readNftables(YamlMap m) {
        org.snakeyaml.engine.v2.nodes.Node n = m.node("nftables");
        if (n == null) {
            return null;
        }
        Where w = m.where("nftables");
        if (n instanceof org.snakeyaml.engine.v2.nodes.MappingNode) {
            return readNftablesFile(YamlMap.of(problems, file, n, w.path()), w);
        }
        String text = m.scalar(n, w, "a ruleset in nft syntax (a literal block: nftables: |, or {file: FILE.nft})");
        if (text == null) {
            return null;
        }
        var style = ((org.snakeyaml.engine.v2.nodes.ScalarNode) n).getScalarStyle();
        if (style == org.snakeyaml.engine.v2.common.ScalarStyle.FOLDED) {
            problems.add(w, "a folded block (>) joins the rules into one line: write the ruleset as a literal block (|)");
            return null;
        }
        boolean block = style == org.snakeyaml.engine.v2.common.ScalarStyle.LITERAL;
        return new Text(text, new Where(w.file(), block ? w.line() : w.line() - 1, w.path()));
    }

    /**
     * {@code nftables: {file: FILE}}: the ruleset is the file's text (as {@code nft -f FILE} reads it), the path
     * relative to the topology file's directory; a parameter in the name picks one of several rulesets
     * ({@code file: "rules-${variant}.nft"}). A file with no rule in it (empty, or only comments) means no ruleset.
     * Errors in it name the file and its line.
     */
    private Text readNftablesFile(YamlMap m, Where w) {
        if (m == null) {
            return null;
        }
        m.allow(java.util.Set.of("file"));
        if (!m.require("file")) {
            return null;
        }
        String name = m.string("file");
        if (name == null) {
            return null;
        }
        java.nio.file.Path path = PcapReplay.baseDir(file).resolve(name.trim());
        String text;
        try {
            text = java.nio.file.Files.readString(path);
        } catch (java.io.IOException | RuntimeException e) {
            problems.add(m.where("file"), "cannot read the ruleset " + path + ": " + e.getMessage());
            return null;
        }
        boolean anything = text.lines().map(String::strip).anyMatch(l -> !l.isEmpty() && !l.startsWith("#"));
        return anything ? new Text(text, new Where(path.toString(), 0, w.path())) : null;
    }

    private DeviceSpec readDevice(String ns, YamlMap.Item it, Map<String, List<DeviceSpec>> peers) {
        YamlMap m = YamlMap.of(problems, file, it.node(), it.where().path());
        if (m == null) {
            return null;
        }
        String kind = null;
        if (m.require("kind")) {
            kind = m.choice("kind", LinkKinds.names().toArray(new String[0]));
        }
        if (kind == null) {
            m.allow(allKeys());
            return null;
        }
        Set<String> allowed = new java.util.HashSet<>(LINK_KEYS);
        allowed.addAll(LinkKinds.byName(kind).keys());
        Map<String, String> elsewhere = new LinkedHashMap<>();
        for (LinkKind<?> other : LinkKinds.all()) {
            for (String key : other.keys()) {
                if (!allowed.contains(key)) {
                    elsewhere.put(key, "applies to kind " + other.name() + ", not " + kind);
                }
            }
        }
        m.allow(allowed, elsewhere);
        Link link = LinkSettings.read(m, LinkKinds.byName(kind).fixedName());
        if (link == null) {
            return null;
        }
        return LinkKinds.byName(kind).read(new LinkKind.Entry(this, ns, m, link, peers));
    }

    private static Set<String> allKeys() {
        Set<String> s = new java.util.HashSet<>(LINK_KEYS);
        LinkKinds.all().forEach(k -> s.addAll(k.keys()));
        return s;
    }

    /** A Linux interface name: 1..15 printable characters, no slash, colon or space. */
    public static boolean validIfname(String n) {
        return !n.isEmpty() && n.length() <= IFNAME_MAX && !n.equals(".") && !n.equals("..")
                && n.chars().noneMatch(c -> c == '/' || c == ':' || Character.isWhitespace(c) || c < 0x21 || c > 0x7e);
    }

    /** A veth end {@code dev} of namespace {@code ns} is to be a port of bridge {@code bridge} there ({@code master:}). */
    void addMaster(String ns, String dev, String bridge, Where where) {
        masters.add(new Master(ns, dev, bridge, where));
    }

    /** How many {@code master:} keys were read so far. */
    int masterCount() {
        return masters.size();
    }

    /** Forgets the {@code master:} read as the {@code index}th, when it is the one at {@code where}. */
    void dropMaster(int index, Where where) {
        if (masters.size() > index && masters.get(index).where().equals(where)) {
            masters.remove(index);
        }
    }

    Problems problems() {
        return problems;
    }

    /** The file as the user named it. */
    String file() {
        return file;
    }

    /**
     * Makes each veth end with {@code master: BRIDGE} a port of that bridge of its namespace, after the
     * bridge's own {@code ports:} ({@code ip link set dev X master BRIDGE}). One index of each namespace's
     * devices, so ten thousand ports join in linear time.
     */
    private void joinMasters(List<NsDraft> drafts) {
        if (masters.isEmpty()) {
            return;
        }
        Map<String, NsDraft> byName = new java.util.HashMap<>();
        drafts.forEach(d -> byName.putIfAbsent(d.name, d));
        Map<NsDraft, Map<String, Integer>> devIndex = new java.util.HashMap<>();
        // By identity: a bridge record's hash would walk its whole port list on every lookup.
        Map<BridgeDev, List<Ref>> added = new java.util.IdentityHashMap<>();
        Map<BridgeDev, Map<String, Ref>> listed = new java.util.IdentityHashMap<>();
        Map<BridgeDev, NsDraft> home = new java.util.IdentityHashMap<>();
        Map<BridgeDev, Integer> at = new java.util.IdentityHashMap<>();
        for (Master ms : masters) {
            NsDraft d = byName.get(ms.ns());
            if (d == null) {
                continue; // the namespace is missing or could not be read: reported already
            }
            Map<String, Integer> idx = devIndex.computeIfAbsent(d, x -> {
                Map<String, Integer> i = new java.util.HashMap<>();
                for (int k = 0; k < x.devices.size(); k++) {
                    i.putIfAbsent(x.devices.get(k).link().name(), k);
                }
                return i;
            });
            Integer bi = idx.get(ms.bridge());
            if (bi == null) {
                if (!problems.mayBeDropped(ms.ns(), ms.bridge())) {
                    problems.add(ms.where(), "no device " + ms.bridge() + " in namespace " + ms.ns()
                            + "; master: names a bridge in the namespace of this veth end");
                }
                continue;
            }
            if (!(d.devices.get(bi) instanceof BridgeDev b)) {
                problems.add(ms.where(), ms.bridge() + " is a " + d.devices.get(bi).kind() + ", not a bridge");
                continue;
            }
            Map<String, Ref> own = listed.computeIfAbsent(b, x -> {
                Map<String, Ref> o = new java.util.HashMap<>();
                x.ports().forEach(r -> o.putIfAbsent(r.name(), r));
                return o;
            });
            Ref first = own.get(ms.dev());
            if (first != null) {
                problems.add(ms.where(), ms.dev() + " is already a port of " + ms.bridge() + " (its ports: at line "
                        + first.where().line() + "); give it either master: or a place in ports:, not both");
                continue;
            }
            home.put(b, d);
            at.put(b, bi);
            added.computeIfAbsent(b, x -> new ArrayList<>()).add(new Ref(ms.dev(), ms.where()));
        }
        for (var e : added.entrySet()) {
            BridgeDev b = e.getKey();
            List<Ref> ports = new ArrayList<>(b.ports());
            ports.addAll(e.getValue());
            home.get(b).devices.set(at.get(b), new BridgeDev(b.link(), List.copyOf(ports), b.ageingTimeSeconds(),
                    b.fdbMaxLearned(), b.groupFwdMask()));
        }
    }

    /** The name an entry gives (a {@code name:} scalar, itself or in a mapping), unchecked; null when there is none. */
    static String rawName(Node n) {
        if (n instanceof org.snakeyaml.engine.v2.nodes.MappingNode m) {
            for (var t : m.getValue()) {
                if (t.getKeyNode() instanceof org.snakeyaml.engine.v2.nodes.ScalarNode k && k.getValue().equals("name")) {
                    return rawName(t.getValueNode());
                }
            }
            return null;
        }
        return n instanceof org.snakeyaml.engine.v2.nodes.ScalarNode s && !YamlMap.isNull(n) ? s.getValue().trim() : null;
    }

    private Capture readCapture(String ns, YamlMap.Item it) {
        YamlMap m = YamlMap.of(problems, file, it.node(), it.where().path());
        if (m == null) {
            return null;
        }
        m.allow(CAPTURE_KEYS);
        if (!m.require("device")) {
            return null;
        }
        String dev = m.string("device");
        String dir = m.has("direction") ? m.choice("direction", "in", "out", "inout") : "inout";
        String f = m.has("file") ? m.string("file") : null;
        Long max = m.integer("max_frames", 1, Long.MAX_VALUE);
        if (dev == null || dir == null || m.has("file") && f == null) {
            return null;
        }
        if (f == null) {
            f = ns + "-" + dev + ".pcap";
        }
        return new Capture(dev, PcapTap.Direction.valueOf(dir.toUpperCase(Locale.ROOT)), f, max == null ? Long.MAX_VALUE : max,
                m.where());
    }

    /** An {@code apps:} entry, read by the kind its {@code kind:} names; null when something is wrong (reported). */
    private App readApp(YamlMap.Item it) {
        YamlMap m = YamlMap.of(problems, file, it.node(), it.where().path());
        if (m == null) {
            return null;
        }
        String kind = null;
        if (m.require("kind")) {
            kind = m.choice("kind", AppKinds.names().toArray(new String[0]));
        }
        if (kind == null) {
            return null;
        }
        return AppKinds.byName(kind).read(m);
    }

    /**
     * One app entry given as words, {@code KIND KEY VALUE ...} ({@code stream server node2 duration 5s}, as {@code usnet
     * ctl app start} takes them), read by the code that reads a file's {@code apps:} items, so every key means and is
     * checked as there. Throws {@link TopologyException} with every problem, each naming its key.
     */
    public static App readAppWords(List<String> words) {
        if (words.isEmpty()) {
            throw new TopologyException(List.of("missing KIND (one of: " + String.join(", ", AppKinds.names()) + ")"));
        }
        if (words.size() % 2 == 0) {
            throw new TopologyException(List.of("key '" + words.getLast() + "' has no value (KIND KEY VALUE ...)"));
        }
        StringBuilder y = new StringBuilder("namespaces:\n  app:\n    apps:\n      - kind: ").append(yamlWord(words.get(0)))
                .append('\n');
        for (int i = 1; i < words.size(); i += 2) {
            y.append("        ").append(yamlWord(words.get(i))).append(": ").append(yamlWord(words.get(i + 1))).append('\n');
        }
        TopologyFile f = new TopologyFile("app start");
        TopologySpec spec = f.readSpec(y.toString(), Map.of());
        f.problems.throwIfAny();
        return spec.namespaces().getFirst().apps().getFirst();
    }

    /** A word as a YAML scalar: plain when it is one, else double-quoted. */
    private static String yamlWord(String w) {
        if (w.matches("[A-Za-z0-9_./+-][A-Za-z0-9_./:+-]*") && !w.endsWith(":")) {
            return w;
        }
        return '"' + w.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
