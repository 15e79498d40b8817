package dev.usnet.tap;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Driver-side counters of one {@link TapDevice} (what {@code ethtool -S} shows for a NIC): frames moved through
 * the fd and how reads and writes failed. Written by the TAP's event loop only, except {@link #txQueueDrops};
 * readable from any thread. The device's {@code ip -s link} view stays in {@link dev.usnet.core.device.Device#stats()}.
 */
public final class TapStats {
    public volatile long readWakeups;
    public volatile long rxFrames;
    public volatile long rxBytes;
    public volatile long rxGsoFrames;
    public volatile long rxMaxGsoSize;
    public volatile long rxMaxFrame;
    /** Read while the device was down or outside a namespace, too short, or with a bad virtio-net header. */
    public volatile long rxDropped;
    /** A read that filled the whole buffer: the frame may have been longer (kernel MTU above usnet's). */
    public volatile long rxMaybeTruncated;
    public volatile long readErrors;
    public volatile long txFrames;
    public volatile long txBytes;
    public volatile long txGsoFrames;
    public volatile long writeErrors;
    /** Frames refused with EIO because the kernel's side of the TAP was not up (yet); counted, not logged. */
    public volatile long txKernelDown;
    /** write() said EAGAIN: the frame was dropped (TAP writes rarely do this). */
    public volatile long writeEagain;
    /** Frames dropped because the device was closed or gone when their write came up. */
    public volatile long txDropped;
    /** Frames dropped because the hand-over queue to the TAP's event loop was full (like a full qdisc). */
    public final AtomicLong txQueueDrops = new AtomicLong();
    /** GSO super-frames refused because this TAP has no virtio-net header (no software segmentation yet). */
    public final AtomicLong txGsoDropped = new AtomicLong();
    /** Times the kernel side disappeared (0 or 1). */
    public volatile long gone;
    /** errno of the last failed write, 0 if none. */
    public volatile int lastWriteErrno;

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    void rx(int len, int gsoSize) {
        rxFrames++;
        rxBytes += len;
        if (len > rxMaxFrame) {
            rxMaxFrame = len;
        }
        if (gsoSize > 0) {
            rxGsoFrames++;
            if (gsoSize > rxMaxGsoSize) {
                rxMaxGsoSize = gsoSize;
            }
        }
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    void tx(int len, boolean gso) {
        txFrames++;
        txBytes += len;
        if (gso) {
            txGsoFrames++;
        }
    }

    @Override
    public String toString() {
        return "rx " + rxFrames + " frames " + rxBytes + " bytes (gso " + rxGsoFrames + ", max gso_size " + rxMaxGsoSize
                + ", max frame " + rxMaxFrame + ", dropped " + rxDropped + ", read errors " + readErrors + ", wakeups "
                + readWakeups + "), tx " + txFrames + " frames " + txBytes + " bytes (gso " + txGsoFrames
                + ", write errors " + writeErrors + ", kernel side down " + txKernelDown + ", EAGAIN " + writeEagain + ", dropped " + txDropped
                + ", queue drops " + txQueueDrops.get() + ", gso refused " + txGsoDropped.get() + "), gone " + gone;
    }
}
