package dev.usnet.core.netfilter;

/**
 * The five IPv4 hook points (enum nf_inet_hooks), where a packet passes on its way through the stack, with the
 * names nftables gives them in a chain's {@code hook} clause.
 */
public enum NfHook {
    /** After the IP header checks of a received packet, before routing decides local or forward (ip_rcv). */
    PRE_ROUTING("prerouting"),
    /** After reassembly, before the transport protocol takes a local packet (ip_local_deliver). */
    LOCAL_IN("input"),
    /** A forwarded packet after the TTL decrement, before it is sent on (ip_forward). */
    FORWARD("forward"),
    /** A locally built packet with its header written, before it is sent (__ip_local_out). */
    LOCAL_OUT("output"),
    /** Every packet leaving, forwarded or local, before fragmentation (ip_output). */
    POST_ROUTING("postrouting");

    private static final NfHook[] VALUES = values();

    private final String nftName;

    NfHook(String nftName) {
        this.nftName = nftName;
    }

    /** The name in an nftables chain declaration ({@code hook prerouting}). */
    public String nftName() {
        return nftName;
    }

    /** The hook called {@code name} in nftables, or null. */
    public static NfHook byNftName(String name) {
        for (NfHook h : VALUES) {
            if (h.nftName.equals(name)) {
                return h;
            }
        }
        return null;
    }
}
