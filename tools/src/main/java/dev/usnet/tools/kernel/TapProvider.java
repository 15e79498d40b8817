package dev.usnet.tools.kernel;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr6;
import dev.usnet.tools.topology.file.TopologySpec.KernelSide;
import dev.usnet.tools.topology.file.TopologySpec.Text;
import java.util.ArrayList;
import java.util.List;

/**
 * Opens TAP devices for {@code kind: tap} (tun/tap with IFF_TAP | IFF_NO_PI, optionally IFF_VNET_HDR), the
 * usnet side of a link whose other side is a kernel network interface. The real implementation lives on top
 * of tap-bridge; this build's {@link #forThisBuild()} has none and says so.
 */
public interface TapProvider {
    /**
     * What a topology asks for.
     *
     * @param usnetName       the device's name inside its usnet namespace
     * @param ifname          the kernel interface's name (at most 15 characters)
     * @param kernelNamespace the kernel network namespace the interface must end up in ({@code ip netns}
     *                        name), or null for the one usnet runs in
     * @param vnetHdr         IFF_VNET_HDR with TUNSETOFFLOAD (checksum and TSO offloads), so GSO super-frames pass
     * @param mac             the usnet side's MAC (the kernel side picks its own unless {@link KernelSide#mac()})
     */
    record TapRequest(String usnetName, String ifname, String kernelNamespace, boolean vnetHdr, long mac) {}

    /**
     * Throws a {@link UsageException} saying why TAP devices cannot be opened (no support in this build, no
     * /dev/net/tun, no CAP_NET_ADMIN). Called before usnet changes anything, so a run that cannot work
     * fails without side effects.
     */
    void requireAvailable();

    /**
     * Creates the kernel interface {@code req.ifname()} in {@code req.kernelNamespace()} and returns the
     * usnet side as a {@link Device} named {@code req.usnetName()}, not yet registered in any namespace: the
     * caller registers it in {@code stack}, then sets MTU, offloads and up. Frames from the kernel go to
     * {@code stack.netifRx(dev, packet)} (on any thread); until the device is up they are dropped and
     * counted. Deleting the device ({@link Device#delete()}, which calls its {@code destroy()}) must close the
     * file descriptor, which removes the kernel interface. Failures throw {@link UsageException} naming the
     * interface and the errno.
     */
    Device openTap(TapRequest req, NetStack stack);

    /**
     * Configures the kernel's end once the interface exists: MAC, MTU, addresses, up, then routes, as
     * {@code ip -n NS link set / addr add / route add} would. The default runs {@code ip} through
     * {@code kernel}; an implementation may use rtnetlink instead.
     */
    default void configureKernelSide(TapRequest req, KernelSide side, KernelNet kernel) {
        String ns = req.kernelNamespace();
        String dev = req.ifname();
        if (side.mac() != null) {
            kernel.ip(ns, "link", "set", "dev", dev, "address", MacAddr.format(side.mac()));
        }
        if (side.mtu() != null) {
            kernel.ip(ns, "link", "set", "dev", dev, "mtu", Integer.toString(side.mtu()));
        }
        for (Addr a : side.addresses()) {
            kernel.ip(ns, "addr", "add", Ipv4Addr.format(a.ip()) + "/" + a.prefixLen(), "dev", dev);
        }
        for (Addr6 a : side.addresses6()) {
            // nodad: the address is usable as soon as usnet starts, not a second later (and a test can reach it).
            kernel.ip(ns, "-6", "addr", "add", a.ip() + "/" + a.prefixLen(), "dev", dev, "nodad");
        }
        if (side.up()) {
            kernel.ip(ns, "link", "set", "dev", dev, "up");
        }
        for (Text r : side.routes()) {
            List<String> args = new ArrayList<>(r.text().indexOf(':') >= 0 ? List.of("-6", "route", "add") : List.of("route", "add"));
            args.addAll(List.of(kernelRoute(r.text(), dev).split(" ")));
            kernel.ip(ns, args.toArray(new String[0]));
        }
    }

    /**
     * A kernel-side route as given, with {@code dev IFNAME} appended when it names neither a gateway nor a
     * device (so {@code 198.18.0.0/16} means "on the TAP's link").
     */
    static String kernelRoute(String text, String ifname) {
        List<String> t = List.of(text.trim().split("\\s+"));
        boolean special = !t.isEmpty() && List.of("blackhole", "unreachable", "prohibit").contains(t.get(0));
        if (special || t.contains("via") || t.contains("dev")) {
            return String.join(" ", t);
        }
        return String.join(" ", t) + " dev " + ifname;
    }

    /** The provider of this build: tap-bridge's TAP device. */
    static TapProvider forThisBuild() {
        return new TapBridgeTaps();
    }
}
