package dev.usnet.core.neigh;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayDeque;

/**
 * One neighbour-table entry (struct neighbour): a next hop on a device and what is known of its link address. Its
 * key is the device and a protocol address of its table's length, 4 bytes (IPv4, ARP) or 16 (IPv6, NDP), held as
 * two longs: {@code hi} and {@code lo} are the address's first and last 8 bytes, big-endian; a 4-byte address is
 * {@code lo}'s low 32 bits and {@code hi} is zero.
 */
public final class Neighbour {
    final Device dev;
    // The device's ifindex, part of the key; read at every probe of the table without a call.
    final int ifindex;
    final long hi;
    final long lo;
    // The address length in bytes: 4 or 16.
    final int addrLength;
    volatile long mac;
    volatile NudState state = NudState.NONE;
    // NTF_ROUTER: the neighbour said it is a router (neighbour discovery's R flag, a router advertisement).
    volatile boolean router;
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

    Neighbour(Device dev, int addrLength, long hi, long lo) {
        this.dev = dev;
        this.ifindex = dev.ifindex();
        this.addrLength = addrLength;
        this.hi = hi;
        this.lo = lo;
    }

    public Device dev() {
        return dev;
    }

    /** The IPv4 address of an entry of a 4-byte table. */
    public int ip() {
        if (addrLength != 4) {
            throw new IllegalStateException("neighbour " + address() + " has a " + addrLength
                    + "-byte address, not IPv4");
        }
        return (int) lo;
    }

    /** The length of the protocol address in bytes: 4 (IPv4) or 16 (IPv6). */
    public int addrLength() {
        return addrLength;
    }

    /** The first 8 bytes of a 16-byte address, big-endian; zero for a 4-byte one. */
    public long addrHi() {
        return hi;
    }

    /** The last 8 bytes of a 16-byte address, big-endian; a 4-byte address in the low 32 bits. */
    public long addrLo() {
        return lo;
    }

    /** The protocol address in its usual text form (dotted quad, or RFC 5952 for 16 bytes). */
    public String address() {
        return NeighAddress.format(addrLength, hi, lo);
    }

    public long mac() {
        return mac;
    }

    /** When the entry's link address was last set or confirmed changed (neigh->updated), namespace clock. */
    public long updated() {
        return updated;
    }

    /** Whether the neighbour is known to be a router (NTF_ROUTER; IPv6 only). */
    public boolean router() {
        return router;
    }

    /** Neighbour discovery learned whether the neighbour is a router (an NA's R flag, an RA). */
    public void setRouter(boolean router) {
        this.router = router;
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
        return address() + " dev " + dev.name()
                + (state.valid() ? " lladdr " + MacAddr.format(mac) : "") + (router ? " router" : "") + " " + state.display();
    }
}
