package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.SEG_FIN;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Received data (sk_receive_queue and tp->out_of_order_queue): in-order payload waiting for the application,
 * segments above a hole held by sequence and bounded by the receive buffer (pruned from the top as
 * tcp_prune_ofo_queue does), and the SACK and D-SACK blocks the receiver reports about them (RFC 2018, 2883).
 */
final class ReceiveQueue {
    private final TcpSock sk;
    private final ArrayDeque<Packet> inOrder = new ArrayDeque<>();
    private int queuedBytes;
    private final OfoQueue ofo = new OfoQueue();
    // The SACK blocks this receiver reports (tp->selective_acks, tp->duplicate_sack); net.ipv4.tcp_dsack.
    private final SelectiveAcks selectiveAcks = new SelectiveAcks();
    private final boolean dsackOk;
    private final Consumer<Packet> dropOfoDuplicate = this::dropOfoDuplicate;
    private final Consumer<Packet> dropPruned = this::dropPruned;

    ReceiveQueue(TcpSock sk) {
        this.sk = sk;
        this.dsackOk = sk.stack.knobs().get(TcpSysctl.DSACK) != 0;
    }

    /** Bytes waiting for the application. */
    int queuedBytes() {
        return queuedBytes;
    }

    int outOfOrderBytes() {
        return ofo.bytes();
    }

    boolean hasOutOfOrder() {
        return !ofo.isEmpty();
    }

    /**
     * Appends a segment that starts at or below rcv_nxt (its already received head is cut off) and moves
     * rcv_nxt past it; a FIN it carries ends the stream.
     */
    void queueInOrder(Packet p) {
        long seq = TcpSkbCb.seq(p);
        long end = TcpSkbCb.endSeq(p);
        boolean fin = (TcpSkbCb.sacked(p) & SEG_FIN) != 0;
        if (Seq.before(seq, sk.rcvNxt)) {
            int dup = (int) Seq.sub(sk.rcvNxt, seq);
            dup = Math.min(dup, p.length());
            p.pull(dup);
        }
        int len = p.length();
        if (len > 0) {
            sk.rcvNxt = end;
            queuedBytes += len;
            sk.stats.bytesReceived += len;
            inOrder.addLast(p);
        } else {
            p.release();
        }
        if (fin) {
            sk.input.rcvFin();
        }
    }

    /**
     * tcp_data_queue_ofo: holds a segment above rcv_nxt. Memory, not the number of holes, bounds the queue: when
     * the receive buffer would overflow, out-of-order data is pruned from the highest sequence down (it is the
     * data the sender will get to last) before this segment is refused. Duplicates are answered with a D-SACK;
     * the segment's block goes first in the SACK option.
     */
    void queueOutOfOrder(Packet p) {
        sk.stack.mib().inc(Mib.TcpExtTCPOFOQueue);
        long seq = TcpSkbCb.seq(p);
        long end = TcpSkbCb.endSeq(p);
        long over = (long) queuedBytes + ofo.bytes() + p.length() - sk.rcvbuf;
        if (over > 0) {
            pruneOfoQueue(seq, over);
            if ((long) queuedBytes + ofo.bytes() + p.length() > sk.rcvbuf) {
                sk.stack.mib().inc(Mib.TcpExtTCPOFODrop);
                sk.stack.drop(p, DropReason.TCP_RCVBUF_FULL);
                return;
            }
        }
        OfoQueue.Added a = ofo.add(p, dropOfoDuplicate);
        if (a.hasDuplicate()) {
            dsackSet(a.dupStart(), a.dupEnd());
        }
        if (a.queued() && sk.sackOk) {
            selectiveAcks.newOfoSegment(seq, end);
        }
    }

    private void dropOfoDuplicate(Packet p) {
        sk.stack.mib().inc(Mib.TcpExtTCPOFOMerge);
        sk.stack.drop(p, DropReason.TCP_OFOMERGE);
    }

    private void dropPruned(Packet p) {
        sk.stack.drop(p, DropReason.TCP_OFO_QUEUE_PRUNE);
    }

