package dev.usnet.core.route;

import dev.usnet.core.device.Device;
import dev.usnet.core.wire.Ipv4Addr;

/**
 * One entry of a routing table (a fib_alias with its nexthop): {@code PREFIX/LEN [via GW] dev DEV [src S]}.
 * Immutable.
 */
public record Route(int prefix, int prefixLen, RouteType type, int gateway, Device dev, int prefSrc, int metric,
                    boolean connected) implements Dst {

    public Route {
        prefix &= Ipv4Addr.mask(prefixLen);
    }

    /** The address to resolve with ARP for {@code dst}: the gateway, or the destination itself when on-link. */
    public int nextHop(int dst) {
        return gateway != 0 ? gateway : dst;
    }

    public boolean hasGateway() {
        return gateway != 0;
    }

    /** {@code ip route} syntax. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        if (type != RouteType.UNICAST) {
            sb.append(type.name().toLowerCase()).append(' ');
        }
        sb.append(prefixLen == 0 ? "default" : Ipv4Addr.format(prefix) + "/" + prefixLen);
        if (gateway != 0) {
            sb.append(" via ").append(Ipv4Addr.format(gateway));
        }
        if (dev != null) {
            sb.append(" dev ").append(dev.name());
        }
        if (connected) {
            sb.append(" proto kernel scope link");
        }
        if (prefSrc != 0) {
            sb.append(" src ").append(Ipv4Addr.format(prefSrc));
        }
        if (metric != 0) {
            sb.append(" metric ").append(metric);
        }
        return sb.toString();
    }
}
