package dev.usnet.core.buf;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.Recycler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * The data of a head-copied packet, as an skb after pskb_expand_head: a private linear head (headroom plus
 * the copied headers) followed by one frag, a region of the buffer the packet shared with its clone. Indices
 * {@code [0, split)} are the head buffer's own indices, {@code [split, capacity)} map to
 * {@code frag[fragBase, fragBase + fragLen)}.
 *
 * <p>It exists instead of a {@code CompositeByteBuf} because a composite allocates its component holders on
 * every use (about 200 bytes per forwarded shared packet); this holder is recycled like Netty's pooled
 * buffers, and the frag is the packet's former buffer reference itself, so building one allocates nothing.
 *
 * <p>Writes into the frag are what Linux forbids on a cloned skb's frags. Here they first give the frag a
 * private copy when the frag is still shared (skb_ensure_writable), so the other holder never sees them;
 * the only such writer today is a checksum completed in software after the head was copied.
 */
public final class HeadFragByteBuf extends AbstractReferenceCountedByteBuf {
    private static final Recycler<HeadFragByteBuf> RECYCLER = new Recycler<>() {
        @Override
        protected HeadFragByteBuf newObject(Handle<HeadFragByteBuf> handle) {
            return new HeadFragByteBuf(handle);
        }
    };

    private final Recycler.Handle<HeadFragByteBuf> handle;
    private ByteBuf head;
    private int split;
    private ByteBuf frag;
    private int fragBase;
    private int fragLen;
    private boolean fragPrivate;

    private HeadFragByteBuf(Recycler.Handle<HeadFragByteBuf> handle) {
        super(Integer.MAX_VALUE);
        this.handle = handle;
    }

    /**
     * Takes ownership of one reference each of {@code head} (whose indices {@code [0, split)} become this
     * buffer's) and {@code frag}; reader and writer index start at 0 and the full capacity.
     */
    public static HeadFragByteBuf of(ByteBuf head, int split, ByteBuf frag, int fragBase, int fragLen) {
        if (split > head.capacity() || fragBase < 0 || fragLen < 0 || fragBase + fragLen > frag.capacity()) {
            throw new IllegalArgumentException("head " + split + "/" + head.capacity() + ", frag [" + fragBase
                    + ", " + (fragBase + fragLen) + ") of " + frag.capacity());
        }
        HeadFragByteBuf b = RECYCLER.get();
        b.resetRefCnt();
        b.head = head;
        b.split = split;
        b.frag = frag;
        b.fragBase = fragBase;
        b.fragLen = fragLen;
        b.fragPrivate = false;
        b.setIndex(0, split + fragLen);
        b.markReaderIndex();
        b.markWriterIndex();
        return b;
    }

    /** The private head buffer; its indices are this buffer's below {@link #split()}. */
    public ByteBuf head() {
        return head;
    }

    /** The first index that lies in the frag. */
    public int split() {
        return split;
    }

    /** The buffer the frag lies in (shared with the clone until written to). */
    public ByteBuf frag() {
        return frag;
    }

    /** The frag's index in {@link #frag()} that this buffer's {@link #split()} maps to. */
    public int fragBase() {
        return fragBase;
    }

    /** True while the frag's bytes are still referenced by another holder. */
    public boolean fragShared() {
        return !fragPrivate && rootRefCnt(frag) > 1;
    }

    private static int rootRefCnt(ByteBuf b) {
        ByteBuf root = b;
        for (ByteBuf u = b.unwrap(); u != null; u = u.unwrap()) {
            root = u;
        }
        return root.refCnt();
    }

    /** Gives the frag a private copy before it is written (or grown) while another holder references it. */
    private void ownFrag(int newLen) {
        if (!fragPrivate && rootRefCnt(frag) > 1 || newLen > fragLen && fragBase + newLen > frag.capacity()) {
            ByteBuf copy = Buffers.alloc().directBuffer(Math.max(newLen, fragLen));
            copy.setBytes(0, frag, fragBase, Math.min(newLen, fragLen));
            frag.release();
            frag = copy;
            fragBase = 0;
        }
        fragPrivate = true;
    }

    @Override
    protected void deallocate() {
        ByteBuf h = head;
        ByteBuf f = frag;
        head = null;
        frag = null;
        split = 0;
        fragBase = 0;
        fragLen = 0;
        try {
            h.release();
        } finally {
            f.release();
            handle.recycle(this);
        }
    }

    @Override
    public int capacity() {
        return split + fragLen;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        checkNewCapacity(newCapacity);
        if (newCapacity < split) {
            throw new UnsupportedOperationException("cannot cut into the private head (" + split + " bytes)");
        }
        int newLen = newCapacity - split;
        if (newLen > fragLen) {
            ownFrag(newLen);
        }
        fragLen = newLen;
        if (writerIndex() > newCapacity) {
            setIndex(Math.min(readerIndex(), newCapacity), newCapacity);
        }
        return this;
    }