    /**
     * tcp_prune_ofo_queue: frees at least {@code need} bytes (and an eighth of the buffer, so that pruning is not
     * repeated for every segment) from the top of the out-of-order queue, above {@code seq}. The SACK blocks are
     * forgotten, as Linux does: they may describe data that is gone (the sender learns of the reneging when its
     * cumulative ACK reaches a segment it saw SACKed).
     */
    private void pruneOfoQueue(long seq, long need) {
        if (ofo.isEmpty()) {
            return;
        }
        int goal = (int) Math.min(Integer.MAX_VALUE, Math.max(need, sk.rcvbuf / 8));
        int freed = ofo.pruneAbove(seq, goal, dropPruned);
        if (freed > 0) {
            sk.stack.mib().inc(Mib.TcpExtOfoPruned);
            selectiveAcks.clear();
        }
    }

    /** tcp_ofo_queue: moves what rcv_nxt reached into the receive queue; bytes already received are D-SACKed. */
    void drainOutOfOrder() {
        Packet p;
        while ((p = ofo.pollReady(sk.rcvNxt)) != null) {
            boolean fin = (TcpSkbCb.sacked(p) & SEG_FIN) != 0;
            long rcvNxt = sk.rcvNxt;
            if (Seq.before(TcpSkbCb.seq(p), rcvNxt)) {
                dsackSet(TcpSkbCb.seq(p), Seq.after(TcpSkbCb.endSeq(p), rcvNxt) ? rcvNxt : TcpSkbCb.endSeq(p));
            }
            if (!Seq.after(TcpSkbCb.endSeq(p), rcvNxt) && !fin) {
                sk.stack.drop(p, DropReason.TCP_OFOMERGE);
                continue;
            }
            queueInOrder(p);
        }
    }

    /** rcv_nxt moved: SACK blocks it reached are forgotten. */
    void advanceSacks() {
        selectiveAcks.advance(sk.rcvNxt);
    }

    /**
     * tcp_dsack_set: [{@code seq}, {@code end}) arrived twice; the next ACK reports it first (tcp_dsack_extend when
     * one is already pending). Only with SACK negotiated and net.ipv4.tcp_dsack on.
     */
    void dsackSet(long seq, long end) {
        if (!sk.sackOk || !dsackOk || !Seq.after(end, seq)) {
            return;
        }
        if (!selectiveAcks.hasDsack()) {
            sk.stack.mib().inc(Seq.before(seq, sk.rcvNxt) ? Mib.TcpExtTCPDSACKOldSent : Mib.TcpExtTCPDSACKOfoSent);
        }
        selectiveAcks.duplicate(seq, end);
    }

    /** SACK blocks an ACK would carry now (a pending D-SACK included), at most {@code room}. */
    int sackBlocksPending(int room) {
        return selectiveAcks.pending(room);
    }

    /**
     * Fills the SACK blocks to report (a pending D-SACK first, then the block of the latest out-of-order segment,
     * then the others most recently reported first) as far as {@code room} allows; returns how many.
     */
    int writeSackBlocks(long[] start, long[] end, int room) {
        return selectiveAcks.write(start, end, room);
    }

    /** The stream ended or the connection is gone: out-of-order data will never be delivered. */
    void clearOutOfOrder() {
        ofo.clear();
        selectiveAcks.clear();
    }

    /** Takes up to {@code max} bytes off the receive queue, copying them into {@code dst} unless it is null. */
    int consume(ByteBuf dst, int max) {
        int done = 0;
        while (done < max && !inOrder.isEmpty()) {
            Packet p = inOrder.peekFirst();
            int n = Math.min(max - done, p.length());
            if (dst != null) {
                dst.writeBytes(p.buf(), p.start(), n);
            }
            done += n;
            if (n == p.length()) {
                inOrder.pollFirst();
                p.release();
            } else {
                p.pull(n);
            }
        }
        queuedBytes -= done;
        return done;
    }

    /** Releases the data nobody will read. */
    void release() {
        for (Packet p : inOrder) {
            p.release();
        }
        inOrder.clear();
        queuedBytes = 0;
    }
}
