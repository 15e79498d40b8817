package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import io.netty.buffer.ByteBuf;

/**
 * What the expressions of one chain walk read from the packet, found once before the first rule (struct
 * nft_pktinfo): where the IP and transport headers are, the transport protocol, the fragment offset, and the
 * chain a jump or goto names. One per nesting level, reused: evaluation allocates nothing.
 */
final class NftPktInfo {
    ByteBuf buf;
    int nh;
    int th;
    /** IPPROTO of the datagram. */
    int l4proto;
    /** The fragment offset in bytes: transport header fields exist only in the first fragment. */
    int fragoff;
    /** Bytes from the transport header to the end of the datagram. */
    int l4len;
    /** The IP datagram's length, what a counter adds (skb->len at the IP layer). */
    int len;
    /** Set by a jump or goto verdict. */
    NftChain target;
    /** Where each jump came from: the chain and the rule after the jump (nft's jump stack). */
    final NftChain[] stackChain = new NftChain[NftChainOps.JUMP_STACK];
    final int[] stackRule = new int[NftChainOps.JUMP_STACK];
    /** Rules evaluated for the packet at this hook so far (the CPU model charges usnet.cpu.nft_rule_ns each). */
    int rulesEvaluated;
    /** The ruleset evaluating, for what a statement sends (a reject's reply). */
    final Nftables owner;

    NftPktInfo(Nftables owner) {
        this.owner = owner;
    }

    void load(Packet p) {
        rulesEvaluated = 0;
        buf = p.buf();
        nh = p.network();
        int ihl = (buf.getUnsignedByte(nh) & 0x0f) * 4;
        int total = buf.getUnsignedShort(nh + 2);
        int avail = p.start() + p.length() - nh;
        len = Math.min(total, avail);
        th = nh + ihl;
        l4proto = buf.getUnsignedByte(nh + 9);
        fragoff = (buf.getUnsignedShort(nh + 6) & 0x1fff) * 8;
        l4len = len - ihl;
        target = null;
    }

    /** Whether {@code bytes} of the transport header of protocol {@code proto} are there to read. */
    boolean hasTransport(int proto, int bytes) {
        return l4proto == proto && fragoff == 0 && l4len >= bytes;
    }
}
