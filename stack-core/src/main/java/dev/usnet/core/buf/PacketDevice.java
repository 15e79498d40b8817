package dev.usnet.core.buf;

/**
 * What a packet records of the device it arrived on or leaves by (skb->dev). Packets sit below devices (a device
 * handles packets), so the packet names its device by this interface; the device class implements it.
 */
public interface PacketDevice {
    String name();

    int ifindex();
}
