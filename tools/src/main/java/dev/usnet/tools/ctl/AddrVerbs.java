package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.IfAddr;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code addr show|add|del}: IPv4 addresses as {@code ip -4 addr} shows and changes them. */
final class AddrVerbs {
    private AddrVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("addr show [dev DEV] | addr add|del A.B.C.D/LEN dev DEV");
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> show(c, a);
            case "add" -> change(c, a, true);
            case "del", "delete" -> change(c, a, false);
            default -> throw a.unexpected(sub);
        };
    }

    private static Reply show(ControlPlane.Call c, Args a) {
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
            List<IfAddr> addrs = fDev == null ? s.devinet().list() : s.devinet().list(ControlPlane.device(s, fDev));
            List<Map<String, Object>> out = new ArrayList<>();
            for (IfAddr x : addrs) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ifindex", x.dev().ifindex());
                m.put("dev", x.dev().name());
                m.put("local", Ipv4Addr.format(x.address()));
                m.put("prefixlen", x.prefixLen());
                m.put("broadcast", x.broadcast() == 0 ? null : Ipv4Addr.format(x.broadcast()));
                m.put("secondary", x.secondary());
                out.add(m);
            }
            out.sort((p, q) -> Integer.compare((int) p.get("ifindex"), (int) q.get("ifindex")));
            return out;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("ifindex")).append(": ").append(m.get("dev")).append("    inet ").append(m.get("local")).append('/')
                    .append(m.get("prefixlen"));
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

    private static Reply change(ControlPlane.Call c, Args a, boolean add) {
        String text = a.next("A.B.C.D/LEN");
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
}
