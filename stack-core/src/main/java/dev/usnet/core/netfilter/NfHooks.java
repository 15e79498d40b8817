package dev.usnet.core.netfilter;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netns.Netns;
import java.util.Arrays;

/**
 * The functions registered at each IPv4 hook of one namespace, in priority order (the namespace's
 * nf_hook_entries for NFPROTO_IPV4), and the walk a packet takes through them (nf_hook_slow). A hook with
 * nothing registered costs one array-length test: without rules, connection tracking or NAT, a packet's way
 * through the stack is what it was before netfilter existed.
 */
public final class NfHooks {
    private static final int MAX_NESTING = 8;

    private final Netns ns;
    private final Entry[][] entries = new Entry[NfHook.values().length][];
    private final NfHookState[] states = new NfHookState[MAX_NESTING];
    private int depth;

    private record Entry(int priority, NfHookOps ops) {}

    public NfHooks(Netns ns) {
        this.ns = ns;
        for (int i = 0; i < entries.length; i++) {
            entries[i] = new Entry[0];
        }
        for (int i = 0; i < states.length; i++) {
            states[i] = new NfHookState();
        }
    }

    /**
     * nf_register_net_hook: {@code ops} runs at {@code hook} with {@code priority}; among equal priorities the one
     * registered first runs first.
     */
    public synchronized void register(NfHook hook, int priority, NfHookOps ops) {
        Entry[] old = entries[hook.ordinal()];
        int at = old.length;
        for (int i = 0; i < old.length; i++) {
            if (old[i].priority > priority) {
                at = i;
                break;
            }
        }
        Entry[] t = new Entry[old.length + 1];
        System.arraycopy(old, 0, t, 0, at);
        t[at] = new Entry(priority, ops);
        System.arraycopy(old, at, t, at + 1, old.length - at);
        publish(hook, t);
    }

    /** nf_unregister_net_hook: removes {@code ops} from {@code hook}; false when it was not there. */
    public synchronized boolean unregister(NfHook hook, NfHookOps ops) {
        Entry[] old = entries[hook.ordinal()];
        for (int i = 0; i < old.length; i++) {
            if (old[i].ops == ops) {
                Entry[] t = new Entry[old.length - 1];
                System.arraycopy(old, 0, t, 0, i);
                System.arraycopy(old, i + 1, t, i, old.length - i - 1);
                publish(hook, t);
                return true;
            }
        }
        return false;
    }

    private void publish(NfHook hook, Entry[] t) {
        entries[hook.ordinal()] = t;
        // The packet path reads the arrays without a lock; the fence orders the new array's contents before it.
        java.lang.invoke.VarHandle.releaseFence();
    }

    /** Whether anything is registered at {@code hook}. */
    public boolean active(NfHook hook) {
        return entries[hook.ordinal()].length != 0;
    }

    /** The priorities registered at {@code hook}, in the order they run (for listings and tests). */
    public int[] priorities(NfHook hook) {
        return Arrays.stream(entries[hook.ordinal()]).mapToInt(Entry::priority).toArray();
    }

    /**
     * NF_HOOK: runs the functions at {@code hook} over {@code p}. Returns the packet to go on with (the same, or
     * the one a function replaced it by), or null when a function dropped it (freed here, counted under the reason
     * the function gave) or stole it.
     */
    public Packet run(NfHook hook, Packet p, Device in, Device out) {
        Entry[] es = entries[hook.ordinal()];
        if (es.length == 0) {
            return p;
        }
        if (depth == MAX_NESTING) {
            throw new IllegalStateException("netfilter hooks nested " + MAX_NESTING + " deep at " + hook);
        }
        NfHookState st = states[depth++];
        try {
            for (Entry e : es) {
                st.enter(hook, in, out);
                int v = e.ops.hook(p, st);
                switch (v) {
                    case NfVerdict.ACCEPT -> {
                        Packet r = st.takeReplacement();
                        if (r != null) {
                            p = r;
                        }
                    }
                    case NfVerdict.DROP -> {
                        ns.drop(p, st.dropReason());
                        return null;
                    }
                    case NfVerdict.STOLEN -> {
                        return null;
                    }
                    default -> throw new IllegalStateException("hook function returned verdict " + v);
                }
            }
            return p;
        } finally {
            depth--;
        }
    }
}
