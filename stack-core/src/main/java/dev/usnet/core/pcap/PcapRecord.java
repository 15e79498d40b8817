package dev.usnet.core.pcap;

/** One captured frame: when (nanoseconds since the epoch) and its bytes. */
public record PcapRecord(long timestampNanos, byte[] data, int originalLength) {
    public PcapRecord(long timestampNanos, byte[] data) {
        this(timestampNanos, data, data.length);
    }
}
