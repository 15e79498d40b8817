package dev.usnet.core.netfilter;

import dev.usnet.core.buf.Packet;

/** A function at a hook (struct nf_hook_ops's hook): returns an {@link NfVerdict}. */
@FunctionalInterface
public interface NfHookOps {
    /**
     * Looks at, and may change, {@code p} as it passes {@code state.hook()}. A function that replaces the packet
     * (reassembly hands on the whole datagram) stores the new one with {@link NfHookState#replace} and returns
     * ACCEPT; on DROP it names the reason with {@link NfHookState#drop} and the caller frees the packet.
     */
    int hook(Packet p, NfHookState state);
}
