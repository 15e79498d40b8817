package dev.usnet.core.pcap;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.PacketTap;

/** Captures a device's frames into a pcap file, like {@code tcpdump -i DEV -Q in|out|inout -w FILE}. */
public final class PcapTap implements PacketTap {
    /** Which direction to capture. */
    public enum Direction { IN, OUT, INOUT }

    private final PcapWriter writer;
    private final Direction direction;
    private final long epochOffsetNanos;
    private final long maxFrames;
    private long written;

    /**
     * @param epochOffsetNanos added to the device's clock to make pcap timestamps (virtual time starts at 0;
     *                         real time wants wall-clock epoch nanoseconds)
     */
    public PcapTap(PcapWriter writer, Direction direction, long epochOffsetNanos) {
        this(writer, direction, epochOffsetNanos, Long.MAX_VALUE);
    }

    /** As above, stopping after {@code maxFrames} frames (like {@code tcpdump -c}). */
    public PcapTap(PcapWriter writer, Direction direction, long epochOffsetNanos, long maxFrames) {
        this.writer = writer;
        this.direction = direction;
        this.epochOffsetNanos = epochOffsetNanos;
        this.maxFrames = maxFrames;
    }

    @Override
    public void tap(Device dev, Packet p, boolean transmit, long timeNanos) {
        if (direction == Direction.IN && transmit || direction == Direction.OUT && !transmit) {
            return;
        }
        if (written >= maxFrames) {
            return;
        }
        written++;
        writer.write(timeNanos + epochOffsetNanos, p.buf(), p.start(), p.length());
    }
}
