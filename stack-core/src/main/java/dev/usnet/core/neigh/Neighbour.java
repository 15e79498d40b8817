package dev.usnet.core.neigh;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayDeque;

/**
 * One neighbour-table entry (struct neighbour): a next hop on a device and what is known of its link address. Its
 * key is an IPv4 address today, the only family with a neighbour protocol (ARP).
 */
public final class Neighbour {
    final Device dev;
    final int ip;
    volatile long mac;
    volatile NudState state = NudState.NONE;
    long updated;
    long confirmed;
    long used;
    long reachableTimeNanos;
    int probes;
    final ArrayDeque<Packet> arpQueue = new ArrayDeque<>();
    int arpQueueBytes;
    Timeout timer;
    /** Still in its table (removed entries keep their last state but are no longer counted). */
    boolean inTable;
    /** Its timer handler is running (Linux holds a reference meanwhile, so no GC removes the entry under it). */
    boolean inTimerHandler;
    // The table's GC list (tbl->gc_list): every entry but permanent ones, oldest first.
    Neighbour gcPrev;
    Neighbour gcNext;
    boolean onGcList;

    Neighbour(Device dev, int ip) {
        this.dev = dev;
        this.ip = ip;
    }

    public Device dev() {
        return dev;
    }

    public int ip() {
        return ip;
    }

    public long mac() {
        return mac;
    }

    /** When the entry's link address was last set or confirmed changed (neigh->updated), namespace clock. */
    public long updated() {
        return updated;
    }

    public NudState state() {
        return state;
    }

    public int queued() {
        return arpQueue.size();
    }

    /** {@code ip neigh} syntax. */
    @Override
    public String toString() {
        return Ipv4Addr.format(ip) + " dev " + dev.name()
                + (state.valid() ? " lladdr " + MacAddr.format(mac) : "") + " " + state.display();
    }
}
