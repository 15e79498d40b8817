package dev.usnet.core.device;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.stats.CpuAccount;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.time.Scheduler;

/**
 * What a device needs of the namespace it is registered in: its clock and scheduler, its receive backlog and
 * protocol dispatch, its drop and CPU counting, its knobs, and who watches its links. The namespace (NetStack)
 * implements it; devices sit below the namespace and see no more of it than this.
 */
public interface DeviceHost {
    /** The namespace's name. */
    String name();

    /** The seed the namespace was created with. */
    long seed();

    Scheduler scheduler();

    long now();

    /** Now in jiffies of usnet.hz. */
    long jiffies();

    Knobs knobs();

    CpuAccount cpu();

    LatencyPaths latency();

    /** netif_rx: queues a frame {@code dev} received for the namespace's thread. Any thread. */
    void netifRx(Device dev, Packet p);

    /** After the device and any rx_handler had the frame: the protocol dispatch (ptype). */
    void l2Receive(Packet p);

    /** Counts the drop under its reason and frees the packet. */
    void drop(Packet p, DropReason reason);

    /** The device joins the namespace (register_netdevice). */
    void register(Device dev);

    /** The device leaves the namespace; what the namespace keeps of it is flushed. */
    void unregister(Device dev);

    /** The device's GRO holds packets in the current backlog run: flush it at the run's end. */
    void groPending(Gro gro);

    /**
     * {@code dev}'s state or carrier changed (the netdevice notifier's NETDEV_UP, NETDEV_DOWN, NETDEV_CHANGE): the
     * protocol families react (IPv6 makes its link-local address) before anyone monitoring hears of it.
     */
    default void netdevChanged(Device dev) {
    }

    /** Who is told of link changes here, or null. */
    LinkListener listener();
}
