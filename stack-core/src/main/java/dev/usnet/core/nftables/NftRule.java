package dev.usnet.core.nftables;

/**
 * One rule: its expressions in order and its handle. Rules are immutable once parsed (the counters in them
 * count), so a transaction that fails leaves the rules it shares with the live ruleset untouched.
 */
final class NftRule {
    final NftExpr[] exprs;
    /** Expressions the listing leaves out: a protocol match a later transport match depends on, as nft does. */
    final boolean[] hidden;
    long handle;

    NftRule(NftExpr[] exprs, boolean[] hidden) {
        this.exprs = exprs;
        this.hidden = hidden;
    }

    boolean usesConntrack() {
        for (NftExpr e : exprs) {
            if (e.usesConntrack()) {
                return true;
            }
        }
        return false;
    }

    void print(StringBuilder sb) {
        boolean first = true;
        for (int i = 0; i < exprs.length; i++) {
            if (hidden[i]) {
                continue;
            }
            if (!first) {
                sb.append(' ');
            }
            exprs[i].print(sb);
            first = false;
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        print(sb);
        return sb.toString();
    }
}
