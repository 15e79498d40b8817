package dev.usnet.core.ipv4;

import dev.usnet.core.device.Device;
import dev.usnet.core.wire.Ipv4Addr;

/** An IPv4 address on a device (in_ifaddr): {@code ADDR/LEN brd B dev DEV}. */
public record IfAddr(Device dev, int address, int prefixLen, int broadcast, boolean secondary) {

    public int network() {
        return address & Ipv4Addr.mask(prefixLen);
    }

    /** True when {@code a} is on this address's subnet (inet_ifa_match). */
    public boolean onLink(int a) {
        return ((a ^ address) & Ipv4Addr.mask(prefixLen)) == 0;
    }

    /** {@code ip addr} syntax. */
    @Override
    public String toString() {
        return Ipv4Addr.format(address) + "/" + prefixLen
                + (broadcast != 0 ? " brd " + Ipv4Addr.format(broadcast) : "")
                + (secondary ? " secondary" : "")
                + " dev " + dev.name();
    }
}
