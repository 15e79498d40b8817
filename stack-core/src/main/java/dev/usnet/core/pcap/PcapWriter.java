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
 */
public final class PcapWriter implements AutoCloseable {
    private static final int SNAPLEN = 262_144;
    private final OutputStream out;
    private final byte[] recordHeader = new byte[16];
    private final ByteBuffer rh = ByteBuffer.wrap(recordHeader).order(ByteOrder.LITTLE_ENDIAN);
    private byte[] scratch = new byte[2048];
    private long frames;

    public PcapWriter(Path file) throws IOException {
        this(Files.newOutputStream(file));
    }

    public PcapWriter(OutputStream stream) throws IOException {
        this.out = new BufferedOutputStream(stream, 1 << 16);
        ByteBuffer h = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        h.putInt(PcapReader.MAGIC_USEC).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0)
                .putInt(SNAPLEN).putInt(PcapReader.LINKTYPE_ETHERNET);
        out.write(h.array());
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
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        frames++;
    }

    public synchronized long frames() {
        return frames;
    }

    public synchronized void flush() throws IOException {
        out.flush();
    }

    @Override
    public synchronized void close() throws IOException {
        out.close();
    }
}
