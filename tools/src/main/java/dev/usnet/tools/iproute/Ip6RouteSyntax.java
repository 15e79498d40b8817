package dev.usnet.tools.iproute;

import dev.usnet.core.device.Device;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;

/**
 * Parses routes in {@code ip -6 route} syntax: {@code [TYPE] PREFIX|default [via GW] [dev DEV] [metric N] [pref
 * medium]}, TYPE one of unicast, blackhole, unreachable, prohibit. As Linux: a route that names no metric gets 1024,
 * a route of another type goes through lo, a link-local gateway needs its device, a global one must be on a network
 * the namespace is on. Unlike Linux, a prefix with host bits set is refused rather than quietly cut to its length.
 */
public final class Ip6RouteSyntax {
    private Ip6RouteSyntax() {}

    /**
     * Whether {@code text} is an IPv6 route: its prefix is an IPv6 address, or it is {@code default} with an IPv6
     * gateway. Everything else ({@code default dev eth0} too) is IPv4, as {@code ip route} without {@code -6} takes it.
     */
    public static boolean isIpv6(String text) {
        String[] t = text.trim().split("\\s+");
        int i = RouteTypeWord.of(t[0]) == null ? 0 : 1;
        if (i >= t.length) {
            return false;
        }
        if (!t[i].equals("default")) {
            return t[i].indexOf(':') >= 0;
        }
        for (int k = i + 1; k + 1 < t.length; k++) {
            if (t[k].equals("via")) {
                return t[k + 1].indexOf(':') >= 0;
            }
        }
        return false;
    }

    public static Route6 parse(String text, NetStack stack) {
        String[] t = text.trim().split("\\s+");
        RouteType named = RouteTypeWord.of(t[0]);
        RouteType type = named == null ? RouteType.UNICAST : named;
        int i = named == null ? 0 : 1;
        if (i >= t.length) {
            throw new IllegalArgumentException("route '" + text + "': missing prefix");
        }
        Prefix p = prefix(t[i++], text);
        Ipv6Addr gw = null;
        Device dev = null;
        int metric = Route6.METRIC_USER;
        while (i < t.length) {
            String k = t[i++];
            if (i >= t.length) {
                throw new IllegalArgumentException("route '" + text + "': '" + k + "' needs a value");
            }
            String v = t[i++];
            switch (k) {
                case "via" -> gw = gateway(v, text);
                case "dev", "oif" -> dev = stack.requireDevice(v);
                case "metric", "preference", "priority" -> {
                    int m = metric(v, text);
                    // Linux: metric 0 is the user default (IP6_RT_PRIO_USER).
                    metric = m == 0 ? Route6.METRIC_USER : m;
                }
                case "pref" -> {
                    if (!v.equals("medium")) {
                        throw new IllegalArgumentException("route '" + text + "': 'pref " + v + "' is not modelled (usnet"
                                + " routes are all pref medium, Linux's default)");
                    }
                }
                case "proto", "scope" -> { }
                case "src" -> throw new IllegalArgumentException("route '" + text + "': 'src' is not supported for IPv6"
                        + " routes yet (the source is chosen by the RFC 6724 rules)");
                default -> throw new IllegalArgumentException("route '" + text + "': unknown keyword '" + k
                        + "' (expected via, dev, metric)");
            }
        }
        if (type != RouteType.UNICAST) {
            if (gw != null) {
                throw new IllegalArgumentException("route '" + text + "': " + (type == RouteType.UNREACHABLE ? "an " : "a ")
                        + type.name().toLowerCase(java.util.Locale.ROOT) + " route has no gateway");
            }
            // Linux gives a route that rejects or drops the loopback as its device (ip -6 route shows 'dev lo').
            return new Route6(p.addr(), p.len(), type, null, stack.loopback(), metric, false);
        }
        if (gw != null) {
            dev = checkGateway(gw, dev, stack, text);
        }
        if (dev == null) {
            throw new IllegalArgumentException("route '" + text + "': needs 'dev DEV' or 'via GW'");
        }
        return new Route6(p.addr(), p.len(), type, gw, dev, metric, false);
    }

