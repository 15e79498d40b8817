package dev.usnet.core.buf;

import java.util.concurrent.atomic.LongAdder;

/** How often copy-on-write copied, and how many bytes: the cost the forwarding COW policy is about. */
public final class CowStats {
    private final LongAdder copies = new LongAdder();
    private final LongAdder bytesCopied = new LongAdder();
    private final LongAdder ttlSkipped = new LongAdder();
    private final LongAdder shared = new LongAdder();
    private final LongAdder headroomCopies = new LongAdder();

    public void copied(int bytes) {
        copies.increment();
        bytesCopied.add(bytes);
    }

    /** A shared packet forwarded without TTL decrement (skip-ttl). */
    public void skipped() {
        ttlSkipped.increment();
    }

    /**
     * A packet met copy-on-write still shared with another holder (skb_cloned), whatever the policy did with
     * it: for a TCP sender's segments, proof that its retransmission queue still held them.
     */
    public void sawShared() {
        shared.increment();
    }

    /**
     * An unshared packet copied only because its headroom was short for the outgoing device (skb_cow's
     * headroom test); the copy itself is counted by {@link #copied} as well.
     */
    public void headroomCopy() {
        headroomCopies.increment();
    }

    public long shared() {
        return shared.sum();
    }

    public long headroomCopies() {
        return headroomCopies.sum();
    }

    public long copies() {
        return copies.sum();
    }

    public long bytesCopied() {
        return bytesCopied.sum();
    }

    public long ttlSkipped() {
        return ttlSkipped.sum();
    }
}
