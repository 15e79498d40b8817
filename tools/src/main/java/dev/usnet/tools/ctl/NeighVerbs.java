package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.NeighTable;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code neigh show|add|replace|del|flush}: the neighbour tables as {@code ip neigh} shows and changes them — ARP's,
 * or with {@code -6} (or an IPv6 address) neighbour discovery's.
 */
final class NeighVerbs {
    private NeighVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("neigh [-6] show [dev DEV] | neigh add|replace IP lladdr MAC dev DEV | neigh del IP dev DEV"
                + " | neigh [-6] flush [dev DEV]");
        boolean v6 = a.accept("-6") || (List.of("add", "replace", "del", "delete").contains(String.valueOf(a.peek()))
                && c.words().size() > 2 && c.words().get(2).indexOf(':') >= 0);
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> show(c, a, v6);
            case "add", "replace" -> add(c, a, v6);
            case "del", "delete" -> del(c, a, v6);
            case "flush" -> flush(c, a, v6);
            default -> throw a.unexpected(sub);
        };
    }

    /** The table of the family asked for: ARP's (arp_tbl) or neighbour discovery's (nd_tbl). */
    private static NeighTable table(NetStack s, boolean v6) {
        return v6 ? s.ipv6().neigh() : s.neigh();
    }

    /** The address as the table keys it: an IPv4 address in the low 32 bits, an IPv6 one as its two halves. */
    private static long[] address(String text, boolean v6) {
        if (v6) {
            try {
                Ipv6Addr x = Ipv6Addr.parse(text);
                if (x.isMulticast() || x.isUnspecified()) {
                    throw new CtlException("neighbour " + text + ": a neighbour entry is for one unicast address");
                }
                return new long[] {x.hi(), x.lo()};
            } catch (IllegalArgumentException e) {
                throw new CtlException("neighbour: " + e.getMessage());
            }
        }
        return new long[] {0, Args.ipv4(text, "neighbour") & 0xffff_ffffL};
    }

    static Map<String, Object> describe(Neighbour n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dst", n.address());
        m.put("dev", n.dev().name());
        m.put("lladdr", n.state().valid() ? MacAddr.format(n.mac()) : null);
        m.put("state", n.state().display());
        m.put("queued", n.queued());
        return m;
    }

    private static String devArg(Args a) {
        String dev = null;
        if (a.accept("dev")) {
            dev = a.next("device");
        }
        a.end();
        return dev;
    }

    private static Reply show(ControlPlane.Call c, Args a, boolean v6) {
        String dev = devArg(a);
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            Device d = dev == null ? null : ControlPlane.device(s, dev);
            List<Map<String, Object>> out = new ArrayList<>();
            for (Neighbour n : table(s, v6).list()) {
                if (d == null || n.dev() == d) {
                    out.add(describe(n));
                }
            }
            return out;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("dst")).append(" dev ").append(m.get("dev"));
            if (m.get("lladdr") != null) {
                sb.append(" lladdr ").append(m.get("lladdr"));
            }
            sb.append(' ').append(m.get("state"));
            if (!m.get("queued").equals(0)) {
                sb.append(" (").append(m.get("queued")).append(" queued)");
            }
            sb.append('\n');
        }
        return Reply.of(l, sb.toString().stripTrailing());
    }

    private static Reply add(ControlPlane.Call c, Args a, boolean v6) {
        String ipText = a.next("IP");
        long[] ip = address(ipText, v6);
        Long mac = null;
        String dev = null;
        while (a.more()) {
            String w = a.next("setting");
            switch (w) {
                case "lladdr" -> mac = Args.mac(a.next("MAC"));
                case "dev" -> dev = a.next("device");
                case "nud" -> {
                    String st = a.next("state");
                    if (!st.equals("permanent")) {
                        throw new CtlException("nud " + st + ": only permanent entries can be added (the others are the kernel's to set)");
                    }
                }
                default -> throw a.unexpected(w);
            }
        }
        if (mac == null || dev == null) {
            throw new CtlException("neigh add " + ipText + ": needs 'lladdr MAC' and 'dev DEV'");
        }
        if (!MacAddr.isValidUnicast(mac)) {
            throw new CtlException("lladdr " + MacAddr.format(mac) + " is not a unicast MAC address");
        }
        NetStack s = c.stack();
        long fMac = mac;
        String fDev = dev;
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, fDev);
            table(s, v6).addPermanent(d, ip[0], ip[1], fMac);
            return Reply.done(ipText + " dev " + fDev + " lladdr " + MacAddr.format(fMac) + " PERMANENT in " + s.name());
        });
    }

    private static Reply del(ControlPlane.Call c, Args a, boolean v6) {
        String ipText = a.next("IP");
        long[] ip = address(ipText, v6);
        if (!a.accept("dev")) {
            throw new CtlException("neigh del " + ipText + ": missing 'dev DEV'");
        }
        String dev = a.next("device");
        a.end();
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, dev);
            if (!table(s, v6).delete(d, ip[0], ip[1])) {
                throw new CtlException("no neighbour " + ipText + " on " + s.name() + "/" + dev + " (RTNETLINK answers: No such file or directory)");
            }
            return Reply.done("deleted neighbour " + ipText + " dev " + dev + " in " + s.name());
        });
    }

    private static Reply flush(ControlPlane.Call c, Args a, boolean v6) {
        String dev = devArg(a);
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = dev == null ? null : ControlPlane.device(s, dev);
            int n = table(s, v6).flush(d);
            return Reply.of(Map.of("flushed", n), "flushed " + n + " neighbour" + (n == 1 ? "" : "s") + " in " + s.name()
                    + (dev == null ? "" : " dev " + dev) + " (permanent entries stay)");
        });
    }
}
