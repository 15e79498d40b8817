package dev.usnet.tools.ctl;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.conntrack.ConntrackEntry;
import dev.usnet.core.conntrack.ConntrackStats;
import dev.usnet.core.conntrack.ConntrackTuple;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * {@code conntrack -L|-D|-F|-S|-C}: a namespace's connection-tracking table as conntrack-tools shows and changes
 * it. {@code -L} and {@code -D} take the filters {@code -s ADDR -d ADDR -p PROTO --sport N --dport N}, matched
 * against the original direction as conntrack does.
 */
final class ConntrackVerbs {
    static final String USAGE = "conntrack -L|-D [-s ADDR] [-d ADDR] [-p tcp|udp|icmp|N] [--sport N] [--dport N]"
            + " | conntrack -F | conntrack -S | conntrack -C";

    private ConntrackVerbs() {}

    /** What {@code -L} and {@code -D} select: each field null when not given. */
    record Filter(Integer src, Integer dst, Integer proto, Integer sport, Integer dport) implements Predicate<ConntrackEntry> {
        @Override
        public boolean test(ConntrackEntry e) {
            ConntrackTuple t = e.tuple(ConntrackEntry.ORIGINAL);
            return (src == null || t.src() == src) && (dst == null || t.dst() == dst)
                    && (proto == null || t.protonum() == proto)
                    && (sport == null || (t.hasPorts() && t.srcPort() == sport))
                    && (dport == null || (t.hasPorts() && t.dstPort() == dport));
        }
    }

    static Reply run(ControlPlane.Call c) {
        Args a = c.args(USAGE);
        String cmd = a.next("command (-L, -D, -F, -S or -C)");
        return switch (cmd) {
            case "-L", "--dump" -> list(c, filter(a));
            case "-D", "--delete" -> delete(c, filter(a));
            case "-F", "--flush" -> {
                a.end();
                yield flush(c);
            }
            case "-S", "--stats" -> {
                a.end();
                yield stats(c);
            }
            case "-C", "--count" -> {
                a.end();
                yield count(c);
            }
            default -> throw a.unexpected(cmd);
        };
    }

    static Filter filter(Args a) {
        Integer src = null;
        Integer dst = null;
        Integer proto = null;
        Integer sport = null;
        Integer dport = null;
        while (a.more()) {
            String w = a.next("filter");
            switch (w) {
                case "-s", "--src", "--orig-src" -> src = Args.ipv4(a.next("source address"), "source");
                case "-d", "--dst", "--orig-dst" -> dst = Args.ipv4(a.next("destination address"), "destination");
                case "-p", "--proto" -> proto = protocol(a.next("protocol"));
                case "--sport", "--orig-port-src" -> sport = Args.integer(a.next("source port"), "source port", 0, 65535);
                case "--dport", "--orig-port-dst" -> dport = Args.integer(a.next("destination port"), "destination port",
                        0, 65535);
                default -> throw a.unexpected(w);
            }
        }
        if ((sport != null || dport != null) && proto == null) {
            // conntrack-tools wants the protocol named before its ports.
            throw new CtlException("--sport and --dport need -p tcp or -p udp (usage: " + USAGE + ")");
        }
        return new Filter(src, dst, proto, sport, dport);
    }

    static int protocol(String p) {
        return switch (p) {
            case "tcp" -> 6;
            case "udp" -> 17;
            case "icmp" -> 1;
            case "udplite" -> 136;
            case "sctp" -> 132;
            case "gre" -> 47;
            case "dccp" -> 33;
            default -> Args.integer(p, "protocol", 0, 255);
        };
    }

    private static ConntrackCore core(NetStack s) {
        ConntrackCore core = ConntrackCore.of(s.ipv4());
        if (core == null) {
            throw new CtlException("namespace " + s.name() + " has no connection tracking");
        }
        return core;
    }

    static Map<String, Object> describe(ConntrackEntry e, long now) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("proto", e.protocol());
        m.put("timeout", e.secondsLeft(now));
        if (e.tcpStateName() != null) {
            m.put("state", e.tcpStateName());
        }
        m.put("original", tuple(e, ConntrackEntry.ORIGINAL));
        m.put("reply", tuple(e, ConntrackEntry.REPLY));
        m.put("unreplied", !e.hasStatus(IpConntrackStatus.SEEN_REPLY));
        m.put("assured", e.hasStatus(IpConntrackStatus.ASSURED));
        m.put("mark", Integer.toUnsignedLong(e.mark()));
        m.put("line", e.describe(now));
        return m;
    }

    private static Map<String, Object> tuple(ConntrackEntry e, int dir) {
        ConntrackTuple t = e.tuple(dir);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("src", Ipv4Addr.format(t.src()));
        m.put("dst", Ipv4Addr.format(t.dst()));
        if (t.protonum() == 1) {
            m.put("type", t.icmpType());
            m.put("code", t.icmpCode());
            m.put("id", t.icmpId());
        } else if (t.hasPorts()) {
            m.put("sport", t.srcPort());
            m.put("dport", t.dstPort());
        }
        if (e.accounting()) {
            m.put("packets", e.packets(dir));
            m.put("bytes", e.bytes(dir));
        }
        return m;
    }

    private static Reply lines(List<Map<String, Object>> l) {
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("line")).append('\n');
        }
        return Reply.of(l, sb.toString().stripTrailing());
    }

    private static Reply list(ControlPlane.Call c, Filter f) {
        NetStack s = c.stack();
        return lines(c.cp().onLoop(s, () -> {
            long now = s.now();
            List<Map<String, Object>> out = new ArrayList<>();
            core(s).table().forEach(e -> {
                if (f.test(e)) {
                    out.add(describe(e, now));
                }
            });
            return out;
        }));
    }

    private static Reply delete(ControlPlane.Call c, Filter f) {
        NetStack s = c.stack();
        List<Map<String, Object>> gone = c.cp().change(s, () -> {
            long now = s.now();
            List<Map<String, Object>> out = new ArrayList<>();
            var table = core(s).table();
            for (ConntrackEntry e : table.entries()) {
                if (f.test(e) && table.delete(e)) {
                    out.add(describe(e, now));
                }
            }
            return out;
        });
        Reply r = lines(gone);
        String summary = gone.size() + " flow entries have been deleted.";
        return Reply.of(gone, r.text().isEmpty() ? summary : r.text() + "\n" + summary);
    }

    private static Reply flush(ControlPlane.Call c) {
        NetStack s = c.stack();
        int n = c.cp().change(s, () -> core(s).table().flush());
        return Reply.of(Map.of("flushed", n), "connection tracking table has been emptied.");
    }

    private static Reply stats(ControlPlane.Call c) {
        NetStack s = c.stack();
        return c.cp().onLoop(s, () -> {
            ConntrackStats st = core(s).stats();
            Map<String, Object> m = new LinkedHashMap<>(st.asMap());
            m.put("invalid_reasons", st.invalidReasons());
            return Reply.of(m, st.describe().stripTrailing());
        });
    }

    private static Reply count(ControlPlane.Call c) {
        NetStack s = c.stack();
        int n = c.cp().onLoop(s, () -> core(s).table().count());
        return Reply.of(Map.of("count", n), Integer.toString(n));
    }
}
