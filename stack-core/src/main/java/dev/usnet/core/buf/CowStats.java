package dev.usnet.core.buf;

/**
 * How often copy-on-write copied, and how many bytes: the cost the forwarding COW policy is about. Counted on
 * the namespace's thread only (its forwarding and input path), read from any.
 */
@SuppressWarnings("NonAtomicOperationOnVolatileField")
public final class CowStats {
    private volatile long copies;
    private volatile long bytesCopied;
    private volatile long ttlSkipped;
    private volatile long shared;
    private volatile long headroomCopies;

    public void copied(int bytes) {
        copies++;
        bytesCopied += bytes;
    }

    /** A shared packet forwarded without TTL decrement (skip-ttl). */
    public void skipped() {
        ttlSkipped++;
    }

    /**
     * A packet met copy-on-write still shared with another holder (skb_cloned), whatever the policy did with
     * it: for a TCP sender's segments, proof that its retransmission queue still held them.
     */
    public void sawShared() {
        shared++;
    }

    /**
     * An unshared packet copied only because its headroom was short for the outgoing device (skb_cow's
     * headroom test); the copy itself is counted by {@link #copied} as well.
     */
    public void headroomCopy() {
        headroomCopies++;
    }

    public long shared() {
        return shared;
    }

    public long headroomCopies() {
        return headroomCopies;
    }

    public long copies() {
        return copies;
    }

    public long bytesCopied() {
        return bytesCopied;
    }

    public long ttlSkipped() {
        return ttlSkipped;
    }
}
