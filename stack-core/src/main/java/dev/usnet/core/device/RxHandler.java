package dev.usnet.core.device;

import dev.usnet.core.buf.Packet;

/**
 * A hook that takes a device's received frames before the protocol stack does, as Linux's rx_handler
 * (how a bridge port hands frames to its bridge).
 */
public interface RxHandler {
    /** Returns true when the handler took ownership of the packet. */
    boolean handleFrame(Device dev, Packet p);
}
