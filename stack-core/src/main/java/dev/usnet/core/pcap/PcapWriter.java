package dev.usnet.core.pcap;

import io.netty.buffer.ByteBuf;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;

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
 *
 * <p>A write that fails (the disk full: ENOSPC, a quota, an I/O error) stops the capture, as tcpdump stops:
 * the frames tapped afterwards are not written, the packet path that tapped them goes on untouched, and the
 * failure is reported once to the {@link #onFailure} listener. The file keeps what reached it before.
 */
public final class PcapWriter implements AutoCloseable {
    /** How old the last flush may be before buffered frames are written out. */
    public static final long FLUSH_INTERVAL_NANOS = 100_000_000L;
    private static final int SNAPLEN = 262_144;
    private final OutputStream raw;
    private final OutputStream out;
    private volatile IOException failure;
    private volatile Consumer<IOException> onFailure;
    private long framesLost;
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
        this.raw = stream;
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
        if (failure != null || closed) {
            framesLost++;
            return;
        }
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
            framesLost++;
            fail(e);
        }
    }

    /** Called once, on the thread whose write or flush failed, when the capture stops on an I/O error. */
    public void onFailure(Consumer<IOException> listener) {
        this.onFailure = listener;
    }

    /** The error that stopped this capture, or null while it writes. */
    public IOException failure() {
        return failure;
    }

    /** Frames tapped but not written because the capture had stopped on an error. */
    public synchronized long framesLost() {
        return framesLost;
    }

    private void fail(IOException e) {
        if (failure != null) {
            return;
        }
        failure = e;
        PcapFlusher.unregister(this);
        Consumer<IOException> l = onFailure;
        if (l != null) {
            l.accept(e);
        }
    }

    public synchronized long frames() {
        return frames;
    }

    /** Writes out every buffered frame now (SIGUSR1, or a test that reads the file); nothing once it failed. */
    public synchronized void flush() throws IOException {
        if (!closed && failure == null) {
            try {
                flushAt(System.nanoTime());
            } catch (IOException e) {
                fail(e);
                throw e;
            }
        }
    }

    /** Flushes frames written since the last flush once that flush is {@link #FLUSH_INTERVAL_NANOS} old. */
    synchronized void flushIfStale(long nowNanos) {
        if (unflushed && !closed && failure == null && nowNanos - lastFlushNanos >= FLUSH_INTERVAL_NANOS) {
            try {
                flushAt(nowNanos);
            } catch (IOException e) {
                fail(e);
            }
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
        if (failure != null) {
            // What is still buffered cannot be written either; close the file without trying again.
            raw.close();
            return;
        }
        out.close();
    }
}
