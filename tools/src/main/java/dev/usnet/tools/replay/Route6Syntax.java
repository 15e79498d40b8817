package dev.usnet.tools.replay;

import dev.usnet.core.device.Device;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;

/**
 * An IPv6 route of a fixture's {@code router.routes} in {@code ip -6 route} syntax:
 * {@code [unicast|unreachable|prohibit|blackhole] PREFIX|default [via GW] [dev DEV] [metric N]}. A unicast route
 * needs a device or a gateway on a connected prefix; the special types need neither.
 */
final class Route6Syntax {
    private Route6Syntax() {}

    /** Whether {@code spec} names an IPv6 destination (its prefix has a colon). */
    static boolean isIpv6(String spec) {
        for (String w : spec.trim().split("\\s+")) {
            if (w.equals("unicast") || w.equals("unreachable") || w.equals("prohibit") || w.equals("blackhole")) {
                continue;
            }
            return w.indexOf(':') >= 0;
        }
        return false;
    }

    static Route6 parse(String spec, NetStack ns) {
        String[] w = spec.trim().split("\\s+");
        int i = 0;
        RouteType type = RouteType.UNICAST;
        switch (w[0]) {
            case "unicast" -> i++;
            case "unreachable" -> {
                type = RouteType.UNREACHABLE;
                i++;
            }
            case "prohibit" -> {
                type = RouteType.PROHIBIT;
                i++;
            }
            case "blackhole" -> {
                type = RouteType.BLACKHOLE;
                i++;
            }
            default -> { }
        }
        if (i >= w.length) {
            throw new IllegalArgumentException("'" + spec + "': no destination prefix");
        }
        String dst = w[i++];
        Ipv6Addr prefix;
        int len;
        if (dst.equals("default")) {
            prefix = Ipv6Addr.ANY;
            len = 0;
        } else {
            int slash = dst.indexOf('/');
            prefix = Ipv6Addr.parse(slash < 0 ? dst : dst.substring(0, slash));
            try {
                len = slash < 0 ? 128 : Integer.parseInt(dst.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + spec + "': bad prefix length in '" + dst + "'");
            }
        }
        Ipv6Addr gw = null;
        Device dev = null;
        int metric = Route6.METRIC_USER;
        while (i < w.length) {
            String k = w[i++];
            if (i >= w.length) {
                throw new IllegalArgumentException("'" + spec + "': '" + k + "' needs a value");
            }
            String v = w[i++];
            switch (k) {
                case "via" -> gw = Ipv6Addr.parse(v);
                case "dev" -> dev = ns.requireDevice(v);
                case "metric" -> {
                    try {
                        metric = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("'" + spec + "': metric '" + v + "' is not a number");
                    }
                }
                default -> throw new IllegalArgumentException("'" + spec + "': unknown word '" + k
                        + "' (expected via, dev or metric)");
            }
        }
        if (type == RouteType.UNICAST) {
            if (dev == null && gw != null) {
                var onLink = ns.ipv6().fib().lookup(gw.hi(), gw.lo());
                if (onLink == null || onLink.hasGateway()) {
                    throw new IllegalArgumentException("'" + spec + "': gateway " + gw + " is not on a connected prefix");
                }
                dev = onLink.dev();
            }
            if (dev == null) {
                throw new IllegalArgumentException("'" + spec + "': a unicast route needs 'dev' or 'via'");
            }
        } else {
            dev = ns.loopback();
        }
        return new Route6(prefix, len, type, gw, dev, metric, false);
    }
}
