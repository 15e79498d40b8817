package dev.usnet.core.nat;

import dev.usnet.core.netfilter.NfNatRange;

/**
 * find_appropriate_src: NAT keeps its source-NATed connections by original source (nf_nat_bysource), so a new
 * connection from an address and port already mapped can take the same mapping when it fits the rule: a host
 * behind the NAT keeps one outside address and port for one inside socket, whatever it talks to. The table that
 * holds the connections backs this.
 */
@FunctionalInterface
public interface NatSourceMapping {
    /**
     * The mapped source (packed as {@link NatPortAllocator#pack}) of an existing connection of {@code proto}
     * whose original source is {@code src}:{@code srcPort} and whose mapping lies in {@code range}
     * ({@link NatPortAllocator#inRange}), the first such; {@link NatPortAllocator#NO_TUPLE} when none.
     */
    long find(int proto, int src, int srcPort, NfNatRange range);

    /** No table: the step is skipped. */
    NatSourceMapping NONE = (proto, src, srcPort, range) -> NatPortAllocator.NO_TUPLE;
}
