package dev.usnet.core.netfilter;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stats.DropReason;

/**
 * Where a packet is while the functions of one hook run (struct nf_hook_state): the hook, the devices it came in
 * by and goes out by (null where there is none: no input device on output, no output device before routing), and
 * what the running function decided beyond its verdict. One per nesting level, reused: a function that sends a
 * packet itself (a reject's ICMP error) runs the output hooks again from inside a hook.
 */
public final class NfHookState {
    private NfHook hook;
    private Device in;
    private Device out;
    private Packet replacement;
    private DropReason dropReason;

    void enter(NfHook hook, Device in, Device out) {
        this.hook = hook;
        this.in = in;
        this.out = out;
        this.replacement = null;
        this.dropReason = null;
    }

    public NfHook hook() {
        return hook;
    }

    /** The device the packet arrived on, or null for a locally built packet. */
    public Device in() {
        return in;
    }

    /** The device the packet leaves by, or null before routing (prerouting, input). */
    public Device out() {
        return out;
    }

    /** The packet goes on as {@code p} (the original was consumed); the function returns ACCEPT. */
    public void replace(Packet p) {
        this.replacement = p;
    }

    /** Why the function drops the packet; it returns DROP. Without a call the reason is NETFILTER_DROP. */
    public int drop(DropReason reason) {
        this.dropReason = reason;
        return NfVerdict.DROP;
    }

    Packet takeReplacement() {
        Packet r = replacement;
        replacement = null;
        return r;
    }

    DropReason dropReason() {
        return dropReason != null ? dropReason : DropReason.NETFILTER_DROP;
    }
}
