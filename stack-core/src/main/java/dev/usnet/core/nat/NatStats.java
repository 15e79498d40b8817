package dev.usnet.core.nat;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * NAT's counters of one namespace: the connections it bound and the packets it rewrote. Linux keeps no such counters
 * (its NAT shows only in the conntrack table and in the rule counters); these say what the table no longer shows once
 * entries expire. Written by the namespace's one thread, read by scrapes and {@code ctl stats} like
 * {@code ConntrackStats}.
 */
public final class NatStats {
    private long sourceBindings;
    private long destinationBindings;
    private long nullBindingsMoved;
    private long packetsRewritten;
    private long icmpErrorsTranslated;
    private long noFreeTuple;

    /**
     * A connection got a new tuple at its binding: from a NAT statement ({@code snat}, {@code dnat},
     * {@code masquerade}), or from the null binding when its source port (or ICMP id) clashed and had to move.
     */
    void bound(boolean source, boolean nullBinding) {
        if (nullBinding) {
            nullBindingsMoved++;
        } else if (source) {
            sourceBindings++;
        } else {
            destinationBindings++;
        }
    }

    void rewrote() {
        packetsRewritten++;
    }

    void icmpErrorTranslated() {
        icmpErrorsTranslated++;
    }

    void noFreeTuple() {
        noFreeTuple++;
    }

    /** Connections a NAT statement gave a new source (snat, masquerade). */
    public long sourceBindings() {
        return sourceBindings;
    }

    /** Connections a NAT statement gave a new destination (dnat). */
    public long destinationBindings() {
        return destinationBindings;
    }

    /** Connections no NAT statement bound whose source port or ICMP id clashed, so the null binding moved it. */
    public long nullBindingsMoved() {
        return nullBindingsMoved;
    }

    /** Packet headers rewritten, once per hook that rewrote one (a packet both DNATed and SNATed counts twice). */
    public long packetsRewritten() {
        return packetsRewritten;
    }

    /** ICMP errors whose quoted header was translated, once per hook that translated one. */
    public long icmpErrorsTranslated() {
        return icmpErrorsTranslated;
    }

    /** Bindings that found no free tuple in their range (their packet was dropped). */
    public long noFreeTupleFailures() {
        return noFreeTuple;
    }

    /** Whether NAT bound, rewrote or failed anything yet. */
    public boolean any() {
        return sourceBindings + destinationBindings + nullBindingsMoved + packetsRewritten + icmpErrorsTranslated
                + noFreeTuple != 0;
    }

    /** The counters by their exported names, in a fixed order (results, {@code ctl stats}). */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("snat_bindings", sourceBindings);
        m.put("dnat_bindings", destinationBindings);
        m.put("null_bindings_moved", nullBindingsMoved);
        m.put("rewrites", packetsRewritten);
        m.put("icmp_translated", icmpErrorsTranslated);
        m.put("no_free_tuple", noFreeTuple);
        return m;
    }
}
