package dev.usnet.tools.ctl;

import dev.usnet.core.ipv6.Inet6Ifaddr;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.iproute.Ip6RouteSyntax;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code route -6 show|get|add|del|replace|change}: the IPv6 main table as {@code ip -6 route} shows and changes it. */
final class Route6Verbs {
    private Route6Verbs() {}

    /**
     * The order {@code ip -6 route} lists routes in, a walk of Linux's prefix tree: by address, a more specific prefix
     * before the one that covers it (so {@code default} comes last), then by metric.
     */
    static final Comparator<Route6> LISTING = (x, y) -> {
        int len = Math.min(x.prefixLen(), y.prefixLen());
        int c = x.prefix().prefix(len).compareTo(y.prefix().prefix(len));
        if (c != 0) {
            return c;
        }
        return x.prefixLen() != y.prefixLen() ? Integer.compare(y.prefixLen(), x.prefixLen())
                : Integer.compare(x.metric(), y.metric());
    };

    /** A prefix as {@code ip -6 route} writes it: {@code default}, an address alone for a /128, else ADDR/LEN. */
    static String dst(Ipv6Addr prefix, int len) {
        return len == 0 ? "default" : len == 128 ? prefix.toString() : prefix + "/" + len;
    }

    /** One route as {@code ip -j -6 route} keys it, with {@code text}: its {@code ip -6 route} line. */
    static Map<String, Object> describe(Route6 r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", r.type().name().toLowerCase(Locale.ROOT));
        m.put("dst", dst(r.prefix(), r.prefixLen()));
        m.put("gateway", r.gateway() == null ? null : r.gateway().toString());
        m.put("dev", r.dev() == null ? null : r.dev().name());
        m.put("protocol", r.connected() ? "kernel" : "boot");
        m.put("metric", r.metric());
        m.put("pref", "medium");
        StringBuilder t = new StringBuilder();
        if (r.type() != RouteType.UNICAST) {
            t.append(m.get("type")).append(' ');
        }
        t.append(m.get("dst"));
        if (r.gateway() != null) {
            t.append(" via ").append(r.gateway());
        }
        if (r.dev() != null) {
            t.append(" dev ").append(r.dev().name());
        }
        if (r.connected()) {
            t.append(" proto kernel");
        }
        t.append(" metric ").append(r.metric()).append(" pref medium");
        m.put("text", t.toString());
        return m;
    }

    /** The routes in listing order; routes of one prefix and metric newest first, as a fib6 node's leaves are. */
    static List<Route6> listed(NetStack s) {
        List<Route6> l = new ArrayList<>(s.ipv6().fib().list().reversed());
        l.sort(LISTING);
        return l;
    }

