package dev.usnet.core.ipv4;

import dev.usnet.core.device.Device;

/**
 * Told when an IPv4 address leaves a device (the inetaddr notifier chain's NETDEV_DOWN): what depends on the address
 * (NAT's masqueraded connections) lets go of it. Called on the namespace's thread, after the address is gone.
 */
@FunctionalInterface
public interface InetAddrListener {
    void addressRemoved(Device dev, int address);
}
