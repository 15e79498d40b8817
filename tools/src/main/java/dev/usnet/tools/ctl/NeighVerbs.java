package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code neigh show|add|replace|del|flush}: the ARP cache as {@code ip neigh} shows and changes it. */
final class NeighVerbs {
    private NeighVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("neigh show [dev DEV] | neigh add|replace IP lladdr MAC dev DEV | neigh del IP dev DEV | neigh flush [dev DEV]");
        if (a.accept("-6") || (List.of("add", "replace", "del", "delete").contains(String.valueOf(a.peek()))
                && c.words().size() > 2 && c.words().get(2).indexOf(':') >= 0)) {
            throw noIpv6Table();
        }
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> show(c, a);
            case "add", "replace" -> add(c, a);
            case "del", "delete" -> del(c, a);
            case "flush" -> flush(c, a);
            default -> throw a.unexpected(sub);
        };
    }

    /**
     * The IPv6 neighbour table (neighbour discovery) is not in this build of the stack: {@code neigh -6} says so
     * rather than showing an empty table that would look like one nobody has talked to yet.
     */
    private static CtlException noIpv6Table() {
        return new CtlException("neigh -6: this build has no IPv6 neighbour table yet (neighbour discovery is not in the"
                + " stack); the IPv4 one is 'neigh show'");
    }

    static Map<String, Object> describe(Neighbour n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dst", Ipv4Addr.format(n.ip()));
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

    private static Reply show(ControlPlane.Call c, Args a) {
        String dev = devArg(a);
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            Device d = dev == null ? null : ControlPlane.device(s, dev);
            List<Map<String, Object>> out = new ArrayList<>();
            for (Neighbour n : s.neigh().list()) {
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

    private static Reply add(ControlPlane.Call c, Args a) {
        String ipText = a.next("IP");
        int ip = Args.ipv4(ipText, "neighbour");
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
            s.neigh().addPermanent(d, ip, fMac);
            return Reply.done(ipText + " dev " + fDev + " lladdr " + MacAddr.format(fMac) + " PERMANENT in " + s.name());
        });
    }

    private static Reply del(ControlPlane.Call c, Args a) {
        String ipText = a.next("IP");
        int ip = Args.ipv4(ipText, "neighbour");
        if (!a.accept("dev")) {
            throw new CtlException("neigh del " + ipText + ": missing 'dev DEV'");
        }
        String dev = a.next("device");
        a.end();
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, dev);
            if (!s.neigh().delete(d, ip)) {
                throw new CtlException("no neighbour " + ipText + " on " + s.name() + "/" + dev + " (RTNETLINK answers: No such file or directory)");
            }
            return Reply.done("deleted neighbour " + ipText + " dev " + dev + " in " + s.name());
        });
    }

    private static Reply flush(ControlPlane.Call c, Args a) {
        String dev = devArg(a);
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = dev == null ? null : ControlPlane.device(s, dev);
            int n = s.neigh().flush(d);
            return Reply.of(Map.of("flushed", n), "flushed " + n + " neighbour" + (n == 1 ? "" : "s") + " in " + s.name()
                    + (dev == null ? "" : " dev " + dev) + " (permanent entries stay)");
        });
    }
}
