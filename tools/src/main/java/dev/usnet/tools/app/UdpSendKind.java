package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec.UdpSend;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: udp-send}: datagrams at a steady rate ({@link UdpSender}). */
public final class UdpSendKind implements AppKind<UdpSend> {
    private static final Set<String> KEYS = Set.of("kind", "to", "port", "rate", "size", "keep_clones", "max_burst", "start");

    @Override
    public String name() {
        return "udp-send";
    }

    @Override
    public Set<String> keys() {
        return KEYS;
    }

    @Override
    public Class<UdpSend> specType() {
        return UdpSend.class;
    }

    @Override
    public Order order() {
        return Order.SENDER;
    }

    @Override
    public UdpSend read(YamlMap m) {
        m.allow(KEYS);
        Long start = EntryValues.start(m);
        if (start == null) {
            return null;
        }
        Object to = EntryValues.ipEitherFamily(m, "to");
        Long port = m.require("port") ? m.integer("port", 1, 65535) : null;
        Long rate = m.integer("rate", 1, 1_000_000);
        Long size = m.integer("size", 0, 65_507);
        // keep_clones: 0..1048576, default 0; max_burst: a time, default 0 (no limit).
        Long keep = m.integer("keep_clones", 0, 1 << 20);
        Long burst = m.has("max_burst") ? EntryValues.time(m, "max_burst", 1) : Long.valueOf(0);
        boolean pacingOk = (keep != null || !m.has("keep_clones")) && burst != null;
        if (to instanceof EntryValues.Ip6Destination && keep != null && keep > 0) {
            m.problems().add(m.where("keep_clones"), "keep_clones applies to IPv4 destinations only so far");
            return null;
        }
        return to == null || port == null || !pacingOk ? null
                : new UdpSend(to instanceof Integer v4 ? v4 : 0, port.intValue(), rate == null ? 10 : rate.intValue(),
                        size == null ? 64 : size.intValue(), m.where(), keep == null ? 0 : keep.intValue(), burst, start,
                        to instanceof EntryValues.Ip6Destination d ? d : null);
    }

    @Override
    public App create(AppContext c, String ns, UdpSend spec) {
        return new UdpSender(ns, c.topology().stack(ns), spec);
    }
}