    static Reply show(ControlPlane.Call c) {
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Route6 r : listed(s)) {
                out.add(describe(r));
            }
            return out;
        });
        return Reply.of(l, String.join("\n", l.stream().map(m -> (String) m.get("text")).toList()));
    }

    /**
     * {@code ip -6 route get ADDR}: the route the namespace would take and the source it would choose, in the line
     * {@code ip -6 route get} prints, with the matched route below it.
     */
    static Reply get(ControlPlane.Call c, Args a) {
        String t = a.next("address");
        Ipv6Addr dst = Args.ipv6(t, "destination");
        a.end();
        NetStack s = c.stack();
        return c.cp().onLoop(s, () -> {
            if (s.ipv6().addrconf().local(dst.hi(), dst.lo()) != null) {
                // One of the namespace's own addresses: Linux answers from its local table, through lo.
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("type", "local");
                m.put("dst", dst.toString());
                m.put("dev", "lo");
                m.put("prefsrc", dst.toString());
                return Reply.of(m, "local " + dst + " from :: dev lo table local proto kernel src " + dst + " metric 0 pref medium");
            }
            Route6 r = s.ipv6().fib().lookup(dst.hi(), dst.lo());
            if (r == null || r.type() != RouteType.UNICAST) {
                String why = r == null ? "Network is unreachable" : switch (r.type()) {
                    case UNREACHABLE -> "Network is unreachable (an unreachable route: " + describe(r).get("text") + ")";
                    case PROHIBIT -> "Permission denied (a prohibit route: " + describe(r).get("text") + ")";
                    default -> "Invalid argument (a blackhole route: " + describe(r).get("text") + ")";
                };
                throw new CtlException("route get " + t + " in " + s.name() + ": RTNETLINK answers: " + why);
            }
            Inet6Ifaddr src = s.ipv6().addrconf().selectSource(r.dev(), dst.hi(), dst.lo());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("type", "unicast");
            m.put("dst", dst.toString());
            m.put("gateway", r.gateway() == null ? null : r.gateway().toString());
            m.put("dev", r.dev().name());
            m.put("prefsrc", src == null ? null : src.address().toString());
            m.put("route", describe(r));
            String text = dst + " from ::" + (r.gateway() != null ? " via " + r.gateway() : "") + " dev " + r.dev().name()
                    + (r.connected() ? " proto kernel" : "") + (src != null ? " src " + src.address() : "") + " metric " + r.metric() + " pref medium\n    (matched "
                    + describe(r).get("text") + ")";
            return Reply.of(m, text);
        });
    }

    static Reply change(ControlPlane.Call c, String op, String text) {
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            if (op.equals("del") || op.equals("delete")) {
                return delete(s, text);
            }
            Route6 r;
            try {
                r = Ip6RouteSyntax.parse(text, s);
            } catch (IllegalArgumentException e) {
                String m = String.valueOf(e.getMessage());
                throw new CtlException(m.startsWith("route '") ? m : "route '" + text + "': " + m);
            }
            String shown = (String) describe(r).get("text");
            switch (op) {
                case "add" -> {
                    try {
                        s.ipv6().fib().addNew(r);
                    } catch (IllegalArgumentException e) {
                        throw new CtlException("route '" + text + "': " + e.getMessage());
                    }
                    return Reply.done("added " + shown + " in " + s.name());
                }
                case "change" -> {
                    if (s.ipv6().fib().getAll(r.prefix(), r.prefixLen()).stream().noneMatch(o -> o.metric() == r.metric())) {
                        throw new CtlException("route '" + text + "': no such route to change (RTNETLINK answers: No such file or directory)");
                    }
                    s.ipv6().fib().replace(r);
                    return Reply.done("changed to " + shown + " in " + s.name());
                }
                default -> {
                    Route6 old = s.ipv6().fib().replace(r);
                    return Reply.done((old == null ? "added " : "replaced " + describe(old).get("text") + " by ") + shown
                            + " in " + s.name());
                }
            }
        });
    }

    /** {@code ip -6 route del PREFIX [via GW] [dev DEV] [metric N]}: the first route of PREFIX matching what is given. */
    private static Reply delete(NetStack s, String text) {
        String[] t = text.trim().split("\\s+");
        int i = List.of("unicast", "blackhole", "unreachable", "prohibit").contains(t[0]) ? 1 : 0;
        if (i >= t.length) {
            throw new CtlException("route del '" + text + "': missing prefix");
        }
        Ip6RouteSyntax.Prefix p;
        try {
            p = Ip6RouteSyntax.prefix(t[i], text);
        } catch (IllegalArgumentException e) {
            throw new CtlException(e.getMessage());
        }
        if ((t.length - i - 1) % 2 != 0) {
            throw new CtlException("route del '" + text + "': '" + t[t.length - 1] + "' needs a value");
        }
        List<Route6> candidates = s.ipv6().fib().getAll(p.addr(), p.len());
        if (candidates.isEmpty()) {
            throw new CtlException("route del '" + text + "': no such route in " + s.name() + " (RTNETLINK answers: No such process)");
        }
        for (Route6 r : candidates) {
            boolean matches = true;
            for (int k = i + 1; k + 1 < t.length; k += 2) {
                String v = t[k + 1];
                matches &= switch (t[k]) {
                    case "via" -> r.gateway() != null && r.gateway().equals(Args.ipv6(v, "gateway"));
                    case "dev" -> r.dev() != null && r.dev().name().equals(v);
                    case "metric", "preference", "priority" -> String.valueOf(r.metric()).equals(v);
                    case "proto", "scope", "pref" -> true;
                    default -> throw new CtlException("route del '" + text + "': unknown keyword '" + t[k] + "'");
                };
            }
            if (matches) {
                if (r.dev() != null) {
                    s.ipv6().fib().remove(r.prefix(), r.prefixLen(), r.dev());
                } else {
                    s.ipv6().fib().remove(r.prefix(), r.prefixLen());
                }
                return Reply.done("deleted " + describe(r).get("text") + " in " + s.name());
            }
        }
        throw new CtlException("route del '" + text + "': the routes for that prefix are '" + String.join("', '",
                candidates.stream().map(r -> (String) describe(r).get("text")).toList()) + "' (RTNETLINK answers: No such process)");
    }
}
