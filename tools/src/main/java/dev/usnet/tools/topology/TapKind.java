package dev.usnet.tools.topology;

import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.AddressSyntax;
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
import java.util.regex.Pattern;

/**
 * {@code kind: tap}: a TAP device, usnet holding its file descriptor and the kernel seeing an interface, configured
 * with {@code ip} from the entry's {@code kernel:} when usnet starts.
 */
final class TapKind implements LinkKind<Tap> {
    /** The keys of the {@code kernel:} mapping. */
    static final Set<String> KERNEL_KEYS = Set.of("namespace", "name", "mac", "mtu", "up", "addresses", "routes");
    /** A kernel namespace's name, as {@code ip netns} takes it ({@code .} and {@code ..} aside). */
    static final Pattern KERNEL_NAMESPACE = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

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
            return new KernelSide(null, link.name(), null, null, true, List.of(), List.of(), List.of(), m.where());
        }
        YamlMap k = m.map("kernel");
        if (k == null) {
            return null;
        }
        k.allow(KERNEL_KEYS);
        String ns = k.string("namespace");
        if (ns != null && (!KERNEL_NAMESPACE.matcher(ns).matches() || ns.equals(".") || ns.equals(".."))) {
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
        AddressSyntax.Addresses addrs = AddressSyntax.read(k, "addresses");
        List<Text> routes = new ArrayList<>();
        for (YamlMap.Item it : k.list("routes")) {
            String s = k.scalar(it.node(), it.where(),
                    "a route in 'ip route' syntax, like \"default via 198.18.1.1\" or \"2001:db8::/32 via 2001:db8:1::1\"");
            if (s != null) {
                routes.add(new Text(s.trim(), it.where()));
            }
        }
        return new KernelSide(ns, ifname, mac, mtu == null ? null : mtu.intValue(), up == null || up, addrs.v4(),
                addrs.v6(), List.copyOf(routes), k.where());
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


    /**
     * {@code link add NAME type tap kernel-netns KNS [kernel-name IFNAME] [vnet_hdr]}: a TAP as {@code kind: tap}
     * makes it, its kernel end IFNAME (default NAME) in kernel namespace KNS, made when absent. The kernel side comes
     * up (carrier follows the usnet side, which comes down, as every new link).
     */
    @Override
    public LiveAdd liveAdd() {
        return new LiveAdd.Addable("tap kernel-netns KNS", List.of("kernel-netns", "kernel-name", "vnet_hdr"), LiveTap::new);
    }

    /** One live TAP: its kernel side's words read, then opened through the daemon (which reaches the kernel). */
    private static final class LiveTap implements LiveAdd.Request {
        private String kernelNs;
        private String kernelName;
        private boolean vnetHdr;

        @Override
        public boolean parse(String w, LiveAdd.Words words, LiveLinks live) {
            switch (w) {
                case "kernel-netns" -> kernelNs = words.next("kernel namespace (ip netns name)");
                case "kernel-name" -> kernelName = words.next("kernel interface name");
                case "vnet_hdr" -> vnetHdr = true;
                case "peer" -> throw live.refused("a tap has no peer: its other end is kernel-name in kernel-netns");
                default -> {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String add(LiveLinks live, LiveAdd.Target t) {
            NetStack s = t.stack();
            String name = t.name();
            if (kernelNs == null) {
                throw live.refused("link add " + name + " type tap: missing 'kernel-netns KNS' (the kernel namespace"
                        + " its kernel end goes into; made when absent)");
            }
            if (!KERNEL_NAMESPACE.matcher(kernelNs).matches() || kernelNs.equals(".") || kernelNs.equals("..")) {
                throw live.refused("invalid kernel namespace name '" + kernelNs + "' (letters, digits, '_', '.', '-';"
                        + " at most 64)");
            }
            String ifname = kernelName == null ? name : kernelName;
            live.checkName(ifname);
            return live.exclusive(() -> {
                live.onLoop(s, () -> {
                    live.requireFree(s, name);
                    return null;
                });
                long m = t.mac() != null ? t.mac() : NamespaceRegistry.macFor(s.name() + "/" + name);
                LiveLinks.OpenedTap o = live.openTap(name, ifname, kernelNs, vnetHdr, m, s);
                Device d = o.device();
                try {
                    live.onLoop(s, () -> {
                        live.requireFree(s, name);
                        s.register(d);
                        if (t.mtu() != null) {
                            d.setMtu(t.mtu());
                        }
                        return null;
                    });
                } catch (RuntimeException e) {
                    d.delete();
                    live.tapGone(d);
                    throw e;
                }
                return "added tap " + s.name() + "/" + name + " <-> kernel " + ifname + " in kernel namespace " + kernelNs
                        + (o.namespaceCreated() ? " (created)" : "") + "; usnet side down, kernel side up";
            });
        }
    }
}
