package dev.usnet.tools.ctl;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.bridge.BridgePort;
import dev.usnet.core.bridge.FdbEntry;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code bridge fdb show|add|del} and {@code bridge link show|set}: bridges as iproute2's {@code bridge} sees them. */
final class BridgeVerbs {
    private BridgeVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("bridge fdb show|add|del ... | bridge link show|set ...");
        String obj = a.next("'fdb' or 'link'");
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (obj + " " + sub) {
            case "fdb show", "fdb list", "fdb ls" -> fdbShow(c, a);
            case "fdb add", "fdb replace" -> fdbAdd(c, a);
            case "fdb del", "fdb delete" -> fdbDel(c, a);
            case "link show", "link list", "link ls" -> linkShow(c, a);
            case "link set" -> linkSet(c, a);
            default -> throw new CtlException("unknown bridge request '" + obj + " " + sub
                    + "' (bridge fdb show|add|del, bridge link show|set)");
        };
    }

    private static List<Bridge> bridges(NetStack s, String only) {
        List<Bridge> l = new ArrayList<>();
        if (only != null) {
            Device d = ControlPlane.device(s, only);
            if (!(d instanceof Bridge b)) {
                throw new CtlException(only + " is a " + d.kind() + ", not a bridge");
            }
            l.add(b);
            return l;
        }
        for (Device d : s.devices()) {
            if (d instanceof Bridge b) {
                l.add(b);
            }
        }
        return l;
    }

    private static Reply fdbShow(ControlPlane.Call c, Args a) {
        String br = null;
        String dev = null;
        while (a.more()) {
            String w = a.next("filter");
            switch (w) {
                case "br" -> br = a.next("bridge");
                case "dev", "brport" -> dev = a.next("port");
                default -> throw a.unexpected(w);
            }
        }
        NetStack s = c.stack();
        String fBr = br;
        String fDev = dev;
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            Device port = fDev == null ? null : ControlPlane.device(s, fDev);
            List<Map<String, Object>> out = new ArrayList<>();
            long now = s.now();
            for (Bridge b : bridges(s, fBr)) {
                List<FdbEntry> es = b.fdb().list();
                es.sort((x, y) -> Long.compareUnsigned(x.mac(), y.mac()));
                for (FdbEntry e : es) {
                    Device pd = e.port() == null ? b : e.port().dev();
                    if (port != null && pd != port) {
                        continue;
                    }
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("mac", MacAddr.format(e.mac()));
                    m.put("ifname", pd.name());
                    m.put("master", b.name());
                    m.put("state", e.isLocal() ? "permanent" : e.isStatic() ? "static" : "learned");
                    m.put("age_s", e.isLocal() || e.isStatic() ? null : Math.round((now - e.updatedNanos()) / 1e6) / 1e3);
                    out.add(m);
                }
            }
            return out;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("mac")).append(" dev ").append(m.get("ifname")).append(" master ").append(m.get("master"));
            if (!m.get("state").equals("learned")) {
                sb.append(' ').append(m.get("state"));
            } else {
                sb.append(" used ").append(m.get("age_s")).append(" s ago");
            }
            sb.append('\n');
        }
        return Reply.of(l, sb.toString().stripTrailing());
    }

    private record FdbArgs(long mac, String dev) {}

    private static FdbArgs fdbArgs(Args a, String op) {
        String macText = a.next("MAC");
        long mac = Args.mac(macText);
        String dev = null;
        while (a.more()) {
            String w = a.next("setting");
            switch (w) {
                case "dev" -> dev = a.next("port");
                case "master", "static", "permanent" -> { }
                default -> throw a.unexpected(w);
            }
        }
        if (dev == null) {
            throw new CtlException("bridge fdb " + op + " " + macText + ": missing 'dev PORT'");
        }
        if (!MacAddr.isValidUnicast(mac)) {
            throw new CtlException(macText + " is not a unicast MAC address: the FDB holds unicast addresses");
        }
        return new FdbArgs(mac, dev);
    }

    private static BridgePort portOf(NetStack s, String dev) {
        Device d = ControlPlane.device(s, dev);
        if (!(d.master() instanceof Bridge b) || b.port(d) == null) {
            throw new CtlException(dev + " is not a bridge port in " + s.name() + " (ip link set " + dev + " master BRIDGE first)");
        }
        return b.port(d);
    }

    private static Reply fdbAdd(ControlPlane.Call c, Args a) {
        FdbArgs f = fdbArgs(a, "add");
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            BridgePort p = portOf(s, f.dev());
            FdbEntry old = p.bridge().fdb().entry(f.mac());
            if (old != null && old.isLocal()) {
                throw new CtlException(MacAddr.format(f.mac()) + " is a local address of " + p.bridge().name());
            }
            p.bridge().fdb().addStatic(f.mac(), p, s.now());
            return Reply.done(MacAddr.format(f.mac()) + " dev " + f.dev() + " master " + p.bridge().name() + " static");
        });
    }

    private static Reply fdbDel(ControlPlane.Call c, Args a) {
        FdbArgs f = fdbArgs(a, "del");
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            BridgePort p = portOf(s, f.dev());
            FdbEntry e = p.bridge().fdb().entry(f.mac());
            if (e == null || e.port() != p) {
                throw new CtlException("no FDB entry " + MacAddr.format(f.mac()) + " dev " + f.dev() + " (RTNETLINK answers: No such file or directory)");
            }
            p.bridge().fdb().delete(f.mac());
            return Reply.done("deleted " + MacAddr.format(f.mac()) + " dev " + f.dev() + " master " + p.bridge().name());
        });
    }

    private static Reply linkShow(ControlPlane.Call c, Args a) {
        String dev = null;
        if (a.accept("dev")) {
            dev = a.next("port");
        }
        a.end();
        NetStack s = c.stack();
        String fDev = dev;
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (Bridge b : bridges(s, null)) {
                for (BridgePort p : b.ports()) {
                    if (fDev != null && !p.dev().name().equals(fDev)) {
                        continue;
                    }
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("ifindex", p.dev().ifindex());
                    m.put("ifname", p.dev().name());
                    m.put("flags", LinkVerbs.flags(p.dev()));
                    m.put("mtu", p.dev().mtu());
                    m.put("master", b.name());
                    m.put("state", p.forwarding() ? "forwarding" : "disabled");
                    m.put("learning", p.learning());
                    m.put("flood", p.unicastFlood());
                    m.put("mcast_flood", p.multicastFlood());
                    m.put("bcast_flood", p.broadcastFlood());
                    m.put("hairpin", p.hairpin());
                    out.add(m);
                }
            }
            if (fDev != null && out.isEmpty()) {
                ControlPlane.device(s, fDev);
                throw new CtlException(fDev + " is not a bridge port in " + s.name());
            }
            return out;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            @SuppressWarnings("unchecked")
            List<String> flags = (List<String>) m.get("flags");
            sb.append(m.get("ifindex")).append(": ").append(m.get("ifname")).append(": <").append(String.join(",", flags))
                    .append("> mtu ").append(m.get("mtu")).append(" master ").append(m.get("master")).append(" state ")
                    .append(m.get("state")).append(" learning ").append(onOff(m.get("learning"))).append(" flood ")
                    .append(onOff(m.get("flood"))).append(" mcast_flood ").append(onOff(m.get("mcast_flood")))
                    .append(" hairpin ").append(onOff(m.get("hairpin"))).append('\n');
        }
        return Reply.of(l, sb.toString().stripTrailing());
    }

    private static String onOff(Object b) {
        return Boolean.TRUE.equals(b) ? "on" : "off";
    }

    private static Reply linkSet(ControlPlane.Call c, Args a) {
        if (!a.accept("dev")) {
            throw new CtlException("bridge link set: missing 'dev PORT'");
        }
        String dev = a.next("port");
        Map<String, Boolean> set = new LinkedHashMap<>();
        while (a.more()) {
            String w = a.next("setting");
            switch (w) {
                case "learning", "flood", "mcast_flood", "bcast_flood", "hairpin" -> set.put(w, Args.onOff(a.next(w), w));
                default -> throw a.unexpected(w);
            }
        }
        if (set.isEmpty()) {
            throw new CtlException("bridge link set dev " + dev + ": nothing to set (learning, flood, mcast_flood, bcast_flood, hairpin)");
        }
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            BridgePort p = portOf(s, dev);
            set.forEach((k, v) -> {
                switch (k) {
                    case "learning" -> p.setLearning(v);
                    case "flood" -> p.setUnicastFlood(v);
                    case "mcast_flood" -> p.setMulticastFlood(v);
                    case "bcast_flood" -> p.setBroadcastFlood(v);
                    default -> p.setHairpin(v);
                }
            });
            List<String> did = new ArrayList<>();
            set.forEach((k, v) -> did.add(k + " " + (v ? "on" : "off")));
            return Reply.done(s.name() + "/" + dev + ": " + String.join(", ", did));
        });
    }
}
