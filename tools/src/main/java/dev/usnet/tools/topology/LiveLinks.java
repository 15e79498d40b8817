package dev.usnet.tools.topology;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NamespaceRegistry;
import java.util.concurrent.Callable;

/**
 * What a running daemon lends a device kind for {@code usnet ctl link add} ({@link LiveAdd}): its namespaces, where
 * changes run, the kernel's TAPs, and how a request is refused. The control plane implements it; a kind sees the
 * running topology only through it.
 */
public interface LiveLinks {
    /** The running namespace named {@code name}; refused listing those there are. */
    NetStack stack(String name);

    /** The namespaces' registry, which pairs veth ends across them. */
    NamespaceRegistry registry();

    /** Runs {@code task} on {@code s}'s thread, one change at a time across all clients, and waits. */
    <T> T change(NetStack s, Callable<T> task);

    /** Runs {@code task} on {@code s}'s thread and waits; inside {@link #exclusive} only. */
    <T> T onLoop(NetStack s, Callable<T> task);

    /** Runs {@code task} on the calling thread, one change at a time: what reaches into the kernel. */
    <T> T exclusive(Callable<T> task);

    /** A request that cannot be carried out as asked: its message says what is wrong. */
    RuntimeException refused(String message);

    /** Refuses {@code name} unless it is a valid device name. */
    void checkName(String name);

    /** Refuses when namespace {@code s} has a device {@code name} already. On {@code s}'s thread. */
    void requireFree(NetStack s, String name);

    /**
     * Opens a TAP whose kernel end {@code ifname} goes into kernel namespace {@code kernelNs} (made when absent), its
     * usnet side {@code name} for {@code s}, not yet registered there; refused when this daemon cannot.
     */
    OpenedTap openTap(String name, String ifname, String kernelNs, boolean vnetHdr, long mac, NetStack s);

    /** A TAP {@link #openTap} opened is gone again (its registration failed): its kernel namespace may go too. */
    void tapGone(Device tap);

    /** A TAP opened: its usnet side and whether its kernel namespace was made for it. */
    record OpenedTap(Device device, boolean namespaceCreated) {}
}
