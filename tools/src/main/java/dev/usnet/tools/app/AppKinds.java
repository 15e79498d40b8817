package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.TopologySpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Every app kind, in the order errors list them: the one place a kind is registered. */
public final class AppKinds {
    private static final List<AppKind<?>> ALL = List.of(
            new PingKind(),
            new UdpSendKind(),
            new UdpSinkKind(),
            TcpAppKind.STREAM,
            TcpAppKind.RR,
            TcpAppKind.BURST,
            new SpawnKind(),
            new MpiKind(),
            new UdpEcho(),
            new HttpServer(),
            new HttpGet());

    private static final Map<String, AppKind<?>> BY_NAME = index(ALL);

    private AppKinds() {}

    /** The kinds by name; two kinds of one name, or one without a name or keys, stop the registry from loading. */
    public static Map<String, AppKind<?>> index(List<AppKind<?>> kinds) {
        Map<String, AppKind<?>> m = new LinkedHashMap<>();
        for (AppKind<?> k : kinds) {
            if (k.name() == null || k.name().isEmpty() || k.keys() == null || !k.keys().contains("kind")
                    || k.specType() == null || k.order() == null) {
                throw new IllegalStateException("app kind " + k.getClass().getName()
                        + " lacks a name, its keys (with 'kind'), its entry type or its order");
            }
            if (m.putIfAbsent(k.name(), k) != null) {
                throw new IllegalStateException("two app kinds are named " + k.name());
            }
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** Every kind, in registration order. */
    public static List<AppKind<?>> all() {
        return ALL;
    }

    /** The kinds' names, in registration order. */
    public static List<String> names() {
        return List.copyOf(BY_NAME.keySet());
    }

    /** The kind named {@code name}, or null when there is none. */
    public static AppKind<?> byName(String name) {
        return BY_NAME.get(name);
    }

    /**
     * The kind an entry is of, found by the entry's {@link TopologySpec.App#kind()} and checked against its type: an
     * entry no registered kind reads is a programming error, refused loudly rather than made into another kind.
     */
    public static AppKind<?> of(TopologySpec.App spec) {
        AppKind<?> k = BY_NAME.get(spec.kind());
        if (k == null || !k.specType().isInstance(spec)) {
            throw new IllegalStateException("no registered app kind reads " + spec.getClass().getSimpleName() + " entries (kind "
                    + spec.kind() + "; registered: " + String.join(", ", names()) + ")");
        }
        return k;
    }

    /** Makes the app of {@code spec} with the kind that reads such entries. */
    public static App create(AppContext c, String ns, TopologySpec.App spec) {
        return createAs(of(spec), c, ns, spec);
    }

    private static <S extends TopologySpec.App> App createAs(AppKind<S> k, AppContext c, String ns, TopologySpec.App spec) {
        return k.create(c, ns, k.specType().cast(spec));
    }

    /** The start and stop order of a running app, as its kind says. */
    public static AppKind.Order order(App a) {
        AppKind<?> k = BY_NAME.get(a.kind());
        if (k == null) {
            throw new IllegalStateException("app " + a.label() + " is of kind " + a.kind() + ", which is not registered");
        }
        return k.order();
    }
}
