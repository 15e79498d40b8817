package dev.usnet.tools.topology;

import dev.usnet.core.netem.NetemSysctl;
import dev.usnet.core.device.Device;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.topology.file.AddressSyntax;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.Knob;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * The settings every device kind shares ({@link TopologyFile#LINK_KEYS}): name, MAC, MTU, addresses, offloads,
 * link emulation, headroom. Each problem is reported with its key's line.
 */
final class LinkSettings {
    /** The keys of a device's {@code netem:} mapping. */
    static final Set<String> NETEM_KEYS = Set.copyOf(NetemParams.PARAMS);

    private LinkSettings() {}

    /** The settings every kind shares; {@code fixedName} for kinds whose name is implied (lo). */
    static Link read(YamlMap m, String fixedName) {
        String name = fixedName;
        if (fixedName == null || m.has("name")) {
            if (!m.require("name")) {
                return null;
            }
            name = m.string("name");
            if (name == null) {
                return null;
            }
            if (!TopologyFile.validIfname(name)) {
                m.problems().add(m.where("name"), "not a device name: \"" + name + "\" (1.." + TopologyFile.IFNAME_MAX
                        + " printable characters, no '/', ':' or spaces)");
                return null;
            }
        }
        Long mac = mac(m, "mac");
        Long mtu = m.integer("mtu", 68, 65535);
        Boolean up = m.bool("up");
        AddressSyntax.Addresses addrs = AddressSyntax.read(m, "addresses");
        Boolean csum = m.bool("tx_checksumming");
        Boolean gso = m.bool("gso");
        Boolean gro = m.bool("gro");
        List<Knob> netem = readNetem(m, name);
        Long headroom = m.integer("needed_headroom", 0, Device.MAX_NEEDED_HEADROOM);
        return new Link(name, m.where(), mac, mtu == null ? null : mtu.intValue(), up == null || up, addrs.v4(), csum, netem,
                gso, headroom == null ? null : headroom.intValue(), gro, addrs.v6());
    }

    /**
     * {@code netem:} on a device: a mapping of link-emulation parameters ({@code rate: 100mbit}, {@code delay:
     * 10ms}, ...) or one tc-like spec string ({@code "rate 100mbit delay 10ms loss 1%"}), kept as the
     * {@code usnet.netem.<dev>.*} knobs it means. Values are checked here so every problem is reported at once.
     */
    private static List<Knob> readNetem(YamlMap m, String dev) {
        List<Knob> l = new ArrayList<>();
        Node n = m.node("netem");
        if (n == null || YamlMap.isNull(n)) {
            return l;
        }
        if (n instanceof org.snakeyaml.engine.v2.nodes.ScalarNode) {
            String spec = m.string("netem");
            if (spec != null) {
                try {
                    NetemParams.parse(spec);
                    l.add(new Knob(NetemSysctl.FAMILY + dev, spec.trim(), m.where("netem")));
                } catch (IllegalArgumentException e) {
                    m.problems().add(m.where("netem"), e.getMessage());
                }
            }
            return l;
        }
        YamlMap nm = m.map("netem");
        if (nm == null) {
            return l;
        }
        nm.allow(NETEM_KEYS);
        for (var e : nm.entries()) {
            if (!NETEM_KEYS.contains(e.getKey())) {
                continue;
            }
            YamlMap.Item v = e.getValue();
            String s = nm.scalar(v.node(), v.where(), "a value like 100mbit, 10ms or 1%");
            if (s == null) {
                continue;
            }
            try {
                NetemParams.NONE.with(e.getKey(), s);
                l.add(new Knob(NetemSysctl.FAMILY + dev + "." + e.getKey(), s.trim(), v.where()));
            } catch (IllegalArgumentException ex) {
                m.problems().add(v.where(), ex.getMessage());
            }
        }
        return l;
    }

    /** A unicast MAC address; null when absent or bad (reported). */
    static Long mac(YamlMap m, String key) {
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        try {
            long v = MacAddr.parse(s);
            if (!MacAddr.isValidUnicast(v)) {
                m.problems().add(m.where(key), "expected a unicast MAC (not multicast, not all zeros), got \"" + s + "\"");
                return null;
            }
            return v;
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), "expected a MAC address like 02:00:00:00:00:01, got \"" + s + "\"");
            return null;
        }
    }
}
