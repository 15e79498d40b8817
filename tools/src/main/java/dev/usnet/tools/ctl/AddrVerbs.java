package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.IfAddr;
import dev.usnet.core.ipv6.Inet6Ifaddr;
import dev.usnet.core.ipv6.Inet6Ifaddr.Origin;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.iproute.Ipv6On;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code addr [-6] show|add|del}: addresses as {@code ip addr} shows and changes them. Without {@code -6} both
 * families, each device's IPv4 addresses before its IPv6 ones, as {@code ip -o addr} lists them; with it only IPv6.
 */
final class AddrVerbs {
    private AddrVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("addr [-6] show [dev DEV] | addr add|del A.B.C.D/LEN dev DEV | addr add|del ADDR6/LEN dev DEV [nodad]");
        boolean v6 = a.accept("-6");
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> show(c, a, v6);
            case "add" -> change(c, a, true, v6);
            case "del", "delete" -> change(c, a, false, v6);
            default -> throw a.unexpected(sub);
        };
    }

    private static Reply show(ControlPlane.Call c, Args a, boolean onlyV6) {
        String dev = null;
        if (a.accept("dev")) {
            dev = a.next("device");
        } else if (a.more()) {
            dev = a.next("device");
        }
        a.end();
        NetStack s = c.stack();
        String fDev = dev;
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            Device only = fDev == null ? null : ControlPlane.device(s, fDev);
            List<Map<String, Object>> out = new ArrayList<>();
            if (!onlyV6) {
                for (IfAddr x : only == null ? s.devinet().list() : s.devinet().list(only)) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("ifindex", x.dev().ifindex());
                    m.put("dev", x.dev().name());
                    m.put("family", "inet");
                    m.put("local", Ipv4Addr.format(x.address()));
                    m.put("prefixlen", x.prefixLen());
                    m.put("broadcast", x.broadcast() == 0 ? null : Ipv4Addr.format(x.broadcast()));
                    m.put("secondary", x.secondary());
                    out.add(m);
                }
            }
            for (Inet6Ifaddr x : ipv6InListOrder(only == null ? s.ipv6().addrconf().list() : s.ipv6().addrconf().list(only))) {
                out.add(describe6(x));
            }
            // Stable: within a device, IPv4 before IPv6, each in its own order.
            out.sort(Comparator.comparingInt(p -> (int) p.get("ifindex")));
            return out;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("ifindex")).append(": ").append(m.get("dev")).append("    ");
            if (m.get("family").equals("inet6")) {
                sb.append(m.get("text")).append('\n');
                continue;
            }
            sb.append("inet ").append(m.get("local")).append('/').append(m.get("prefixlen"));
            if (m.get("broadcast") != null) {
                sb.append(" brd ").append(m.get("broadcast"));
            }
            if (Boolean.TRUE.equals(m.get("secondary"))) {
                sb.append(" secondary");
            }
            sb.append('\n');
        }
        return Reply.of(l, sb.toString().stripTrailing());
    }

    /**
     * A device's IPv6 addresses in the order Linux keeps and lists them: by scope, global first, then link, then
     * host; within a scope the newest first (ipv6_link_dev_addr puts a new address before the others of its scope).
     */
    static List<Inet6Ifaddr> ipv6InListOrder(List<Inet6Ifaddr> added) {
        List<Inet6Ifaddr> l = new ArrayList<>(added.reversed());
        l.sort(Comparator.comparingInt(x -> switch (x.scope()) {
            case "global" -> 0;
            case "link" -> 1;
            default -> 2;
        }));
        return l;
    }

    /** One IPv6 address as {@code ip -j -6 addr} keys it, with {@code text}: its {@code inet6 ...} line. */
    static Map<String, Object> describe6(Inet6Ifaddr x) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ifindex", x.dev().ifindex());
        m.put("dev", x.dev().name());
        m.put("family", "inet6");
        m.put("local", x.address().toString());
        m.put("prefixlen", x.prefixLen());
        m.put("scope", x.scope());
        // ::1 is never checked for duplicates, and Linux shows no flag for it.
        m.put("nodad", x.nodad() && !x.address().isLoopback());
        m.put("dadfailed", x.state() == Inet6Ifaddr.DadState.FAILED);
        // A failed address stays tentative in Linux (IFA_F_DADFAILED with IFA_F_TENTATIVE).
        m.put("tentative", x.state() != Inet6Ifaddr.DadState.PREFERRED);
        m.put("origin", x.origin().name().toLowerCase(java.util.Locale.ROOT));
        // iproute2 prints the flags in this order: nodad, dadfailed, tentative.
        StringBuilder t = new StringBuilder("inet6 ").append(x.address()).append('/').append(x.prefixLen())
                .append(" scope ").append(x.scope());
        for (String f : List.of("nodad", "dadfailed", "tentative")) {
            if (Boolean.TRUE.equals(m.get(f))) {
                t.append(' ').append(f);
            }
        }
        m.put("text", t.toString());
        return m;
    }

    private static Reply change(ControlPlane.Call c, Args a, boolean add, boolean v6) {
        String text = a.next(v6 ? "ADDR6/LEN" : "A.B.C.D/LEN");
        if (v6 || text.indexOf(':') >= 0) {
            return change6(c, a, add, text);
        }
        int[] cidr = Args.cidr(text, "address");
        if (!a.accept("dev")) {
            throw new CtlException("addr " + (add ? "add" : "del") + " " + text + ": missing 'dev DEV'");
        }
        String dev = a.next("device");
        a.end();
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, dev);
            if (add) {
                s.devinet().add(d, cidr[0], cidr[1]);
                return Reply.done("added " + text + " to " + s.name() + "/" + dev);
            }
            boolean exact = s.devinet().list(d).stream().anyMatch(x -> x.address() == cidr[0]
                    && (text.indexOf('/') < 0 || x.prefixLen() == cidr[1]));
            if (!exact || !s.devinet().remove(d, cidr[0])) {
                throw new CtlException(text + " is not on " + s.name() + "/" + dev + " (RTNETLINK answers: Cannot assign requested address)");
            }
            return Reply.done("deleted " + text + " from " + s.name() + "/" + dev);
        });
    }

    /**
     * {@code ip -6 addr add|del ADDR[/LEN] dev DEV [nodad]}. An address is the first IPv6 a namespace gets when it
     * has none and IPv6 was never turned on: that turns it on, as the topology file's addresses do. A device whose
     * IPv6 is off otherwise refuses it, as Linux does.
     */
    private static Reply change6(ControlPlane.Call c, Args a, boolean add, String text) {
        if (text.indexOf(':') < 0) {
            throw new CtlException("addr " + (add ? "add" : "del") + " -6 " + text + ": inet6 address is expected rather than \""
                    + text + "\"");
        }
        Args.Cidr6 cidr = Args.cidr6(text, "address");
        String dev = null;
        boolean nodad = false;
        while (a.more()) {
            String w = a.next("setting");
            switch (w) {
                case "dev" -> dev = a.next("device");
                case "nodad" -> nodad = true;
                default -> throw a.unexpected(w);
            }
        }
        if (dev == null) {
            throw new CtlException("addr " + (add ? "add" : "del") + " " + text + ": missing 'dev DEV'");
        }
        if (!add && nodad) {
            throw a.unexpected("nodad");
        }
        if (add && (cidr.addr().isMulticast() || cidr.addr().isUnspecified())) {
            throw new CtlException(cidr.addr() + " cannot be an interface address (RTNETLINK answers: Cannot assign requested address)");
        }
        String fDev = dev;
        boolean fNodad = nodad;
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, fDev);
            if (!add) {
                boolean exact = s.ipv6().addrconf().list(d).stream().anyMatch(x -> x.address().equals(cidr.addr())
                        && (text.indexOf('/') < 0 || x.prefixLen() == cidr.len()));
                if (!exact || !s.ipv6().addrconf().remove(d, cidr.addr())) {
                    throw new CtlException(text + " is not on " + s.name() + "/" + fDev
                            + " (RTNETLINK answers: Cannot assign requested address)");
                }
                return Reply.done("deleted " + text + " from " + s.name() + "/" + fDev);
            }
            if (Ipv6On.neverGiven(s)) {
                Ipv6On.turnOn(s, Set.of());
            }
            if (!s.ipv6().enabled(d)) {
                throw new CtlException("IPv6 is off on " + s.name() + "/" + fDev + " (" + Ipv6On.disableKey(fDev)
                        + " = 1; RTNETLINK answers: Permission denied)");
            }
            Inet6Ifaddr ifa = s.ipv6().addrconf().add(d, cidr.addr(), cidr.len(), Origin.STATIC, fNodad,
                    s.ipv6().runsDad(d));
            return Reply.done("added " + describe6(ifa).get("text") + " to " + s.name() + "/" + fDev);
        });
    }
}
