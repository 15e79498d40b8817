package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookState;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stats.DropReason;

/** {@code accept}, {@code drop}, {@code jump C}, {@code goto C}, {@code return} (nft_immediate to the verdict). */
final class NftVerdictExpr extends NftExpr {
    enum Kind { ACCEPT, DROP, JUMP, GOTO, RETURN }

    final Kind kind;
    /** The chain a jump or goto names; resolved to {@link #chain} when the ruleset is committed. */
    final String targetName;
    NftChain chain;
    /** Where the target was named, for the error when it is not there. */
    final int line;
    final int column;

    NftVerdictExpr(Kind kind, String targetName, int line, int column) {
        this.kind = kind;
        this.targetName = targetName;
        this.line = line;
        this.column = column;
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        return switch (kind) {
            case ACCEPT -> NfVerdict.ACCEPT;
            case DROP -> st.drop(DropReason.NETFILTER_DROP);
            case JUMP -> {
                pkt.target = chain;
                yield JUMP;
            }
            case GOTO -> {
                pkt.target = chain;
                yield GOTO;
            }
            case RETURN -> RETURN;
        };
    }

    @Override
    void print(StringBuilder sb) {
        switch (kind) {
            case ACCEPT -> sb.append("accept");
            case DROP -> sb.append("drop");
            case JUMP -> sb.append("jump ").append(targetName);
            case GOTO -> sb.append("goto ").append(targetName);
            case RETURN -> sb.append("return");
        }
    }
}
