package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfConntrack;
import dev.usnet.core.netfilter.NfHookState;

/** {@code meta mark set V} and {@code ct mark set V} (nft_meta set, nft_ct set). */
final class NftMarkSetExpr extends NftExpr {
    private final boolean ct;
    private final int mark;

    NftMarkSetExpr(boolean ct, int mark) {
        this.ct = ct;
        this.mark = mark;
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        if (!ct) {
            p.setMark(mark);
        } else if (p.nfct() instanceof NfConntrack c && c.mark() != mark) {
            c.setMark(mark);
        }
        return CONTINUE;
    }

    @Override
    boolean usesConntrack() {
        return ct;
    }

    @Override
    void print(StringBuilder sb) {
        sb.append(ct ? "ct mark set " : "meta mark set ").append(String.format("0x%08x", mark));
    }
}