    /** A prefix and its length. */
    public record Prefix(Ipv6Addr addr, int len) {}

    /** {@code default}, {@code ADDR} (a /128) or {@code ADDR/LEN} without host bits. */
    public static Prefix prefix(String p, String text) {
        if (p.equals("default")) {
            return new Prefix(Ipv6Addr.ANY, 0);
        }
        int slash = p.indexOf('/');
        String a = slash < 0 ? p : p.substring(0, slash);
        if (a.indexOf(':') < 0) {
            throw new IllegalArgumentException("route '" + text + "': inet6 prefix is expected rather than \"" + p + "\"");
        }
        Ipv6Addr addr;
        try {
            addr = Ipv6Addr.parse(a);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route '" + text + "': " + e.getMessage());
        }
        int len = 128;
        if (slash >= 0) {
            String l = p.substring(slash + 1);
            if (!l.matches("[0-9]{1,3}") || Integer.parseInt(l) > 128) {
                throw new IllegalArgumentException("route '" + text + "': prefix length '" + l + "' is not 0..128");
            }
            len = Integer.parseInt(l);
        }
        if (!addr.prefix(len).equals(addr)) {
            throw new IllegalArgumentException("route '" + text + "': " + p + " has host bits set (the prefix is "
                    + addr.prefix(len) + "/" + len + "; Linux would cut it there without a word)");
        }
        return new Prefix(addr, len);
    }

    private static Ipv6Addr gateway(String v, String text) {
        if (v.indexOf(':') < 0) {
            throw new IllegalArgumentException("route '" + text + "': gateway " + v + " is not an IPv6 address, and an IPv6"
                    + " route needs an IPv6 gateway (Linux: inet6 address is expected rather than \"" + v + "\")");
        }
        Ipv6Addr gw;
        try {
            gw = Ipv6Addr.parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("route '" + text + "': " + e.getMessage());
        }
        if (gw.isMulticast() || gw.isUnspecified() || gw.isLoopback()) {
            throw new IllegalArgumentException("route '" + text + "': gateway " + gw + " is not a unicast address of a"
                    + " neighbour (Nexthop has invalid gateway)");
        }
        return gw;
    }

    /**
     * What Linux asks of a gateway (ip6_validate_gw): a link-local one names its device, since every device has
     * fe80::/64; a global one is on a network the namespace reaches without a gateway, through {@code dev} when given;
     * none is one of the namespace's own addresses. The device the route goes out of.
     */
    private static Device checkGateway(Ipv6Addr gw, Device dev, NetStack stack, String text) {
        if (stack.ipv6().addrconf().local(gw.hi(), gw.lo()) != null) {
            throw new IllegalArgumentException("route '" + text + "': gateway " + gw + " is an address of this namespace"
                    + " (Gateway can not be a local address)");
        }
        if (gw.isLinkLocal()) {
            if (dev == null) {
                throw new IllegalArgumentException("route '" + text + "': gateway " + gw + " is link-local, so the route"
                        + " needs 'dev DEV' to say which link (Egress device not specified)");
            }
            return dev;
        }
        Route6 toGw = stack.ipv6().fib().lookup(gw.hi(), gw.lo(), dev);
        if (toGw == null || toGw.hasGateway() || toGw.type() != RouteType.UNICAST) {
            throw new IllegalArgumentException("route '" + text + "': gateway " + gw + " is not on a connected network"
                    + (dev == null ? "" : " of " + dev.name()) + " (Nexthop has invalid gateway)");
        }
        return dev != null ? dev : toGw.dev();
    }

    private static int metric(String v, String text) {
        try {
            long m = Long.parseLong(v);
            if (m < 0 || m > 0xffffffffL) {
                throw new NumberFormatException();
            }
            return (int) Math.min(m, Integer.MAX_VALUE);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("route '" + text + "': metric '" + v + "' is not 0..4294967295");
        }
    }
}
