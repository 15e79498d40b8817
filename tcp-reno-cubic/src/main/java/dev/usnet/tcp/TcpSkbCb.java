package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;

/**
 * TCP's per-segment control block (TCP_SKB_CB) kept in the packet's control buffer, which the layers below do
 * not read: sequence range, scoreboard bits, segment count, send stamp. Static accessors, so a segment carries
 * its state without an object of its own.
 */
final class TcpSkbCb {
    private TcpSkbCb() {}

    // Scoreboard bits of a sent segment (TCPCB_SACKED_ACKED, TCPCB_SACKED_RETRANS, TCPCB_LOST, TCPCB_EVER_RETRANS),
    // and what a queued segment carries besides data (its tcp_flags' SYN and FIN).
    static final int SACKED = 1;
    static final int RETRANS = 2;
    static final int LOST = 4;
    static final int EVER_RETRANS = 8;
    static final int SEG_SYN = 0x100;
    static final int SEG_FIN = 0x200;
    /** The segment was sent with PSH (its tcp_flags' PSH): a retransmission carries it again. */
    static final int SEG_PSH = 0x400;

    // Control-buffer words: seq, end_seq, the send stamp (skb_mstamp), ack_seq, and sacked | pcount << 32.
    private static final int W_SEQ = 0;
    private static final int W_END_SEQ = 1;
    private static final int W_TX_NANOS = 2;
    private static final int W_ACK_SEQ = 3;
    private static final int W_SACKED_PCOUNT = 4;

    /** seq: the first sequence number the segment covers. */
    static long seq(Packet p) {
        return p.cb(W_SEQ);
    }

    /** end_seq: one past the last sequence number (SYN and FIN count one each). */
    static long endSeq(Packet p) {
        return p.cb(W_END_SEQ);
    }

    static void setSeq(Packet p, long seq, long endSeq) {
        p.setCb(W_SEQ, seq);
        p.setCb(W_END_SEQ, endSeq);
    }

    /** sacked: the scoreboard bits, plus {@link #SEG_SYN}/{@link #SEG_FIN}. */
    static int sacked(Packet p) {
        return (int) p.cb(W_SACKED_PCOUNT);
    }

    static void setSacked(Packet p, int bits) {
        long w = p.cb(W_SACKED_PCOUNT);
        p.setCb(W_SACKED_PCOUNT, w & 0xffff_ffff_0000_0000L | bits & 0xffff_ffffL);
    }

    /** tcp_skb_pcount: how many MSS-sized segments this (possibly GSO) segment counts as. */
    static int pcount(Packet p) {
        return (int) (p.cb(W_SACKED_PCOUNT) >>> 32);
    }

    static void setPcount(Packet p, int n) {
        long w = p.cb(W_SACKED_PCOUNT);
        p.setCb(W_SACKED_PCOUNT, (long) n << 32 | w & 0xffff_ffffL);
    }

    /** skb_mstamp: when the segment was last sent, on the namespace clock. */
    static long txNanos(Packet p) {
        return p.cb(W_TX_NANOS);
    }

    static void setTxNanos(Packet p, long t) {
        p.setCb(W_TX_NANOS, t);
    }

    /** ack_seq as the retransmission path uses it: snd_nxt when the segment was last retransmitted. */
    static long ackSeq(Packet p) {
        return p.cb(W_ACK_SEQ);
    }

    static void setAckSeq(Packet p, long seq) {
        p.setCb(W_ACK_SEQ, seq);
    }
}
