package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookState;

/** {@code counter} (nft_counter): the packets that reached it and their bytes at the IP layer. */
final class NftCounterExpr extends NftExpr {
    private long packets;
    private long bytes;

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        packets++;
        bytes += pkt.len;
        return CONTINUE;
    }

    /** The values a listing fed back as input ({@code counter packets N bytes M}) starts from. */
    void preset(long packets, long bytes) {
        this.packets = packets;
        this.bytes = bytes;
    }

    long packets() {
        return packets;
    }

    long bytes() {
        return bytes;
    }

    @Override
    void print(StringBuilder sb) {
        sb.append("counter packets ").append(packets).append(" bytes ").append(bytes);
    }
}
