package dev.usnet.core.neigh;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;

/**
 * What a neighbour table needs of the protocol whose next hops it resolves (the table's neigh_ops and its
 * constructor): the ethertype of the packets it sends on, the next hops mapped to a link address without asking,
 * how to ask for one (ARP's request now, NDP's solicitation later) and how to tell a sender its packet could not
 * be delivered. The table keeps the states, timers, queues and garbage collection, the same for every protocol.
 * Addresses are two longs as in {@link Neighbour}: {@code hi} and {@code lo}, a 4-byte address in {@code lo}.
 */
public interface NeighOps {
    /** Returned by {@link #mapWithoutAsking} for a next hop that must be resolved. */
    long RESOLVE = -1L;

    /** The length of the protocol's addresses in bytes, the table's key length (tbl->key_len): 4 or 16. */
    int keyLength();

    /** The ethertype written in front of the packets sent to a neighbour (ETH_P_IP for ARP's table). */
    int ethertype();

    /**
     * The link address of the next hop on {@code dev} when it has one without asking (broadcast and multicast
     * next hops, as arp_constructor makes them NOARP), else {@link #RESOLVE}. The next hop is
     * {@code hi}:{@code lo} (a 4-byte address in the low 32 bits of {@code lo}).
     */
    long mapWithoutAsking(Device dev, long hi, long lo);

    /**
     * solicit: asks for {@code n}'s link address, to its known address when {@code unicast} (probing a stale
     * entry), else to everyone; {@code lastQueued} is the newest packet waiting for it, or null.
     */
    void solicit(Neighbour n, boolean unicast, Packet lastQueued);

    /** error_report: {@code p}, queued for a neighbour that could not be resolved, is reported to its sender. */
    void reportUnreachable(Packet p);
}
