package dev.usnet.tools.ctl;

import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.iproute.Ip6RouteSyntax;
import dev.usnet.tools.iproute.IpRouteSyntax;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code route [-6] show|get|add|del|replace}: the main table as {@code ip route} shows and changes it, in its syntax;
 * with {@code -6} (or an IPv6 prefix or gateway in the route) the IPv6 one, as {@code ip -6 route} ({@link Route6Verbs}).
 */
final class RouteVerbs {
    private RouteVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("route [-6] show | route [-6] get ADDR | route [-6] add|del|replace [TYPE] PREFIX [via GW] [dev DEV]"
                + " [src S] [metric N]");
        boolean v6 = a.accept("-6");
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> {
                a.end();
                yield v6 ? Route6Verbs.show(c) : show(c);
            }
            case "get" -> v6 ? Route6Verbs.get(c, a) : get(c, a);
            case "add", "replace", "del", "delete", "change" -> {
                String text = rest(sub, a);
                yield v6 || Ip6RouteSyntax.isIpv6(text) ? Route6Verbs.change(c, sub, text) : change(c, sub, text);
            }
            default -> throw a.unexpected(sub);
        };
    }

    private static String rest(String sub, Args a) {
        if (!a.more()) {
            throw new CtlException("route " + sub + ": missing the route (PREFIX|default [via GW] [dev DEV] ...)");
        }
        return a.rest();
    }

    static Map<String, Object> describe(Route r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", r.type().name().toLowerCase(Locale.ROOT));
        m.put("dst", r.prefixLen() == 0 ? "default" : Ipv4Addr.format(r.prefix()) + "/" + r.prefixLen());
        m.put("gateway", r.gateway() == 0 ? null : Ipv4Addr.format(r.gateway()));
        m.put("dev", r.dev() == null ? null : r.dev().name());
        m.put("protocol", r.connected() ? "kernel" : "static");
        m.put("scope", r.connected() ? "link" : "global");
        m.put("prefsrc", r.prefSrc() == 0 ? null : Ipv4Addr.format(r.prefSrc()));
        m.put("metric", r.metric());
        m.put("text", r.toString());
        return m;
    }

    private static Reply show(ControlPlane.Call c) {
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Route r : s.routes().list()) {
                out.add(describe(r));
            }
            return out;
        });
        return Reply.of(l, String.join("\n", l.stream().map(m -> (String) m.get("text")).toList()));
    }

    /** {@code ip route get ADDR}: the route the stack would take and the source it would send from. */
    private static Reply get(ControlPlane.Call c, Args a) {
        String t = a.next("address");
        int dst = Args.ipv4(t, "destination");
        a.end();
        NetStack s = c.stack();
        return c.cp().onLoop(s, () -> {
            Route r = s.devinet().isLocal(dst) ? s.ipOutput().routeOutput(dst) : s.routes().lookup(dst);
            if (r == null || r.type() == RouteType.UNREACHABLE || r.type() == RouteType.PROHIBIT
                    || r.type() == RouteType.BLACKHOLE) {
                String why = r == null ? "Network is unreachable" : switch (r.type()) {
                    case UNREACHABLE -> "No route to host (an unreachable route: " + r + ")";
                    case PROHIBIT -> "Permission denied (a prohibit route: " + r + ")";
                    default -> "Invalid argument (a blackhole route: " + r + ")";
                };
                throw new CtlException("route get " + t + " in " + s.name() + ": RTNETLINK answers: " + why);
            }
            int src = s.ipOutput().sourceFor(r, dst);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("dst", t);
            m.put("gateway", r.gateway() == 0 ? null : Ipv4Addr.format(r.gateway()));
            m.put("dev", r.dev() == null ? null : r.dev().name());
            m.put("prefsrc", src == 0 ? null : Ipv4Addr.format(src));
            m.put("route", describe(r));
            m.put("type", r.type() == RouteType.LOCAL ? "local" : "unicast");
            String text = (r.type() == RouteType.LOCAL ? "local " : "") + t + (r.gateway() != 0 ? " via " + Ipv4Addr.format(r.gateway()) : "") + " dev " + r.dev().name()
                    + (src != 0 ? " src " + Ipv4Addr.format(src) : "") + "\n    (matched " + r + ")";
            return Reply.of(m, text);
        });
    }

    private static Reply change(ControlPlane.Call c, String op, String text) {
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            if (op.equals("del") || op.equals("delete")) {
                return delete(s, text);
            }
            Route r;
            try {
                r = IpRouteSyntax.parse(text, s);
            } catch (IllegalArgumentException e) {
                String m = String.valueOf(e.getMessage());
                throw new CtlException(m.startsWith("route '") ? m : "route '" + text + "': " + m);
            }
            switch (op) {
                case "add" -> {
                    try {
                        s.routes().addNew(r);
                    } catch (IllegalArgumentException e) {
                        throw new CtlException("route '" + text + "': " + e.getMessage());
                    }
                    return Reply.done("added " + r + " in " + s.name());
                }
                case "change" -> {
                    if (s.routes().get(r.prefix(), r.prefixLen()) == null) {
                        throw new CtlException("route '" + text + "': no such route to change (RTNETLINK answers: No such file or directory)");
                    }
                    s.routes().replace(r);
                    return Reply.done("changed to " + r + " in " + s.name());
                }
                default -> {
                    Route old = s.routes().replace(r);
                    return Reply.done((old == null ? "added " : "replaced " + old + " by ") + r + " in " + s.name());
                }
            }
        });
    }

    /** {@code ip route del PREFIX [via GW] [dev DEV]}: the route for PREFIX, which must match what is given. */
    private static Reply delete(NetStack s, String text) {
        String[] t = text.trim().split("\\s+");
        int i = 0;
        if (List.of("unicast", "blackhole", "unreachable", "prohibit").contains(t[0])) {
            i++;
        }
        if (i >= t.length) {
            throw new CtlException("route del '" + text + "': missing prefix");
        }
        int prefix;
        int len;
        if (t[i].equals("default")) {
            prefix = 0;
            len = 0;
        } else {
            int[] p = Args.cidr(t[i], "prefix");
            prefix = p[0];
            len = p[1];
            if ((prefix & ~Ipv4Addr.mask(len)) != 0) {
                throw new CtlException("route del '" + text + "': " + t[i] + " has host bits set (Invalid prefix for given prefix length)");
            }
        }
        Route r = s.routes().get(prefix, len);
        if (r == null) {
            throw new CtlException("route del '" + text + "': no such route in " + s.name() + " (RTNETLINK answers: No such process)");
        }
        for (int k = i + 1; k + 1 < t.length; k += 2) {
            String v = t[k + 1];
            boolean matches = switch (t[k]) {
                case "via" -> r.gateway() == Args.ipv4(v, "gateway");
                case "dev" -> r.dev() != null && r.dev().name().equals(v);
                case "metric", "preference" -> String.valueOf(r.metric()).equals(v);
                case "src" -> r.prefSrc() == Args.ipv4(v, "src");
                case "proto", "scope" -> true;
                default -> throw new CtlException("route del '" + text + "': unknown keyword '" + t[k] + "'");
            };
            if (!matches) {
                throw new CtlException("route del '" + text + "': the route for that prefix is '" + r + "' (RTNETLINK answers: No such process)");
            }
        }
        s.routes().remove(prefix, len);
        return Reply.done("deleted " + r + " in " + s.name());
    }
}
