package dev.usnet.tcp;

import dev.usnet.core.buf.Buffers;
import io.netty.buffer.ByteBuf;

/**
 * Bytes the application wrote that TCP has not sent yet, up to SO_SNDBUF: a ring in one pooled direct buffer, so a
 * write copies once (like tcp_sendmsg into skb pages). The ring is made by the first write and doubles while the
 * bytes held need more, up to the limit; Linux too takes memory for queued bytes as they come, with SO_SNDBUF as
 * the bound, not the size. A socket that never writes holds nothing (an idle accepted connection, an embryonic
 * one); a bulk sender grows to its working size in its first writes and then allocates nothing.
 */
final class SendBuffer {
    /** The first ring: enough for request/response traffic without growing. */
    static final int FIRST_RING = 4096;

    private ByteBuf ring;
    private int ringCapacity;
    private int limit;
    private int head;
    private int size;
    // After release, nothing is taken again: a late write finds no room instead of a new ring nobody frees.
    private boolean released;

    SendBuffer(int limit) {
        this.limit = limit;
    }

    int size() {
        return size;
    }

    int free() {
        return released ? 0 : limit - size;
    }

    /** SO_SNDBUF: the most it holds. */
    int capacity() {
        return limit;
    }

    /** Bytes of ring memory it holds now (0 until the first write). */
    int allocated() {
        return ringCapacity;
    }

    /** Copies up to {@code len} bytes in; returns how many fit. */
    int write(ByteBuf src, int off, int len) {
        int n = Math.min(len, free());
        if (n <= 0) {
            return 0;
        }
        if (size + n > ringCapacity) {
            moveTo(Math.min(limit, Math.max(size + n, Math.max(FIRST_RING, 2 * ringCapacity))));
        }
        int tail = (head + size) % ringCapacity;
        int first = Math.min(n, ringCapacity - tail);
        ring.setBytes(tail, src, off, first);
        if (n > first) {
            ring.setBytes(0, src, off + first, n - first);
        }
        size += n;
        return n;
    }

    /** Moves the oldest {@code len} bytes into {@code dst} at {@code dstIndex}. */
    void take(ByteBuf dst, int dstIndex, int len) {
        int first = Math.min(len, ringCapacity - head);
        dst.setBytes(dstIndex, ring, head, first);
        if (len > first) {
            dst.setBytes(dstIndex + first, ring, 0, len - first);
        }
        head = (head + len) % ringCapacity;
        size -= len;
    }

    /** SO_SNDBUF: a new limit, never below what it holds; a ring larger than the new limit shrinks to it. */
    void resize(int newLimit) {
        if (released) {
            return;
        }
        limit = Math.max(newLimit, size);
        if (ringCapacity > limit) {
            moveTo(limit);
        }
    }

    /** Copies what it holds to the start of a new ring of {@code cap} bytes (none for 0). */
    private void moveTo(int cap) {
        ByteBuf n = cap == 0 ? null : Buffers.alloc().directBuffer(cap, cap);
        if (size > 0) {
            int first = Math.min(size, ringCapacity - head);
            n.setBytes(0, ring, head, first);
            if (size > first) {
                n.setBytes(first, ring, 0, size - first);
            }
        }
        if (ring != null) {
            ring.release();
        }
        ring = n;
        ringCapacity = cap;
        head = 0;
    }

    void release() {
        if (ring != null) {
            ring.release();
            ring = null;
        }
        ringCapacity = 0;
        head = 0;
        size = 0;
        released = true;
    }
}
