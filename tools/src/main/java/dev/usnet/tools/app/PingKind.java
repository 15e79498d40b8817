package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec.Ping;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: ping}: echo requests to one address, IPv4 or IPv6 ({@link Pinger}). */
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
        Object to = EntryValues.ipEitherFamily(m, "to");
        Double iv = m.number("interval", 0.001, 3600);
        Long size = m.integer("size", 0, 65_507);
        if (to == null) {
            return null;
        }
        double interval = iv == null ? 1.0 : iv;
        int bytes = size == null ? 56 : size.intValue();
        return to instanceof EntryValues.Ip6Destination d
                ? new Ping(0, interval, bytes, m.where(), start, d)
                : new Ping((Integer) to, interval, bytes, m.where(), start);
    }

    @Override
    public App create(AppContext c, String ns, Ping spec) {
        return new Pinger(ns, c.topology().stack(ns), spec, c.takeEchoId());
    }
}
