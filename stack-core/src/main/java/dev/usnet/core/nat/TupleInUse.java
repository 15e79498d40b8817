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
}
