package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;

/**
 * TAP devices added to a running daemon ({@code usnet ctl link add NAME type tap kernel-netns KNS}): the part that
 * reaches into the kernel, lent by the daemon, which owns what it creates there and deletes it at its exit. Called
 * on the control plane's own threads, never a namespace's: those run without capabilities once the daemon has
 * dropped them, and creating a TAP or a kernel namespace needs CAP_NET_ADMIN and CAP_SYS_ADMIN.
 */
public interface KernelTaps {
    /**
     * What {@code link add} asks for.
     *
     * @param name            the usnet device's name in {@code stack}
     * @param ifname          the kernel interface's name
     * @param kernelNamespace the kernel namespace ({@code ip netns}) its kernel end goes into; made when absent
     * @param vnetHdr         IFF_VNET_HDR (checksum and TSO offloads)
     * @param mac             the usnet side's MAC
     */
    record Request(String name, String ifname, String kernelNamespace, boolean vnetHdr, long mac) {}

    /** A TAP opened: its usnet side (not yet in any namespace) and whether its kernel namespace was made for it. */
    record Opened(Device device, boolean namespaceCreated) {}

    /**
     * Refuses (with a {@link CtlException} naming the missing privilege, the missing /dev/net/tun, or the name in use)
     * or creates the kernel namespace when absent, opens the TAP with its kernel end in it, marks and brings up that
     * end. Undoes what it did when a step fails.
     */
    Opened open(Request r, NetStack stack);

    /**
     * {@code device} (a TAP this opened) was deleted, on its own or with its namespace: when no other TAP of this
     * daemon's uses the kernel namespace it made for it, that namespace is deleted too. Returns what was deleted
     * ({@code kernel namespace KNS}), or null.
     */
    String deleted(Device device);

    /** Whether {@code device} is a TAP this opened. */
    boolean owns(Device device);

    /** For a daemon that cannot reach the kernel (virtual time, tests without one): every request is refused. */
    KernelTaps NONE = new KernelTaps() {
        @Override
        public Opened open(Request r, NetStack stack) {
            throw new CtlException("link add " + r.name() + " type tap: this daemon cannot create TAP devices (a"
                    + " virtual-time run has none: TAPs reach the real kernel, whose time is real)");
        }

        @Override
        public String deleted(Device device) {
            return null;
        }

        @Override
        public boolean owns(Device device) {
            return false;
        }
    };
}
