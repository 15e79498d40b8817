package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Every device kind, in the order errors list them: the one place a kind is registered. */
public final class LinkKinds {
    private static final List<LinkKind<?>> ALL = List.of(
            new VethKind(),
            new BridgeKind(),
            new TapKind(),
            new PcapKind(),
            new LoopbackKind(),
            new ReplayKind());

    private static final Map<String, LinkKind<?>> BY_NAME = index(ALL);

    private LinkKinds() {}

    static Map<String, LinkKind<?>> index(List<LinkKind<?>> kinds) {
        Map<String, LinkKind<?>> m = new LinkedHashMap<>();
        for (LinkKind<?> k : kinds) {
            if (m.putIfAbsent(k.name(), k) != null) {
                throw new IllegalStateException("two device kinds are named " + k.name());
            }
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** Every kind, in registration order. */
    public static List<LinkKind<?>> all() {
        return ALL;
    }

    /** The kinds' names, in registration order. */
    public static List<String> names() {
        return List.copyOf(BY_NAME.keySet());
    }

    /** The kind named {@code name}, or null. */
    public static LinkKind<?> byName(String name) {
        return BY_NAME.get(name);
    }

    /** The names of the kinds {@code usnet ctl link add} makes in a running namespace, in registration order. */
    public static List<String> liveAddable() {
        List<String> l = new java.util.ArrayList<>();
        for (LinkKind<?> k : ALL) {
            if (k.liveAdd() instanceof LiveAdd.Addable) {
                l.add(k.name());
            }
        }
        return l;
    }

    /**
     * Why {@code link add NAME type KIND} is refused for a kind that is not made live: the kind's reason and the kinds
     * that are.
     */
    public static String liveAddRefusal(String name, LinkKind<?> kind, LiveAdd.Refused r) {
        return "link add " + name + ": type " + kind.name() + " cannot be added to a running namespace: " + r.why()
                + " (link add makes " + orList(liveAddable()) + ")";
    }

    /** {@code link add NAME type KIND} with a KIND no kind is named. */
    public static String unknownKind(String name, String type) {
        return "link add " + name + ": unknown type '" + type + "' (device kinds: " + String.join(", ", names())
                + "; link add makes " + orList(liveAddable()) + ")";
    }

    /** {@code a, b or c}. */
    public static String orList(List<String> l) {
        return l.size() <= 1 ? String.join("", l)
                : String.join(", ", l.subList(0, l.size() - 1)) + " or " + l.getLast();
    }

    /** The kind of entry {@code d}, by its {@code kind()}; an entry no registered kind reads is refused loudly. */
    static LinkKind<?> of(DeviceSpec d) {
        LinkKind<?> k = BY_NAME.get(d.kind());
        if (k == null || !k.reads(d)) {
            throw new IllegalStateException("no registered device kind reads " + d.getClass().getSimpleName()
                    + " entries (kind " + d.kind() + "; registered: " + String.join(", ", names()) + ")");
        }
        return k;
    }

    /** Checks entry {@code d} with the kind that reads it. */
    @SuppressWarnings("unchecked")
    static void check(LinkKind.Checks c, TopologySpec.Ns ns, DeviceSpec d) {
        // of(d) checked that this kind reads d.
        ((LinkKind<DeviceSpec>) of(d)).check(c, ns, d);
    }

    /** Makes the device of entry {@code d} with the kind that reads it. */
    @SuppressWarnings("unchecked")
    static void create(TopologyBuilder b, String ns, NetStack s, DeviceSpec d, long mac) {
        // of(d) checked that this kind reads d.
        ((LinkKind<DeviceSpec>) of(d)).create(b, ns, s, d, mac);
    }
}
