package dev.usnet.core.nftables;

import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import java.util.ArrayList;
import java.util.List;

/**
 * A chain of a table: a base chain ({@code type filter|nat hook H priority P; policy V;}) that packets enter at
 * its hook, or a regular chain only jumps and gotos reach. {@link #live} is the rule array the packet path reads,
 * republished when a transaction commits.
 */
final class NftChain {
    enum Type { FILTER, NAT }

    final String name;
    long handle;
    Type type;
    NfHook hook;
    int priority;
    int policy = NfVerdict.ACCEPT;
    final List<NftRule> rules;
    volatile NftRule[] live = new NftRule[0];
    /** The function registered at the hook while this base chain is live (null for a regular chain). */
    NftChainOps ops;

    NftChain(String name) {
        this.name = name;
        this.rules = new ArrayList<>();
    }

    private NftChain(NftChain o) {
        this.name = o.name;
        this.handle = o.handle;
        this.type = o.type;
        this.hook = o.hook;
        this.priority = o.priority;
        this.policy = o.policy;
        this.rules = new ArrayList<>(o.rules);
    }

    /** A copy for a trial transaction: the same rules (shared, immutable), its own list. */
    NftChain copy() {
        return new NftChain(this);
    }

    boolean isBase() {
        return hook != null;
    }

    NftRule rule(long handle) {
        for (NftRule r : rules) {
            if (r.handle == handle) {
                return r;
            }
        }
        return null;
    }

    /** The priority as nft prints it: a standard name where one is valid at the hook, maybe with an offset. */
    String priorityText() {
        String[] names = {"raw", "mangle", "dstnat", "filter", "security", "srcnat"};
        int[] levels = {NfIpPriority.RAW, NfIpPriority.MANGLE, NfIpPriority.NAT_DST, NfIpPriority.FILTER,
                NfIpPriority.SECURITY, NfIpPriority.NAT_SRC};
        for (int i = 0; i < names.length; i++) {
            if (!priorityNameValid(names[i], hook)) {
                continue;
            }
            int d = priority - levels[i];
            if (d == 0) {
                return names[i];
            }
            if (d >= -10 && d <= 10) {
                return names[i] + (d > 0 ? " + " : " - ") + Math.abs(d);
            }
        }
        return Integer.toString(priority);
    }

    /** nft's standard priority names for the ip family: dstnat at prerouting only, srcnat at postrouting only. */
    static boolean priorityNameValid(String name, NfHook hook) {
        return switch (name) {
            case "dstnat" -> hook == NfHook.PRE_ROUTING;
            case "srcnat" -> hook == NfHook.POST_ROUTING;
            default -> true;
        };
    }
}
