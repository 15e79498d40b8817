package dev.usnet.core.route;

import dev.usnet.core.device.Device;
import dev.usnet.core.wire.Ipv6Addr;

/**
 * One entry of an IPv6 routing table (a fib6_info with its nexthop): {@code PREFIX/LEN [via GW] dev DEV metric M}.
 * {@code gateway} is null for an on-link route. Immutable; the prefix is stored masked to its length.
 */
public record Route6(Ipv6Addr prefix, int prefixLen, RouteType type, Ipv6Addr gateway, Device dev, int metric,
                     boolean connected) implements Dst {
    /** The metric {@code ip -6 route add} gives a route that names none (IP6_RT_PRIO_USER). */
    public static final int METRIC_USER = 1024;
    /** The metric of the routes addresses create (IP6_RT_PRIO_ADDRCONF). */
    public static final int METRIC_ADDRCONF = 256;

    public Route6 {
        if (prefixLen < 0 || prefixLen > 128) {
            throw new IllegalArgumentException("IPv6 prefix length " + prefixLen + " is not within 0-128");
        }
        prefix = prefix.prefix(prefixLen);
    }

    public boolean hasGateway() {
        return gateway != null;
    }

    /** The high half of the address to resolve with neighbour discovery for {@code dstHi}/{@code dstLo}. */
    public long nextHopHi(long dstHi) {
        return gateway != null ? gateway.hi() : dstHi;
    }

    /** The low half of the next hop, as {@link #nextHopHi}. */
    public long nextHopLo(long dstLo) {
        return gateway != null ? gateway.lo() : dstLo;
    }

    /** {@code ip -6 route} syntax. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        if (type != RouteType.UNICAST) {
            sb.append(type.name().toLowerCase()).append(' ');
        }
        sb.append(prefixLen == 0 ? "default" : prefix + "/" + prefixLen);
        if (gateway != null) {
            sb.append(" via ").append(gateway);
        }
        if (dev != null) {
            sb.append(" dev ").append(dev.name());
        }
        if (connected) {
            sb.append(" proto kernel");
        }
        sb.append(" metric ").append(metric);
        return sb.toString();
    }
}
