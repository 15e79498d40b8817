package dev.usnet.core.netfilter;

/**
 * Netfilter for IPv4 in one namespace: the hooks, and the connection tracking and NAT that rules may use. The
 * modules are installed when the namespace is assembled (they cost nothing until a rule asks for them); rules
 * reach them here.
 */
public final class Netfilter {
    private final NfHooks hooks;
    private NfConntrackModule conntrack;
    private NfNatModule nat;

    public Netfilter(NfHooks hooks) {
        this.hooks = hooks;
    }

    public NfHooks hooks() {
        return hooks;
    }

    /** Connection tracking, or null when the namespace was built without it. */
    public NfConntrackModule conntrack() {
        return conntrack;
    }

    /** NAT, or null when the namespace was built without it. */
    public NfNatModule nat() {
        return nat;
    }

    public void install(NfConntrackModule conntrack, NfNatModule nat) {
        this.conntrack = conntrack;
        this.nat = nat;
    }
}
