package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookState;

/**
 * One expression of a rule, a match or a statement, compiled when the rule is parsed. A rule runs its expressions
 * in order until one does not match ({@link #BREAK}) or gives a verdict; {@link #CONTINUE} goes on to the next.
 * Each expression prints itself as nft lists it.
 */
abstract class NftExpr {
    static final int CONTINUE = -1;
    static final int BREAK = -2;
    static final int JUMP = -3;
    static final int GOTO = -4;
    static final int RETURN = -5;

    /** CONTINUE, BREAK, an NfVerdict, or JUMP/GOTO (with {@code pkt.target} set) or RETURN. */
    abstract int eval(Packet p, NfHookState st, NftPktInfo pkt);

    abstract void print(StringBuilder sb);

    /** Whether the expression needs connection tracking to run. */
    boolean usesConntrack() {
        return false;
    }

    /** The transport protocol whose header this expression reads, or -1. */
    int transportProtocol() {
        return -1;
    }
}
