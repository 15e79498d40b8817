package dev.usnet.tcp;

/**
 * The SACK blocks a receiver reports (Linux's {@code tp->selective_acks[]} and {@code tp->duplicate_sack}), kept
 * apart from the out-of-order queue, as RFC 2018 section 4 and RFC 2883 ask:
 * <ul>
 * <li>the block holding the segment that just arrived comes first; a segment that touches or overlaps a block
 *     extends it, and the grown block may swallow others; a new block pushes the others down, most recently
 *     reported first, and the oldest falls off when all {@link #MAX_BLOCKS} are in use;</li>
 * <li>a block goes away once rcv_nxt reaches it (the cumulative ACK covers it);</li>
 * <li>a duplicate segment (below rcv_nxt, or data the out-of-order queue already holds) is reported once as a
 *     D-SACK block ahead of all others, then forgotten.</li>
 * </ul>
 * Four blocks are kept; an ACK carries as many as its option space holds: four without timestamps, three with
 * (the D-SACK block counts against that room).
 */
final class SelectiveAcks {
    /** Blocks remembered (TCP_NUM_SACKS): four fill the 40 bytes of option space without timestamps. */
    static final int MAX_BLOCKS = 4;

    private final long[] start = new long[MAX_BLOCKS];
    private final long[] end = new long[MAX_BLOCKS];
    private int count;
    private boolean dsack;
    private long dsackStart;
    private long dsackEnd;

    /** Blocks held, not counting a pending D-SACK. */
    int count() {
        return count;
    }

    long start(int i) {
        return start[i];
    }

    long end(int i) {
        return end[i];
    }

    boolean hasDsack() {
        return dsack;
    }

    /** tcp_sack_new_ofo_skb: data [{@code seq}, {@code endSeq}) went into the out-of-order queue. */
    void newOfoSegment(long seq, long endSeq) {
        for (int i = 0; i < count; i++) {
            if (touches(i, seq, endSeq)) {
                extend(i, seq, endSeq);
                moveToFront(i);
                coalesceFront();
                return;
            }
        }
        // A new block: everything moves down one place; the oldest falls off when the list is full.
        int keep = Math.min(count, MAX_BLOCKS - 1);
        for (int i = keep; i > 0; i--) {
            start[i] = start[i - 1];
            end[i] = end[i - 1];
        }
        start[0] = seq;
        end[0] = endSeq;
        count = keep + 1;
    }

    /** tcp_sack_remove: rcv_nxt moved to {@code rcvNxt}; blocks it reached are covered by the cumulative ACK. */
    void advance(long rcvNxt) {
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (Seq.before(rcvNxt, start[i])) {
                start[n] = start[i];
                end[n] = end[i];
                n++;
            }
        }
        count = n;
    }

    /**
     * tcp_dsack_set / tcp_dsack_extend: [{@code seq}, {@code endSeq}) arrived twice; the next ACK reports it first.
     * A second duplicate before that ACK went out widens the block when the two touch, else replaces it.
     */
    void duplicate(long seq, long endSeq) {
        if (!Seq.after(endSeq, seq)) {
            return;
        }
        if (dsack && !Seq.after(seq, dsackEnd) && !Seq.after(dsackStart, endSeq)) {
            if (Seq.before(seq, dsackStart)) {
                dsackStart = seq;
            }
            if (Seq.after(endSeq, dsackEnd)) {
                dsackEnd = endSeq;
            }
            return;
        }
        dsack = true;
        dsackStart = seq;
        dsackEnd = endSeq;
    }

    /**
     * Writes the blocks for one outgoing segment into {@code outStart}/{@code outEnd}, at most {@code room}: the
     * D-SACK first when one is pending (it is then consumed: RFC 2883 reports a duplicate once), then the blocks
     * most recently reported first. Returns how many.
     */
    int write(long[] outStart, long[] outEnd, int room) {
        int n = 0;
        if (dsack && room > 0) {
            outStart[0] = dsackStart;
            outEnd[0] = dsackEnd;
            n = 1;
            dsack = false;
        }
        for (int i = 0; i < count && n < room; i++) {
            outStart[n] = start[i];
            outEnd[n] = end[i];
            n++;
        }
        return n;
    }

    /** How many blocks {@link #write} would produce with {@code room}, without consuming the D-SACK. */
    int pending(int room) {
        return Math.min(room, count + (dsack ? 1 : 0));
    }

    /** tcp_sack_reset: forget everything (out-of-order data was thrown away, or the connection is done). */
    void clear() {
        count = 0;
        dsack = false;
    }

    private boolean touches(int i, long seq, long endSeq) {
        return !Seq.after(seq, end[i]) && !Seq.after(start[i], endSeq);
    }

    private void extend(int i, long seq, long endSeq) {
        if (Seq.before(seq, start[i])) {
            start[i] = seq;
        }
        if (Seq.after(endSeq, end[i])) {
            end[i] = endSeq;
        }
    }

    private void moveToFront(int i) {
        long s = start[i];
        long e = end[i];
        for (int k = i; k > 0; k--) {
            start[k] = start[k - 1];
            end[k] = end[k - 1];
        }
        start[0] = s;
        end[0] = e;
    }

    /** tcp_sack_maybe_coalesce: the front block grew; absorb every other block it now touches. */
    private void coalesceFront() {
        int n = 1;
        for (int i = 1; i < count; i++) {
            if (touches(i, start[0], end[0])) {
                extend(0, start[i], end[i]);
            } else {
                start[n] = start[i];
                end[n] = end[i];
                n++;
            }
        }
        count = n;
    }
}
