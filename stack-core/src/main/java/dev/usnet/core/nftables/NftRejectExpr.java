package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookState;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.IcmpPacket;

/**
 * {@code reject} (nft_reject_ipv4): answers the packet, then drops it. The answer is an ICMP destination
 * unreachable with the code given (port unreachable by default) or, {@code with tcp reset}, a TCP RST built by
 * {@link NfRejectIpv4}.
 */
final class NftRejectExpr extends NftExpr {
    static final int TCP_RESET = -1;

    /** The ICMP code, or {@link #TCP_RESET}. */
    private final int code;

    NftRejectExpr(int code) {
        this.code = code;
    }

    boolean isTcpReset() {
        return code == TCP_RESET;
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        if (code == TCP_RESET) {
            NfRejectIpv4.sendReset(pkt.owner.inet(), p, pkt);
        } else {
            NfRejectIpv4.sendUnreachable(pkt.owner.inet(), p, pkt, code);
        }
        return st.drop(DropReason.NETFILTER_DROP);
    }

    @Override
    void print(StringBuilder sb) {
        sb.append("reject");
        if (code == TCP_RESET) {
            sb.append(" with tcp reset");
        } else if (code != IcmpPacket.CODE_PORT_UNREACH) {
            sb.append(" with icmp ").append(NftNames.nameOf(NftNames.ICMP_REJECT_CODES, code));
        }
    }
}
