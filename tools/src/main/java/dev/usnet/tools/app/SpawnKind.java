package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec.Spawn;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: spawn}: short-lived processes forked at a steady rate ({@link Spawner}). */
public final class SpawnKind implements AppKind<Spawn> {
    private static final Set<String> KEYS = Set.of("kind", "rate", "lifetime", "count", "start");

    @Override
    public String name() {
        return "spawn";
    }

    @Override
    public Set<String> keys() {
        return KEYS;
    }

    @Override
    public Class<Spawn> specType() {
        return Spawn.class;
    }

    @Override
    public Order order() {
        return Order.SENDER;
    }

    @Override
    public Spawn read(YamlMap m) {
        m.allow(KEYS);
        Long start = EntryValues.start(m);
        if (start == null) {
            return null;
        }
        Long rate = m.integer("rate", 1, 1_000_000);
        Long lifetime = m.has("lifetime") ? EntryValues.time(m, "lifetime", 0) : Long.valueOf(0);
        Long count = m.integer("count", 0, Long.MAX_VALUE);
        if (rate == null && m.has("rate") || lifetime == null || count == null && m.has("count")) {
            return null;
        }
        return new Spawn(rate == null ? 100 : rate.intValue(), lifetime, count == null ? 0 : count, m.where(), start);
    }

    @Override
    public App create(AppContext c, String ns, Spawn spec) {
        return new Spawner(ns, c.topology().stack(ns), spec);
    }
}
