package dev.usnet.core.netfilter;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;

/**
 * NAT of one namespace as nftables' {@code type nat} chains and NAT statements use it. A NAT chain does not sit at
 * the hook itself: NAT runs there and evaluates the chains only for a connection's first packet
 * (nf_nat_ipv4_register_fn, nf_nat_inet_fn); every later packet of the connection is rewritten by its binding.
 */
public interface NfNatModule {
    /** A nat chain at {@code hook} with {@code priority} (prerouting/output: destination, postrouting/input: source). */
    void registerChain(NfHook hook, int priority, NfHookOps chain);

    void unregisterChain(NfHook hook, NfHookOps chain);

    /**
     * nf_nat_setup_info: binds the connection of {@code p} (new, not yet bound for this kind) to {@code range} for
     * source NAT when {@code source}, else destination NAT. Returns an {@link NfVerdict}.
     */
    int setup(Packet p, NfNatRange range, boolean source);

    /**
     * nf_nat_masquerade_ipv4: source NAT to the address {@code out} would pick for the packet's next hop, with
     * the ports of {@code range} when it gives them. Returns an {@link NfVerdict}.
     */
    int masquerade(Packet p, NfNatRange range, Device out);
}
