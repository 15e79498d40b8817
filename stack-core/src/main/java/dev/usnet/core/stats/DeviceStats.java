package dev.usnet.core.stats;

/**
 * Per-device counters as {@code /proc/net/dev} and {@code ip -s link} show them. Written only from the
 * owning namespace's thread; readers on other threads see a recent value.
 */
public final class DeviceStats {
    public volatile long rxPackets;
    public volatile long rxBytes;
    public volatile long rxErrors;
    public volatile long rxDropped;
    public volatile long rxMulticast;
    public volatile long txPackets;
    public volatile long txBytes;
    public volatile long txErrors;
    public volatile long txDropped;

    // The writer is single-threaded, so read-modify-write on volatiles loses nothing.
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public void rx(int bytes, boolean multicast) {
        rxPackets++;
        rxBytes += bytes;
        if (multicast) {
            rxMulticast++;
        }
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public void tx(int bytes) {
        txPackets++;
        txBytes += bytes;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public void rxDrop() {
        rxDropped++;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public void txDrop() {
        txDropped++;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public void rxError() {
        rxErrors++;
    }
}
