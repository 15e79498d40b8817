package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import java.util.ArrayList;
import java.util.function.Consumer;

/**
 * The out-of-order queue (tp->out_of_order_queue): segments above rcv_nxt held by sequence number, each a
 * packet trimmed to its payload. It holds any number of holes; what bounds it is memory, the receive buffer
 * (see {@link #pruneAbove}). The SACK blocks the receiver reports are kept apart, in {@link SelectiveAcks}.
 */
final class OfoQueue {
    /**
     * What {@link #add} did with a segment: whether it was queued, how many held segments it replaced, and the
     * range that arrived twice (empty when {@code dupEnd == dupStart}), for the D-SACK.
     */
    record Added(boolean queued, int replaced, long dupStart, long dupEnd) {
        boolean hasDuplicate() {
            return Seq.after(dupEnd, dupStart);
        }
    }

    // Sorted by sequence; entries before `head` are already taken (compacted now and then, so that draining a
    // queue of thousands of segments after a hole fills is not quadratic).
    private final ArrayList<Packet> segs = new ArrayList<>();
    private int head;
    private int bytes;
    private long dupStart;
    private long dupEnd;

    boolean isEmpty() {
        return head == segs.size();
    }

    int size() {
        return segs.size() - head;
    }

    /** Payload bytes held. */
    int bytes() {
        return bytes;
    }

    /**
     * Inserts {@code p} (tcp_data_queue_ofo). A segment wholly covered by one already held is released (not
     * queued); segments {@code p} covers completely are released in its favour. Every byte that was already
     * held is reported as the duplicate range (as far as it is contiguous). Owns {@code p}: a refused or replaced
     * segment goes to {@code dropped}.
     */
    Added add(Packet p, Consumer<Packet> dropped) {
        long seq = TcpSkbCb.seq(p);
        long end = TcpSkbCb.endSeq(p);
        dupStart = dupEnd = seq;
        int i = firstStartingAtOrAfter(seq);
        if (i > head && Seq.after(TcpSkbCb.endSeq(segs.get(i - 1)), seq)) {
            Packet prev = segs.get(i - 1);
            if (!Seq.after(end, TcpSkbCb.endSeq(prev))) {
                dropped.accept(p);
                return new Added(false, 0, seq, end);
            }
            // Overlaps the tail of the segment before: that part arrived twice.
            duplicate(seq, TcpSkbCb.endSeq(prev));
        }
        if (i < segs.size() && TcpSkbCb.seq(segs.get(i)) == seq && !Seq.before(TcpSkbCb.endSeq(segs.get(i)), end)) {
            dropped.accept(p);
            return new Added(false, 0, seq, end);
        }
        int replaced = 0;
        while (i < segs.size() && Seq.before(TcpSkbCb.seq(segs.get(i)), end)) {
            Packet next = segs.get(i);
            if (Seq.after(TcpSkbCb.endSeq(next), end) || (TcpSkbCb.sacked(next) & TcpSkbCb.SEG_FIN) != 0) {
                // Overlaps the head of the segment after, which stays.
                duplicate(TcpSkbCb.seq(next), Seq.after(TcpSkbCb.endSeq(next), end) ? end : TcpSkbCb.endSeq(next));
                break;
            }
            segs.remove(i);
            duplicate(TcpSkbCb.seq(next), TcpSkbCb.endSeq(next));
            bytes -= next.length();
            dropped.accept(next);
            replaced++;
        }
        segs.add(i, p);
        bytes += p.length();
        return new Added(true, replaced, dupStart, dupEnd);
    }

    /** tcp_dsack_extend: the first duplicate range found sets it, later ones widen it when they touch. */
    private void duplicate(long s, long e) {
        if (!Seq.after(dupEnd, dupStart)) {
            dupStart = s;
            dupEnd = e;
        } else if (!Seq.after(s, dupEnd) && !Seq.after(dupStart, e)) {
            if (Seq.before(s, dupStart)) {
                dupStart = s;
            }
            if (Seq.after(e, dupEnd)) {
                dupEnd = e;
            }
        }
    }

    /**
     * Removes and returns the first segment if it starts at or below {@code rcvNxt} (it may overlap what is
     * already received), else null.
     */
    Packet pollReady(long rcvNxt) {
        if (isEmpty() || Seq.after(TcpSkbCb.seq(segs.get(head)), rcvNxt)) {
            return null;
        }
        Packet p = segs.set(head, null);
        head++;
        bytes -= p.length();
        if (head == segs.size()) {
            segs.clear();
            head = 0;
        } else if (head >= 64 && head * 2 >= segs.size()) {
            segs.subList(0, head).clear();
            head = 0;
        }
        return p;
    }

    /**
     * tcp_prune_ofo_queue: releases segments from the highest sequence down, handing each to {@code dropped}, while
     * they start after {@code seq} (the segment that needs the room would otherwise land last itself) and until
     * {@code need} bytes are free. Returns the bytes released.
     */
    int pruneAbove(long seq, int need, Consumer<Packet> dropped) {
        int freed = 0;
        while (!isEmpty() && freed < need) {
            Packet last = segs.get(segs.size() - 1);
            if (!Seq.after(TcpSkbCb.seq(last), seq)) {
                break;
            }
            segs.remove(segs.size() - 1);
            bytes -= last.length();
            freed += last.length();
            dropped.accept(last);
        }
        return freed;
    }

    /** Releases everything (data that will never be delivered). */
    void clear() {
        for (int i = head; i < segs.size(); i++) {
            segs.get(i).release();
        }
        segs.clear();
        head = 0;
        bytes = 0;
    }

    /** Index (at or after head) of the first segment whose start is not before {@code seq}. */
    private int firstStartingAtOrAfter(long seq) {
        int lo = head;
        int hi = segs.size();
        // Out-of-order segments mostly arrive in ascending order: check the end first.
        if (hi > lo && Seq.before(TcpSkbCb.seq(segs.get(hi - 1)), seq)) {
            return hi;
        }
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Seq.before(TcpSkbCb.seq(segs.get(mid)), seq)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
