package dev.usnet.tools.iproute;

import dev.usnet.core.device.Device;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;

/**
 * Parses routes in {@code ip route} syntax: {@code [TYPE] PREFIX|default [via GW] [dev DEV] [src S]
 * [metric N]}, TYPE one of unicast, blackhole, unreachable, prohibit.
 */
public final class IpRouteSyntax {
    private IpRouteSyntax() {}

    public static Route parse(String text, NetStack stack) {
        String[] t = text.trim().split("\\s+");
        RouteType named = RouteTypeWord.of(t[0]);
        RouteType type = named == null ? RouteType.UNICAST : named;
        int i = named == null ? 0 : 1;
        if (i >= t.length) {
            throw new IllegalArgumentException("route '" + text + "': missing prefix");
        }
        int prefix;
        int len;
        String p = t[i++];
        if (p.equals("default")) {
            prefix = 0;
            len = 0;
        } else {
            int slash = p.indexOf('/');
            if (p.indexOf(':') >= 0) {
                throw new IllegalArgumentException("route '" + text + "': " + p + " is an IPv6 prefix where an IPv4 one is"
                        + " expected");
            }
            prefix = Ipv4Addr.parse(slash < 0 ? p : p.substring(0, slash));
            len = slash < 0 ? 32 : parseLen(p.substring(slash + 1), text);
            if ((prefix & ~Ipv4Addr.mask(len)) != 0) {
                throw new IllegalArgumentException("route '" + text + "': " + p + " has host bits set (Invalid prefix for given prefix length)");
            }
        }
        int gw = 0;
        Device dev = null;
        int src = 0;
        int metric = 0;
        while (i < t.length) {
            String k = t[i++];
            if (i >= t.length) {
                throw new IllegalArgumentException("route '" + text + "': '" + k + "' needs a value");
            }
            String v = t[i++];
            switch (k) {
                case "via" -> {
                    if (v.indexOf(':') >= 0) {
                        throw new IllegalArgumentException("route '" + text + "': gateway " + v + " is an IPv6 address,"
                                + " and an IPv4 route needs an IPv4 gateway (Linux's 'via inet6' is not modelled)");
                    }
                    gw = Ipv4Addr.parse(v);
                }
                case "dev" -> dev = stack.requireDevice(v);
                case "src" -> src = Ipv4Addr.parse(v);
                case "metric", "preference" -> metric = Integer.parseInt(v);
                case "proto", "scope" -> { }
                default -> throw new IllegalArgumentException("route '" + text + "': unknown keyword '" + k
                        + "' (expected via, dev, src, metric)");
            }
        }
        if (type == RouteType.UNICAST) {
            if (dev == null && gw != 0) {
                Route toGw = stack.routes().lookup(gw);
                if (toGw == null || toGw.hasGateway()) {
                    throw new IllegalArgumentException("route '" + text + "': gateway " + Ipv4Addr.format(gw)
                            + " is not on a connected network (Nexthop has invalid gateway)");
                }
                dev = toGw.dev();
            }
            if (dev == null) {
                throw new IllegalArgumentException("route '" + text + "': needs 'dev DEV' or 'via GW'");
            }
        }
        return new Route(prefix, len, type, gw, dev, src, metric, false);
    }

    private static int parseLen(String s, String text) {
        try {
            int n = Integer.parseInt(s);
            if (n < 0 || n > 32) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("route '" + text + "': prefix length '" + s + "' is not 0..32");
        }
    }
}
