package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookState;
import dev.usnet.core.netfilter.NfNatModule;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stats.DropReason;

/**
 * {@code snat to}, {@code dnat to} and {@code masquerade} (nft_nat, nft_masq): bind the connection through the
 * namespace's NAT with the range built when the rule was parsed. The statement ends the rule with NAT's verdict.
 */
final class NftNatExpr extends NftExpr {
    enum Kind { SNAT, DNAT, MASQUERADE }

    final Kind kind;
    final NfNatRange range;
    /** Whether the address range was written as {@code a-b} (printed so) rather than one address. */
    private final boolean addrRange;

    NftNatExpr(Kind kind, NfNatRange range, boolean addrRange) {
        this.kind = kind;
        this.range = range;
        this.addrRange = addrRange;
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        NfNatModule nat = pkt.owner.netfilter().nat();
        if (nat == null) {
            // Refused when the rule was added; a module removed since cannot translate.
            return st.drop(DropReason.NETFILTER_DROP);
        }
        int v = switch (kind) {
            case SNAT -> nat.setup(p, range, true);
            case DNAT -> nat.setup(p, range, false);
            case MASQUERADE -> nat.masquerade(p, range, st.out());
        };
        return v == NfVerdict.DROP ? st.drop(DropReason.NETFILTER_DROP) : v;
    }

    @Override
    boolean usesConntrack() {
        return true;
    }

    @Override
    void print(StringBuilder sb) {
        sb.append(switch (kind) {
            case SNAT -> "snat";
            case DNAT -> "dnat";
            case MASQUERADE -> "masquerade";
        });
        boolean ips = range.has(NfNatRange.MAP_IPS);
        boolean ports = range.has(NfNatRange.PROTO_SPECIFIED);
        if (ips || ports) {
            sb.append(" to ");
            if (ips) {
                sb.append(NftNames.ipv4(range.minAddr()));
                if (addrRange) {
                    sb.append('-').append(NftNames.ipv4(range.maxAddr()));
                }
            }
            if (ports) {
                sb.append(':').append(range.minPort());
                if (range.maxPort() != range.minPort()) {
                    sb.append('-').append(range.maxPort());
                }
            }
        }
        StringBuilder f = new StringBuilder();
        if (range.has(NfNatRange.PROTO_RANDOM)) {
            f.append("random");
        }
        if (range.has(NfNatRange.PROTO_RANDOM_FULLY)) {
            f.append(f.isEmpty() ? "" : ",").append("fully-random");
        }
        if (range.has(NfNatRange.PERSISTENT)) {
            f.append(f.isEmpty() ? "" : ",").append("persistent");
        }
        if (!f.isEmpty()) {
            sb.append(' ').append(f);
        }
    }
}
