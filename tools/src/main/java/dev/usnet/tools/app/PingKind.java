package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec.Ping;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: ping}: echo requests to one address ({@link Pinger}). */
public final class PingKind implements AppKind<Ping> {
    private static final Set<String> KEYS = Set.of("kind", "to", "interval", "size", "start");

    @Override
    public String name() {
        return "ping";
    }

    @Override
    public Set<String> keys() {
        return KEYS;
    }

    @Override
    public Class<Ping> specType() {
        return Ping.class;
    }

    @Override
    public Order order() {
        return Order.SENDER;
    }

    @Override
    public Ping read(YamlMap m) {
        m.allow(KEYS);
        Long start = EntryValues.start(m);
        if (start == null) {
            return null;
        }
        Integer to = EntryValues.ip(m, "to");
        Double iv = m.number("interval", 0.001, 3600);
        Long size = m.integer("size", 0, 65_507);
        return to == null ? null : new Ping(to, iv == null ? 1.0 : iv, size == null ? 56 : size.intValue(), m.where(), start);
    }

    @Override
    public App create(AppContext c, String ns, Ping spec) {
        return new Pinger(ns, c.topology().stack(ns), spec, c.takeEchoId());
    }
}
