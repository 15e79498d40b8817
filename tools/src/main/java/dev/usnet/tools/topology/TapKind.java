package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelSide;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import dev.usnet.tools.topology.file.TopologySpec.Text;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code kind: tap}: a TAP device, usnet holding its file descriptor and the kernel seeing an interface, configured
 * with {@code ip} from the entry's {@code kernel:} when usnet starts.
 */
final class TapKind implements LinkKind<Tap> {
    /** The keys of the {@code kernel:} mapping. */
    static final Set<String> KERNEL_KEYS = Set.of("namespace", "name", "mac", "mtu", "up", "addresses", "routes");

    @Override
    public String name() {
        return "tap";
    }

    @Override
    public Set<String> keys() {
        return Set.of("vnet_hdr", "kernel");
    }

    @Override
    public boolean reads(DeviceSpec d) {
        return d instanceof Tap;
    }

    @Override
    public Tap read(Entry e) {
        YamlMap m = e.m();
        if (m.has("gso")) {
            // What such a device may be handed is what the kernel on its other side takes.
            m.problems().add(m.where("gso"), "a TAP takes super-frames exactly when it has vnet_hdr: true");
        }
        Boolean vnet = m.bool("vnet_hdr");
        KernelSide ks = readKernelSide(m, e.link());
        return ks == null ? null : new Tap(e.link(), vnet != null && vnet, ks);
    }

    private static KernelSide readKernelSide(YamlMap m, Link link) {
        if (!m.has("kernel")) {
            return new KernelSide(null, link.name(), null, null, true, List.of(), List.of(), m.where());
        }
        YamlMap k = m.map("kernel");
        if (k == null) {
            return null;
        }
        k.allow(KERNEL_KEYS);
        String ns = k.string("namespace");
        if (ns != null && (!ns.matches("[A-Za-z0-9_.-]{1,64}") || ns.equals(".") || ns.equals(".."))) {
            k.problems().add(k.where("namespace"), "invalid kernel namespace name \"" + ns + "\"");
        }
        String ifname = link.name();
        if (k.has("name")) {
            ifname = k.string("name");
            if (ifname == null) {
                return null;
            }
            if (!TopologyFile.validIfname(ifname)) {
                k.problems().add(k.where("name"), "not an interface name: \"" + ifname + "\" (1.." + TopologyFile.IFNAME_MAX
                        + " printable characters, no '/', ':' or spaces)");
            }
        }
        Long mac = LinkSettings.mac(k, "mac");
        Long mtu = k.integer("mtu", 68, 65535);
        Boolean up = k.bool("up");
        List<Addr> addrs = LinkSettings.addresses(k, "addresses");
        List<Text> routes = new ArrayList<>();
        for (YamlMap.Item it : k.list("routes")) {
            String s = k.scalar(it.node(), it.where(), "a route in 'ip route' syntax, like \"default via 198.18.1.1\"");
            if (s != null) {
                routes.add(new Text(s.trim(), it.where()));
            }
        }
        return new KernelSide(ns, ifname, mac, mtu == null ? null : mtu.intValue(), up == null || up, addrs,
                List.copyOf(routes), k.where());
    }

    /** Its kernel name is its own: TAPs are made in usnet's kernel namespace before they move. */
    @Override
    public void check(Checks c, TopologySpec.Ns ns, Tap t) {
        if (c.claim("tap " + t.kernel().ifname(), t) instanceof Tap first) {
            c.problems().add(t.kernel().where(), "TAP interface name " + t.kernel().ifname() + " is used twice (first at line "
                    + first.kernel().where().line() + "); TAPs are created in usnet's own kernel namespace"
                    + " before they move, so their kernel names must differ");
        }
    }

    @Override
    public void create(TopologyBuilder b, String ns, NetStack s, Tap d, long mac) {
        b.made(d.link(), TopologyBuilder.register(s, b.external().tap(ns, d, mac, s)));
    }
}
