package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import java.util.ArrayList;

/**
 * The out-of-order queue (tp->out_of_order_queue): segments above rcv_nxt held by sequence number, each a
 * packet trimmed to its payload, and the SACK blocks (RFC 2018) they make, most recently changed block first.
 */
final class OfoQueue {
    private final ArrayList<Packet> segs = new ArrayList<>();
    private int bytes;
    private long lastSeq = -1;
    private final long[] rangeStart = new long[32];
    private final long[] rangeEnd = new long[32];

    boolean isEmpty() {
        return segs.isEmpty();
    }

    int size() {
        return segs.size();
    }

    /** Payload bytes held. */
    int bytes() {
        return bytes;
    }

    /**
     * Inserts {@code p}; a segment already covered is released, segments {@code p} covers completely are
     * released in its favour. Owns {@code p}.
     */
    void add(Packet p) {
        long seq = p.tcpSeq();
        long end = p.tcpEndSeq();
        // Out-of-order segments mostly arrive in ascending order: search from the end.
        int i = segs.size();
        while (i > 0 && !TcpSock.before(segs.get(i - 1).tcpSeq(), seq)) {
            i--;
        }
        if (i > 0 && !TcpSock.after(end, segs.get(i - 1).tcpEndSeq())) {
            p.release();
            return;
        }
        while (i < segs.size() && !TcpSock.after(segs.get(i).tcpEndSeq(), end)
                && (segs.get(i).tcpSacked() & TcpSock.SEG_FIN) == 0) {
            Packet old = segs.remove(i);
            bytes -= old.length();
            old.release();
        }
        if (i < segs.size() && segs.get(i).tcpSeq() == seq && !TcpSock.before(segs.get(i).tcpEndSeq(), end)) {
            p.release();
            return;
        }
        segs.add(i, p);
        bytes += p.length();
        lastSeq = seq;
    }

    /**
     * Removes and returns the first segment if it starts at or below {@code rcvNxt} (it may overlap what is
     * already received), else null.
     */
    Packet pollReady(long rcvNxt) {
        if (segs.isEmpty() || TcpSock.after(segs.get(0).tcpSeq(), rcvNxt)) {
            return null;
        }
        // A few hundred entries at most are shifted here, and only when a hole is filled.
        Packet p = segs.remove(0);
        bytes -= p.length();
        return p;
    }

    /**
     * Writes up to {@code max} SACK blocks into {@code start}/{@code end}: the block holding the segment that
     * arrived last first (RFC 2018 section 4), then the others in sequence order. Returns how many.
     */
    int sackBlocks(long[] start, long[] end, int max) {
        int ranges = 0;
        int recent = -1;
        for (Packet p : segs) {
            long s = p.tcpSeq();
            long e = p.tcpEndSeq();
            if (ranges > 0 && !TcpSock.after(s, rangeEnd[ranges - 1])) {
                if (TcpSock.after(e, rangeEnd[ranges - 1])) {
                    rangeEnd[ranges - 1] = e;
                }
            } else {
                if (ranges == rangeStart.length) {
                    break;
                }
                rangeStart[ranges] = s;
                rangeEnd[ranges] = e;
                ranges++;
            }
            if (s == lastSeq) {
                recent = ranges - 1;
            }
        }
        int n = 0;
        if (recent >= 0 && n < max) {
            start[n] = rangeStart[recent];
            end[n] = rangeEnd[recent];
            n++;
        }
        for (int i = 0; i < ranges && n < max; i++) {
            if (i != recent) {
                start[n] = rangeStart[i];
                end[n] = rangeEnd[i];
                n++;
            }
        }
        return n;
    }

    /** Releases everything (data that will never be delivered). */
    void clear() {
        for (Packet p : segs) {
            p.release();
        }
        segs.clear();
        bytes = 0;
    }
}
