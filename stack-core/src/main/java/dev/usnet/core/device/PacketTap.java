package dev.usnet.core.device;

import dev.usnet.core.buf.Packet;

/**
 * Sees every frame a device receives or transmits, like an AF_PACKET socket (tcpdump). It must not keep
 * the packet: copy what it needs before returning.
 */
public interface PacketTap {
    void tap(Device dev, Packet p, boolean transmit, long timeNanos);
}
