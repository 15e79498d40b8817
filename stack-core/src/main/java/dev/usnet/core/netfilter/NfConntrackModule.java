package dev.usnet.core.netfilter;

/**
 * Connection tracking of one namespace as the rules need it. Tracking costs every packet a lookup, so it runs only
 * while something uses it: a rule with a {@code ct} expression, a NAT chain (nf_ct_netns_get / _put).
 */
public interface NfConntrackModule {
    /** One more user: tracking runs (its hooks are registered) while any remain. */
    void get();

    /** One user fewer; the last one stops tracking (entries stay until they time out or are flushed). */
    void put();
}
