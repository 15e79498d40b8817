package dev.usnet.core.buf;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/** The one allocator every packet buffer comes from: pooled, direct, so steady state allocates nothing. */
public final class Buffers {
    /** Room kept in front of locally built packets, like NET_SKB_PAD, so headers can be pushed without a copy. */
    public static final int HEADROOM = 64;

    private static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

    private Buffers() {}

    public static ByteBufAllocator alloc() {
        return ALLOC;
    }
}