    @Override
    public ByteBufAllocator alloc() {
        return Buffers.alloc();
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return true;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public byte[] array() {
        throw new UnsupportedOperationException("head plus frag: no single array");
    }

    @Override
    public int arrayOffset() {
        throw new UnsupportedOperationException("head plus frag: no single array");
    }

    @Override
    public boolean hasMemoryAddress() {
        return false;
    }

    @Override
    public long memoryAddress() {
        throw new UnsupportedOperationException("head plus frag: no single memory address");
    }

    // Accessors: a value wholly inside the head or the frag is read there; one that straddles the split
    // (never a header field, the split is at a header boundary) is put together byte by byte.

    private int f(int index) {
        return fragBase + index - split;
    }

    @Override
    protected byte _getByte(int index) {
        return index < split ? head.getByte(index) : frag.getByte(f(index));
    }

    @Override
    protected short _getShort(int index) {
        if (index + 2 <= split) {
            return head.getShort(index);
        }
        if (index >= split) {
            return frag.getShort(f(index));
        }
        return (short) ((_getByte(index) & 0xff) << 8 | _getByte(index + 1) & 0xff);
    }

    @Override
    protected short _getShortLE(int index) {
        return Short.reverseBytes(_getShort(index));
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        if (index + 3 <= split) {
            return head.getUnsignedMedium(index);
        }
        if (index >= split) {
            return frag.getUnsignedMedium(f(index));
        }
        return (_getByte(index) & 0xff) << 16 | (_getByte(index + 1) & 0xff) << 8 | _getByte(index + 2) & 0xff;
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        int m = _getUnsignedMedium(index);
        return (m & 0xff) << 16 | m & 0xff00 | m >>> 16 & 0xff;
    }

    @Override
    protected int _getInt(int index) {
        if (index + 4 <= split) {
            return head.getInt(index);
        }
        if (index >= split) {
            return frag.getInt(f(index));
        }
        return (_getShort(index) & 0xffff) << 16 | _getShort(index + 2) & 0xffff;
    }

    @Override
    protected int _getIntLE(int index) {
        return Integer.reverseBytes(_getInt(index));
    }

    @Override
    protected long _getLong(int index) {
        if (index + 8 <= split) {
            return head.getLong(index);
        }
        if (index >= split) {
            return frag.getLong(f(index));
        }
        return (_getInt(index) & 0xffff_ffffL) << 32 | _getInt(index + 4) & 0xffff_ffffL;
    }

    @Override
    protected long _getLongLE(int index) {
        return Long.reverseBytes(_getLong(index));
    }

    private ByteBuf fragForWrite() {
        if (!fragPrivate) {
            ownFrag(fragLen);
        }
        return frag;
    }

    @Override
    protected void _setByte(int index, int value) {
        if (index < split) {
            head.setByte(index, value);
        } else {
            fragForWrite().setByte(f(index), value);
        }
    }

    @Override
    protected void _setShort(int index, int value) {
        if (index + 2 <= split) {
            head.setShort(index, value);
        } else if (index >= split) {
            fragForWrite().setShort(f(index), value);
        } else {
            _setByte(index, value >>> 8);
            _setByte(index + 1, value);
        }
    }

    @Override
    protected void _setShortLE(int index, int value) {
        _setShort(index, Short.reverseBytes((short) value));
    }

    @Override
    protected void _setMedium(int index, int value) {
        if (index + 3 <= split) {
            head.setMedium(index, value);
        } else if (index >= split) {
            fragForWrite().setMedium(f(index), value);
        } else {
            _setByte(index, value >>> 16);
            _setByte(index + 1, value >>> 8);
            _setByte(index + 2, value);
        }
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        _setMedium(index, (value & 0xff) << 16 | value & 0xff00 | value >>> 16 & 0xff);
    }

    @Override
    protected void _setInt(int index, int value) {
        if (index + 4 <= split) {
            head.setInt(index, value);
        } else if (index >= split) {
            fragForWrite().setInt(f(index), value);
        } else {
            _setShort(index, value >>> 16);
            _setShort(index + 2, value);
        }
    }

    @Override
    protected void _setIntLE(int index, int value) {
        _setInt(index, Integer.reverseBytes(value));
    }

    @Override
    protected void _setLong(int index, long value) {
        if (index + 8 <= split) {
            head.setLong(index, value);
        } else if (index >= split) {
            fragForWrite().setLong(f(index), value);
        } else {
            _setInt(index, (int) (value >>> 32));
            _setInt(index + 4, (int) value);
        }
    }

    @Override
    protected void _setLongLE(int index, long value) {
        _setLong(index, Long.reverseBytes(value));
    }

    /** Bytes of {@code [index, index + length)} that lie in the head. */
    private int inHead(int index, int length) {
        return Math.max(0, Math.min(length, split - index));
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkDstIndex(index, length, dstIndex, dst.capacity());
        int h = inHead(index, length);
        if (h > 0) {
            head.getBytes(index, dst, dstIndex, h);
        }
        if (length > h) {
            frag.getBytes(f(index + h), dst, dstIndex + h, length - h);
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkDstIndex(index, length, dstIndex, dst.length);
        int h = inHead(index, length);
        if (h > 0) {
            head.getBytes(index, dst, dstIndex, h);
        }
        if (length > h) {
            frag.getBytes(f(index + h), dst, dstIndex + h, length - h);
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        int length = dst.remaining();
        checkIndex(index, length);
        int h = inHead(index, length);
        int limit = dst.limit();
        try {
            if (h > 0) {
                dst.limit(dst.position() + h);
                head.getBytes(index, dst);
                dst.limit(limit);
            }
            if (length > h) {
                frag.getBytes(f(index + h), dst);
            }
        } finally {
            dst.limit(limit);
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        int h = inHead(index, length);
        if (h > 0) {
            head.getBytes(index, out, h);
        }
        if (length > h) {
            frag.getBytes(f(index + h), out, length - h);
        }
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        int h = inHead(index, length);
        int n = 0;
        if (h > 0) {
            n = head.getBytes(index, out, h);
            if (n < h) {
                return n;
            }
        }
        if (length > h) {
            n += frag.getBytes(f(index + h), out, length - h);
        }
        return n;
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        int h = inHead(index, length);
        int n = 0;
        if (h > 0) {
            n = head.getBytes(index, out, position, h);
            if (n < h) {
                return n;
            }
        }
        if (length > h) {
            n += frag.getBytes(f(index + h), out, position + h, length - h);
        }
        return n;
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        checkSrcIndex(index, length, srcIndex, src.capacity());
        int h = inHead(index, length);
        if (h > 0) {
            head.setBytes(index, src, srcIndex, h);
        }
        if (length > h) {
            fragForWrite().setBytes(f(index + h), src, srcIndex + h, length - h);
        }
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        checkSrcIndex(index, length, srcIndex, src.length);
        int h = inHead(index, length);
        if (h > 0) {
            head.setBytes(index, src, srcIndex, h);
        }
        if (length > h) {
            fragForWrite().setBytes(f(index + h), src, srcIndex + h, length - h);
        }
        return this;
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        int length = src.remaining();
        checkIndex(index, length);
        int h = inHead(index, length);
        int limit = src.limit();
        try {
            if (h > 0) {
                src.limit(src.position() + h);
                head.setBytes(index, src);
                src.limit(limit);
            }
            if (length > h) {
                fragForWrite().setBytes(f(index + h), src);
            }
        } finally {
            src.limit(limit);
        }
        return this;
    }

    @Override
    public int setBytes(int index, InputStream in, int length) throws IOException {
        checkIndex(index, length);
        return readInto(index, length, (part, at, offset, len) -> part.setBytes(at, in, len));
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) throws IOException {
        checkIndex(index, length);
        return readInto(index, length, (part, at, offset, len) -> part.setBytes(at, in, len));
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) throws IOException {
        checkIndex(index, length);
        return readInto(index, length, (part, at, offset, len) -> part.setBytes(at, in, position + offset, len));
    }

    /** Reads into one part of the buffer; {@code offset} is how far into the whole request {@code at} lies. */
    @FunctionalInterface
    private interface PartRead {
        int read(ByteBuf part, int at, int offset, int length) throws IOException;
    }

    /**
     * A read from a stream or channel that may stop short: into the head first, then (when the head was filled)
     * into the frag, made private first; -1 only when nothing at all was read.
     */
    private int readInto(int index, int length, PartRead read) throws IOException {
        int h = inHead(index, length);
        int n = 0;
        if (h > 0) {
            n = read.read(head, index, 0, h);
            if (n < h) {
                return n;
            }
        }
        if (length > h) {
            int m = read.read(fragForWrite(), f(index + h), h, length - h);
            return m < 0 ? (n == 0 ? -1 : n) : n + m;
        }
        return n;
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        ByteBuf c = Buffers.alloc().directBuffer(length);
        getBytes(index, c, 0, length);
        c.writerIndex(length);
        return c;
    }

    @Override
    public int nioBufferCount() {
        return 2;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        int h = inHead(index, length);
        if (h == length) {
            return head.nioBuffer(index, length);
        }
        if (h == 0) {
            return frag.nioBuffer(f(index), length);
        }
        ByteBuffer merged = ByteBuffer.allocate(length);
        getBytes(index, merged);
        return merged.flip();
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        checkIndex(index, length);
        int h = inHead(index, length);
        if (h == length) {
            return head.internalNioBuffer(index, length);
        }
        if (h == 0) {
            return frag.internalNioBuffer(f(index), length);
        }
        throw new UnsupportedOperationException("region crosses from the head into the frag");
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        checkIndex(index, length);
        int h = inHead(index, length);
        if (h == length) {
            return head.nioBuffers(index, length);
        }
        if (h == 0) {
            return frag.nioBuffers(f(index), length);
        }
        ByteBuffer[] a = head.nioBuffers(index, h);
        ByteBuffer[] b = frag.nioBuffers(f(split), length - h);
        ByteBuffer[] all = new ByteBuffer[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Override
    public boolean isContiguous() {
        return false;
    }
}
