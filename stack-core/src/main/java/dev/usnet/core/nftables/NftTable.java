package dev.usnet.core.nftables;

import java.util.ArrayList;
import java.util.List;

/**
 * A table of the ip family: its chains in the order they were added, and the handle counter its chains, rules
 * and anonymous sets share (a table's handles are allocated from one sequence, as in nf_tables).
 */
final class NftTable {
    final String name;
    long handle;
    long lastHandle;
    final List<NftChain> chains;

    NftTable(String name) {
        this.name = name;
        this.chains = new ArrayList<>();
    }

    NftTable copy() {
        NftTable t = new NftTable(name);
        t.handle = handle;
        t.lastHandle = lastHandle;
        for (NftChain c : chains) {
            t.chains.add(c.copy());
        }
        return t;
    }

    NftChain chain(String chainName) {
        for (NftChain c : chains) {
            if (c.name.equals(chainName)) {
                return c;
            }
        }
        return null;
    }

    long nextHandle() {
        return ++lastHandle;
    }
}
