package dev.usnet.core.pcap;

import io.netty.buffer.ByteBuf;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes classic libpcap files (microsecond timestamps, little-endian, Ethernet) that tcpdump and
 * Wireshark open. Thread-safe; each frame is copied out when written.
 *
 * <p>A reader ({@code tcpdump -r}, {@code tshark -r}, a {@code tail}) sees each frame within
 * {@link #FLUSH_INTERVAL_NANOS} and a little: a frame that finds the last flush that old flushes, and
 * {@link PcapFlusher} flushes what an idle writer holds. Not a flush per frame, as {@code tcpdump -U}
 * does: on a busy path that is a {@code write(2)} per frame; this is one per 100 ms, and one
 * {@code System.nanoTime()} per frame. The header is on disk when the constructor returns, and after a
 * {@code kill -9} everything up to the last flush is (the last record may be torn:
 * {@link PcapReader#readComplete}).
 */
public final class PcapWriter implements AutoCloseable {
    /** How old the last flush may be before buffered frames are written out. */
    public static final long FLUSH_INTERVAL_NANOS = 100_000_000L;
    private static final int SNAPLEN = 262_144;
    private final OutputStream out;
    private final byte[] recordHeader = new byte[16];
    private final ByteBuffer rh = ByteBuffer.wrap(recordHeader).order(ByteOrder.LITTLE_ENDIAN);
    private byte[] scratch = new byte[2048];
    private long frames;
    private long lastFlushNanos;
    private boolean unflushed;
    private boolean closed;

    public PcapWriter(Path file) throws IOException {
        this(Files.newOutputStream(file));
    }

    public PcapWriter(OutputStream stream) throws IOException {
        this.out = new BufferedOutputStream(stream, 1 << 16);
        ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(PcapReader.MAGIC_USEC).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0)
                .putInt(SNAPLEN).putInt(PcapReader.LINKTYPE_ETHERNET);
        out.write(h.array());
        out.flush();
        lastFlushNanos = System.nanoTime();
        PcapFlusher.register(this);
    }

    public synchronized void write(long timestampNanos, ByteBuf buf, int off, int len) {
        int incl = Math.min(len, SNAPLEN);
        if (scratch.length < incl) {
            scratch = new byte[Math.max(incl, scratch.length * 2)];
        }
        buf.getBytes(off, scratch, 0, incl);
        write(timestampNanos, scratch, 0, incl, len);
    }

    public synchronized void write(long timestampNanos, byte[] data, int off, int incl, int orig) {
        long sec = Math.floorDiv(timestampNanos, 1_000_000_000L);
        long usec = Math.floorMod(timestampNanos, 1_000_000_000L) / 1000;
        rh.putInt(0, (int) sec).putInt(4, (int) usec).putInt(8, incl).putInt(12, orig);
        try {
            out.write(recordHeader);
            out.write(data, off, incl);
            frames++;
            unflushed = true;
            long now = System.nanoTime();
            if (now - lastFlushNanos >= FLUSH_INTERVAL_NANOS) {
                flushAt(now);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized long frames() {
        return frames;
    }

    /** Writes out every buffered frame now (SIGUSR1, or a test that reads the file). */
    public synchronized void flush() throws IOException {
        if (!closed) {
            flushAt(System.nanoTime());
        }
    }

    /** Flushes frames written since the last flush once that flush is {@link #FLUSH_INTERVAL_NANOS} old. */
    synchronized void flushIfStale(long nowNanos) throws IOException {
        if (unflushed && !closed && nowNanos - lastFlushNanos >= FLUSH_INTERVAL_NANOS) {
            flushAt(nowNanos);
        }
    }

    private void flushAt(long nowNanos) throws IOException {
        out.flush();
        unflushed = false;
        lastFlushNanos = nowNanos;
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        PcapFlusher.unregister(this);
        out.close();
    }
}
