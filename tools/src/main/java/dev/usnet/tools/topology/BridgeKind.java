package dev.usnet.tools.topology;

import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code kind: bridge}: a learning bridge with its ports, devices of the same namespace. */
final class BridgeKind implements LinkKind<BridgeDev> {
    @Override
    public String name() {
        return "bridge";
    }

    @Override
    public Set<String> keys() {
        return Set.of("ports", "ageing_time", "fdb_max_learned", "group_fwd_mask");
    }

    @Override
    public boolean reads(DeviceSpec d) {
        return d instanceof BridgeDev;
    }

    @Override
    public BridgeDev read(Entry e) {
        YamlMap m = e.m();
        List<Ref> ports = new ArrayList<>();
        for (YamlMap.Item p : m.list("ports")) {
            String s = m.scalar(p.node(), p.where(), "a device name");
            if (s != null) {
                ports.add(new Ref(s, p.where()));
            }
        }
        Double ageing = m.number("ageing_time", 0, 1_000_000);
        Long max = m.integer("fdb_max_learned", 0, Integer.MAX_VALUE);
        Long mask = m.integer("group_fwd_mask", 0, 0xffff);
        if (mask != null && (mask & 7) != 0) {
            m.problems().add(m.where("group_fwd_mask"), "bits 0-2 (STP, PAUSE, LACP) cannot be forwarded");
            mask = null;
        }
        return new BridgeDev(e.link(), List.copyOf(ports), ageing, max == null ? null : max.intValue(),
                mask == null ? null : mask.intValue());
    }

    /** The bridge alone: its ports join once every device of the namespace exists. */
    /** Its ports are devices of its namespace. */
    @Override
    public void check(Checks c, TopologySpec.Ns ns, BridgeDev b) {
        TopologyChecks.checkPorts(ns, b, c.byName(), c.problems());
    }

    @Override
    public void create(TopologyBuilder b, String ns, NetStack s, BridgeDev d, long mac) {
        b.made(d.link(), TopologyBuilder.register(s, new Bridge(d.link().name(), mac)));
    }


    /** {@code link add NAME type bridge}: a bridge without ports, down; ports join with {@code link set DEV master}. */
    @Override
    public LiveAdd liveAdd() {
        return new LiveAdd.Addable("bridge", List.of(), LiveBridge::new);
    }

    /** One live bridge: no words of its own. */
    private static final class LiveBridge implements LiveAdd.Request {
        @Override
        public boolean parse(String w, LiveAdd.Words words, LiveLinks live) {
            if (w.equals("peer")) {
                throw live.refused("a bridge has no peer");
            }
            return false;
        }

        @Override
        public String add(LiveLinks live, LiveAdd.Target t) {
            NetStack s = t.stack();
            String name = t.name();
            return live.change(s, () -> {
                live.requireFree(s, name);
                Bridge b = new Bridge(name, t.mac() != null ? t.mac() : NamespaceRegistry.macFor(s.name() + "/" + name));
                s.register(b);
                if (t.mtu() != null) {
                    b.setMtu(t.mtu());
                }
                return "added bridge " + s.name() + "/" + name + " (down)";
            });
        }
    }
}
