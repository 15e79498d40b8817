package dev.usnet.core.nat;

/**
 * Whether a connection other than the one being set up already answers to a tuple (nf_nat_used_tuple): the
 * candidate is given in the original direction as it would be after NAT, and the table is asked whether the
 * reply to it, its inverse, is taken (nf_conntrack_tuple_taken). Connection tracking backs this; NAT only asks.
 * For ICMP, {@code srcPort} is the query id and {@code dstPort} whatever conntrack keeps there (passed through).
 */
@FunctionalInterface
public interface TupleInUse {
    boolean inUse(int proto, int src, int srcPort, int dst, int dstPort);

    /**
     * The question as the port search asks it, with the tries left in its current window
     * (nf_nat_used_tuple_harder): Linux lets the last 32 tries of a TCP SYN's search evict a clashing source-NATed
     * connection in TIME_WAIT or later whose sequence numbers the new one has passed. Connection tracking may do
     * the same here; by default it is the plain question.
     */
    default boolean inUse(int proto, int src, int srcPort, int dst, int dstPort, int attemptsLeft) {
        return inUse(proto, src, srcPort, dst, dstPort);
    }
}
