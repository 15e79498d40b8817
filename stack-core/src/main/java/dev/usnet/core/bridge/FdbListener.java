package dev.usnet.core.bridge;

import dev.usnet.core.device.Device;

/** Told of a bridge's forwarding-database changes (RTM_NEWNEIGH/RTM_DELNEIGH on AF_BRIDGE); must not block. */
public interface FdbListener {
    /** A bridge learned {@code mac} behind {@code port} (a new entry). */
    default void fdbLearned(Bridge bridge, long mac, Device port) {}

    /** A learned {@code mac} was seen behind another port and moved there. */
    default void fdbMoved(Bridge bridge, long mac, Device from, Device to) {}

    /** A learned entry aged out (ageing_time without a frame from it). */
    default void fdbAged(Bridge bridge, long mac, Device port) {}
}
