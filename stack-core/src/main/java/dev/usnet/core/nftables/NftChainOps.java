package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfHookState;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stats.DropReason;

/**
 * A base chain at its hook (nft_do_chain): the rules in order, each expression until one breaks or gives a
 * verdict; {@code jump} pushes where to come back to, {@code goto} does not, {@code return} and the end of a
 * regular chain pop, and the end of the base chain gives its policy. Reads the live rule arrays and allocates
 * nothing.
 */
final class NftChainOps implements NfHookOps {
    /** NFT_JUMP_STACK_SIZE. */
    static final int JUMP_STACK = 16;

    private final Nftables owner;
    final NftChain chain;

    NftChainOps(Nftables owner, NftChain chain) {
        this.owner = owner;
        this.chain = chain;
    }

    @Override
    public int hook(Packet p, NfHookState st) {
        NftPktInfo pkt = owner.enter();
        try {
            pkt.load(p);
            int v = run(p, st, pkt);
            owner.inet().netns().cpu().nftEvaluated(pkt.rulesEvaluated);
            return v;
        } finally {
            owner.leave();
        }
    }

    private int run(Packet p, NfHookState st, NftPktInfo pkt) {
        NftChain c = chain;
        NftRule[] rules = c.live;
        int next = 0;
        int sp = 0;
        while (true) {
            while (next < rules.length) {
                NftExpr[] exprs = rules[next++].exprs;
                pkt.rulesEvaluated++;
                int v = NftExpr.CONTINUE;
                for (int i = 0; i < exprs.length && v == NftExpr.CONTINUE; i++) {
                    v = exprs[i].eval(p, st, pkt);
                }
                if (v == NftExpr.CONTINUE || v == NftExpr.BREAK) {
                    continue;
                }
                if (v == NftExpr.JUMP || v == NftExpr.GOTO) {
                    if (v == NftExpr.JUMP) {
                        if (sp == JUMP_STACK) {
                            // Loops are refused when rules are added; a chain this deep is dropped as nft does.
                            return st.drop(DropReason.NETFILTER_DROP);
                        }
                        pkt.stackChain[sp] = c;
                        pkt.stackRule[sp] = next;
                        sp++;
                    }
                    c = pkt.target;
                    rules = c.live;
                    next = 0;
                    continue;
                }
                if (v == NftExpr.RETURN) {
                    break;
                }
                return v;
            }
            if (sp == 0) {
                // The end of the base chain, or a return in it: its policy.
                return policy(chain.policy, st);
            }
            sp--;
            c = pkt.stackChain[sp];
            rules = c.live;
            next = pkt.stackRule[sp];
        }
    }

    /** What the policy's verdict means for a dropped packet: counted as a netfilter drop. */
    static int policy(int policy, NfHookState st) {
        return policy == NfVerdict.DROP ? st.drop(DropReason.NETFILTER_DROP) : policy;
    }
}
