package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: udp-sink}: counts the datagrams arriving on a port ({@link UdpSink}). */
public final class UdpSinkKind implements AppKind<TopologySpec.UdpSink> {
    private static final Set<String> KEYS = Set.of("kind", "port");

    @Override
    public String name() {
        return "udp-sink";
    }

    @Override
    public Set<String> keys() {
        return KEYS;
    }

    @Override
    public Class<TopologySpec.UdpSink> specType() {
        return TopologySpec.UdpSink.class;
    }

    @Override
    public Order order() {
        return Order.RECEIVER;
    }

    @Override
    public TopologySpec.UdpSink read(YamlMap m) {
        m.allow(KEYS);
        Long port = m.require("port") ? m.integer("port", 1, 65535) : null;
        return port == null ? null : new TopologySpec.UdpSink(port.intValue(), m.where());
    }

    @Override
    public App create(AppContext c, String ns, TopologySpec.UdpSink spec) {
        return new UdpSink(ns, c.topology().stack(ns), spec);
    }
}
