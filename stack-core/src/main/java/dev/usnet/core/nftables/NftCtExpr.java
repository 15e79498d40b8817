package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.NfConntrack;
import dev.usnet.core.netfilter.NfHookState;

/**
 * {@code ct state}, {@code ct status} and {@code ct mark} matches (nft_ct get). A packet connection tracking did
 * not take is {@code invalid}; status and mark of a packet without an entry match nothing.
 */
final class NftCtExpr extends NftExpr {
    enum Key { STATE, STATUS, MARK }

    private final Key key;
    private final boolean negate;
    private final int value;
    /** Written as a set ({@code ct state { new, invalid }}): a lookup of the one state, listed in braces. */
    private final boolean set;

    NftCtExpr(Key key, boolean negate, int value, boolean set) {
        this.key = key;
        this.negate = negate;
        this.value = value;
        this.set = set;
    }

    /** The ct state bit of a packet (NF_CT_STATE_BIT, NF_CT_STATE_INVALID_BIT, NF_CT_STATE_UNTRACKED_BIT). */
    static int stateBit(Packet p) {
        if (p.ctinfo() == IpConntrackInfo.UNTRACKED) {
            return 64;
        }
        if (p.nfct() == null) {
            return 1;
        }
        return 1 << (p.ctinfo() % IpConntrackInfo.IS_REPLY + 1);
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        if (key == Key.STATE) {
            int bit = stateBit(p);
            // A single-bit compare with != is an inequality of the whole state (nft emits cmp neq); the positive
            // form tests the bits (bitwise and, cmp neq 0).
            boolean m = negate ? (set ? (bit & value) == 0 : bit != value) : (bit & value) != 0;
            return m ? CONTINUE : BREAK;
        }
        Object o = p.nfct();
        if (!(o instanceof NfConntrack ct)) {
            return BREAK;
        }
        boolean m = key == Key.STATUS ? (negate ? ct.status() != value : (ct.status() & value) != 0)
                : (ct.mark() == value) != negate;
        return m ? CONTINUE : BREAK;
    }

    @Override
    boolean usesConntrack() {
        return true;
    }

    @Override
    void print(StringBuilder sb) {
        sb.append(switch (key) {
            case STATE -> "ct state ";
            case STATUS -> "ct status ";
            case MARK -> "ct mark ";
        });
        if (negate) {
            sb.append("!= ");
        }
        String v = switch (key) {
            case STATE -> NftNames.bits(NftNames.CT_STATES, value);
            case STATUS -> NftNames.bits(NftNames.CT_STATUS, value);
            case MARK -> String.format("0x%08x", value);
        };
        sb.append(set ? "{ " + v.replace(",", ", ") + " }" : v);
    }
}
