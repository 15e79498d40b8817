package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import java.util.Arrays;

/**
 * The retransmission queue (tcp_rtx_queue): sent segments in sequence order in a growable ring with
 * random access, so SACK tagging and retransmission find their place by binary search instead of walking
 * from the head on every ACK (what Linux's rb-tree and skb hints are for).
 */
final class RtxQueue {
    /** The ring before the first segment: a socket that never sends (an accepted sink, an idle one) holds none. */
    private static final Packet[] EMPTY = new Packet[0];
    /** The first ring: a power of two, grown by doubling while the flight needs more. */
    private static final int FIRST_RING = 16;

    private Packet[] ring = EMPTY;
    private int head;
    private int size;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    Packet get(int i) {
        return ring[(head + i) & (ring.length - 1)];
    }

    Packet peekFirst() {
        return size == 0 ? null : ring[head];
    }

    Packet peekLast() {
        return size == 0 ? null : get(size - 1);
    }

    void addLast(Packet p) {
        if (size == ring.length) {
            grow();
        }
        ring[(head + size) & (ring.length - 1)] = p;
        size++;
    }

    Packet pollFirst() {
        if (size == 0) {
            return null;
        }
        Packet p = ring[head];
        ring[head] = null;
        head = (head + 1) & (ring.length - 1);
        size--;
        return p;
    }

    /** Replaces the head entry (a partly acknowledged segment cut down to its unacknowledged bytes). */
    void replaceFirst(Packet p) {
        ring[head] = p;
    }

    /** Index of the first segment whose end lies after {@code seq}, or size() if none. */
    int firstEndingAfter(long seq) {
        int lo = 0;
        int hi = size;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Seq.after(TcpSkbCb.endSeq(get(mid)), seq)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** Releases every segment. */
    void clear() {
        for (int i = 0; i < size; i++) {
            int idx = (head + i) & (ring.length - 1);
            ring[idx].release();
            ring[idx] = null;
        }
        head = 0;
        size = 0;
    }

    private void grow() {
        Packet[] n = new Packet[Math.max(FIRST_RING, ring.length * 2)];
        for (int i = 0; i < size; i++) {
            n[i] = get(i);
        }
        Arrays.fill(ring, null);
        ring = n;
        head = 0;
    }
}
