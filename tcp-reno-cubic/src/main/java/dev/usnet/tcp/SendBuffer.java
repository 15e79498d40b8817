package dev.usnet.tcp;

import dev.usnet.core.buf.Buffers;
import io.netty.buffer.ByteBuf;

/**
 * Bytes the application wrote that TCP has not sent yet: a fixed ring in one pooled direct buffer, so a
 * write copies once (like tcp_sendmsg into skb pages) and steady-state sending allocates nothing.
 */
final class SendBuffer {
    private ByteBuf ring;
    private int capacity;
    private int head;
    private int size;

    SendBuffer(int capacity) {
        this.capacity = capacity;
        this.ring = Buffers.alloc().directBuffer(capacity, capacity);
    }

    int size() {
        return size;
    }

    int free() {
        return capacity - size;
    }

    int capacity() {
        return capacity;
    }

    /** Copies up to {@code len} bytes in; returns how many fit. */
    int write(ByteBuf src, int off, int len) {
        int n = Math.min(len, free());
        int tail = (head + size) % capacity;
        int first = Math.min(n, capacity - tail);
        ring.setBytes(tail, src, off, first);
        if (n > first) {
            ring.setBytes(0, src, off + first, n - first);
        }
        size += n;
        return n;
    }

    /** Moves the oldest {@code len} bytes into {@code dst} at {@code dstIndex}. */
    void take(ByteBuf dst, int dstIndex, int len) {
        int first = Math.min(len, capacity - head);
        dst.setBytes(dstIndex, ring, head, first);
        if (len > first) {
            dst.setBytes(dstIndex + first, ring, 0, len - first);
        }
        head = (head + len) % capacity;
        size -= len;
    }

    /** Grows or shrinks the ring (SO_SNDBUF); never below what it holds. */
    void resize(int newCapacity) {
        int cap = Math.max(newCapacity, size);
        if (cap == capacity) {
            return;
        }
        ByteBuf n = Buffers.alloc().directBuffer(cap, cap);
        int held = size;
        int first = Math.min(held, capacity - head);
        n.setBytes(0, ring, head, first);
        if (held > first) {
            n.setBytes(first, ring, 0, held - first);
        }
        ring.release();
        ring = n;
        capacity = cap;
        head = 0;
    }

    void release() {
        if (ring != null) {
            ring.release();
            ring = null;
        }
        size = 0;
    }
}
