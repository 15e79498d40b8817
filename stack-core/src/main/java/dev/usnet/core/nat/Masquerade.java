package dev.usnet.core.nat;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.wire.Ipv4Addr;

/**
 * nf_nat_masquerade_ipv4: source NAT to whatever address the outgoing device has now, so a rule need not name
 * one. The address is the one the device would pick as its own source towards the packet's next hop
 * (inet_select_addr at universe scope); the rule's ports and flags carry over, and the connection is then set
 * up as any source NAT with that one address ({@link #range}).
 */
public final class Masquerade {
    private final Ipv4 inet;

    public Masquerade(Ipv4 inet) {
        this.inet = inet;
    }

    /**
     * The source address for a connection leaving by {@code out} towards {@code nextHop}: a primary address of
     * {@code out} on the next hop's subnet, else its first primary address, else another device's address; 0
     * when there is none a packet could leave with (a loopback address is not one: Linux's universe scope skips
     * host-scope addresses). With 0 the packet is dropped ({@code NAT_MASQUERADE_NO_ADDRESS}).
     */
    public int source(Device out, int nextHop) {
        int a = inet.devinet().selectSource(out, nextHop);
        return Ipv4Addr.isLoopback(a) ? 0 : a;
    }

    /**
     * Linux leaves a connection whose original source is 0.0.0.0 alone (a local packet sent before the host had
     * an address, not meant to be masqueraded): the caller accepts it without NAT.
     */
    public static boolean leavesAlone(int originalSource) {
        return originalSource == 0;
    }

    /** The range masquerade sets up with: the rule's flags and ports, and {@code addr} as the only address. */
    public static NfNatRange range(NfNatRange rule, int addr) {
        return new NfNatRange(rule.flags() | NfNatRange.MAP_IPS, addr, addr, rule.minPort(), rule.maxPort());
    }
}
