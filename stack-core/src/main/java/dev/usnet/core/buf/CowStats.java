package dev.usnet.core.buf;

import java.util.concurrent.atomic.LongAdder;

/** How often copy-on-write copied, and how many bytes: the cost the forwarding COW policy is about. */
public final class CowStats {
    private final LongAdder copies = new LongAdder();
    private final LongAdder bytesCopied = new LongAdder();
    private final LongAdder ttlSkipped = new LongAdder();

    public void copied(int bytes) {
        copies.increment();
        bytesCopied.add(bytes);
    }

    /** A shared packet forwarded without TTL decrement (skip-ttl). */
    public void skipped() {
        ttlSkipped.increment();
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
