package dev.usnet.tools.ctl;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.PacketTap;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.pcap.PcapWriter;
import java.io.IOException;
import java.io.OutputStream;

/**
 * A capture streamed to a control client ({@code capture start NS/DEV -}): the pcap file's bytes go down the
 * client's connection, flushed a frame at a time as {@code tcpdump -U -w -} writes them, so that
 * {@code usnet ctl capture start host/br0 - | tcpdump -r - -n} and {@code wireshark -k -i -} show frames live.
 *
 * <p>A client that does not keep up loses frames rather than holding the data path back or piling them up in
 * the daemon: a frame tapped while its connection's buffer is full is counted in {@link #dropped()}, as the
 * kernel counts frames a slow tcpdump's socket had no room for ("dropped by kernel").
 */
final class CaptureStream implements PacketTap {
    /** Where the bytes go: the client's connection. Called from the device's event loop. */
    interface Sink {
        /** Whether a frame written now would be queued without exceeding the connection's high-water mark. */
        boolean writable();

        /** Queues bytes for the client; must copy them (the writer reuses its arrays). */
        void write(byte[] b, int off, int len);

        /** The capture is over (its count reached, its device deleted, the daemon stopping): hang up. */
        void end();
    }

    private final String where;
    private final Device dev;
    private final PcapTap.Direction direction;
    private final long maxFrames;
    private final long epochOffsetNanos;
    private final Sink sink;
    private final PcapWriter writer;
    private long frames;
    private volatile long dropped;
    private volatile boolean ended;

    /** Writes the pcap file header into {@code sink} now; frames follow once {@link #attach} is called. */
    CaptureStream(String where, Device dev, PcapTap.Direction direction, long maxFrames, long epochOffsetNanos, Sink sink)
            throws IOException {
        this.where = where;
        this.dev = dev;
        this.direction = direction;
        this.maxFrames = maxFrames;
        this.epochOffsetNanos = epochOffsetNanos;
        this.sink = sink;
        this.writer = new PcapWriter(new OutputStream() {
            @Override
            public void write(int b) {
                sink.write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                sink.write(b, off, len);
            }
        });
    }

    void attach() {
        dev.addTap(this);
    }

    String where() {
        return where;
    }

    Device device() {
        return dev;
    }

    PcapTap.Direction direction() {
        return direction;
    }

    synchronized long frames() {
        return frames;
    }

    long dropped() {
        return dropped;
    }

    @Override
    public void tap(Device d, Packet p, boolean transmit, long timeNanos) {
        if (ended || direction == PcapTap.Direction.IN && transmit || direction == PcapTap.Direction.OUT && !transmit) {
            return;
        }
        if (!sink.writable()) {
            dropped++;
            return;
        }
        boolean last;
        synchronized (this) {
            writer.write(timeNanos + epochOffsetNanos, p.buf(), p.start(), p.length());
            try {
                writer.flush();
            } catch (IOException e) {
                end();
                return;
            }
            last = ++frames >= maxFrames;
        }
        if (last) {
            end();
        }
    }

    /** Stops tapping, writes out what is buffered and hangs up; once. */
    void end() {
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
        }
        dev.removeTap(this);
        try {
            writer.close();
        } catch (IOException e) {
            // The client went away: nothing is left to tell it.
        }
        sink.end();
    }

    boolean ended() {
        return ended;
    }
}
