package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.netem.LinkEmulation;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code netem show|set|del}: a device's link emulation, changed live as {@code tc qdisc change dev DEV root netem
 * ...} would: frames sent afterwards get the new settings, frames already held keep their departure times.
 */
final class NetemVerbs {
    private NetemVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("netem show [DEV] | netem set DEV SPEC... | netem del DEV");
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> show(c, a);
            case "set", "change", "replace", "add" -> set(c, a);
            case "del", "delete" -> del(c, a);
            default -> throw a.unexpected(sub);
        };
    }

    static Map<String, Object> describe(Device d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dev", d.name());
        NetemParams p = d.netemParams();
        m.put("spec", p.isNone() ? null : p.format());
        LinkEmulation ne = d.netem();
        if (ne != null) {
            var st = ne.stats();
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("sent_packets", st.sentPackets());
            s.put("sent_bytes", st.sentBytes());
            s.put("lost", st.lost());
            s.put("queue_drops", st.queueDrops());
            s.put("duplicated", st.duplicated());
            s.put("reordered", st.reordered());
            s.put("qlen", ne.queueLength());
            s.put("max_qlen", st.maxQlen());
            m.put("stats", s);
        } else {
            m.put("stats", null);
        }
        return m;
    }

    private static Reply show(ControlPlane.Call c, Args a) {
        a.accept("dev");
        String dev = a.more() ? a.next("device") : null;
        a.end();
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Device d : dev != null ? List.of(ControlPlane.device(s, dev)) : s.devices()) {
                if (dev != null || !d.netemParams().isNone() || d.netem() != null) {
                    out.add(describe(d));
                }
            }
            return out;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append("qdisc netem dev ").append(m.get("dev")).append(' ')
                    .append(m.get("spec") == null ? "(none)" : m.get("spec")).append('\n');
            @SuppressWarnings("unchecked")
            Map<String, Object> st = (Map<String, Object>) m.get("stats");
            if (st != null) {
                sb.append(" Sent ").append(st.get("sent_bytes")).append(" bytes ").append(st.get("sent_packets"))
                        .append(" pkt (lost ").append(st.get("lost")).append(", queue drops ").append(st.get("queue_drops"))
                        .append(", duplicated ").append(st.get("duplicated")).append(", reordered ").append(st.get("reordered"))
                        .append(") backlog ").append(st.get("qlen")).append("p, max ").append(st.get("max_qlen")).append("p\n");
            }
        }
        return Reply.of(l, l.isEmpty() ? "no link emulation in " + s.name() : sb.toString().stripTrailing());
    }

    private static Reply set(ControlPlane.Call c, Args a) {
        a.accept("dev");
        String dev = a.next("device");
        List<String> spec = new ArrayList<>();
        while (a.more()) {
            spec.add(a.next("spec"));
        }
        if (spec.isEmpty()) {
            throw new CtlException("netem set " + dev + ": missing the settings (e.g. delay 10ms loss 1% rate 100mbit)");
        }
        NetemParams p;
        try {
            p = NetemParams.parse(String.join(" ", spec));
        } catch (IllegalArgumentException e) {
            throw new CtlException("netem set " + dev + ": " + e.getMessage());
        }
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, dev);
            if (d instanceof Loopback) {
                throw new CtlException("lo takes no link emulation");
            }
            d.setNetem(p);
            return Reply.of(describe(d), "qdisc netem dev " + dev + " " + (p.isNone() ? "(none)" : p.format()) + " in " + s.name());
        });
    }

    private static Reply del(ControlPlane.Call c, Args a) {
        a.accept("dev");
        String dev = a.next("device");
        a.end();
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, dev);
            if (d.netemParams().isNone()) {
                throw new CtlException(s.name() + "/" + dev + " has no link emulation (RTNETLINK answers: No such file or directory)");
            }
            d.setNetem(NetemParams.NONE);
            return Reply.done("deleted the link emulation of " + s.name() + "/" + dev + " (what it holds still leaves, in order)");
        });
    }
}
