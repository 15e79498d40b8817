package dev.usnet.tools.ctl;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.app.Percentiles;
import dev.usnet.tools.results.NetfilterCounters;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code stats}: per namespace the MIB counters ({@code nstat}), drops by reason, copy-on-write counters, FDB and
 * neighbour table sizes, each forwarding path's latency percentiles, and where connection tracking ran its table
 * size, {@code conntrack -S} counters, invalid packets by reason and NAT's counters. Read from the counters the data path keeps
 * (atomics and single-writer fields), from this thread: nothing waits for the namespace, and the numbers are the
 * ones {@code /metrics} exports.
 */
final class StatsVerbs {
    private StatsVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("stats");
        a.end();
        List<NetStack> stacks = c.stacksOrAll();
        List<Map<String, Object>> l = new ArrayList<>();
        for (NetStack s : stacks) {
            l.add(of(s));
        }
        return Reply.of(l, text(l));
    }

    /** One namespace's counters, read now. */
    static Map<String, Object> of(NetStack s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ns", s.name());
        Map<String, Long> mib = new LinkedHashMap<>();
        for (Mib k : Mib.values()) {
            long v = s.mib().get(k);
            if (v != 0) {
                mib.put(k.name(), v);
            }
        }
        m.put("mib", mib);
        Map<String, Long> drops = new LinkedHashMap<>();
        for (DropReason r : DropReason.values()) {
            long v = s.drops().get(r);
            if (v != 0) {
                drops.put(r.name(), v);
            }
        }
        m.put("drops", drops);
        Map<String, Long> cow = new LinkedHashMap<>();
        cow.put("copies", s.cow().copies());
        cow.put("bytes", s.cow().bytesCopied());
        cow.put("shared", s.cow().shared());
        cow.put("headroom_copies", s.cow().headroomCopies());
        cow.put("ttl_skipped", s.cow().ttlSkipped());
        m.put("cow", cow);
        Map<String, Integer> neigh = new LinkedHashMap<>();
        for (NudState st : NudState.values()) {
            int n = s.neigh().count(st);
            if (n != 0) {
                neigh.put(st.name(), n);
            }
        }
        m.put("neigh", neigh);
        List<Map<String, Object>> fdb = new ArrayList<>();
        for (Device d : s.devices()) {
            if (d instanceof Bridge b) {
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("bridge", b.name());
                f.put("learned", b.fdb().learnedCount());
                f.put("static", b.fdb().staticCount());
                f.put("local", b.fdb().localCount());
                f.put("learn_failures", b.fdb().learnFailures());
                fdb.add(f);
            }
        }
        m.put("fdb", fdb);
        List<Map<String, Object>> paths = new ArrayList<>();
        for (LatencyPaths.Path p : s.latency().all()) {
            Map<String, Object> pm = new LinkedHashMap<>();
            pm.put("path", p.name());
            pm.put("packets", p.packets());
            pm.put("bytes", p.bytes());
            pm.put("cow_copies", p.cowCopies());
            pm.put("cow_bytes", p.cowBytes());
            Percentiles q = Percentiles.of(p.snapshot());
            pm.put("p50_us", q.p50Us());
            pm.put("p99_us", q.p99Us());
            pm.put("p999_us", q.p999Us());
            pm.put("max_us", q.maxUs());
            paths.add(pm);
        }
        m.put("paths", paths);
        Map<String, Object> netfilter = NetfilterCounters.of(s);
        if (netfilter != null) {
            m.put("netfilter", netfilter);
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    static String text(List<Map<String, Object>> l) {
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append("namespace ").append(m.get("ns")).append('\n');
            ((Map<String, Long>) m.get("mib")).forEach((k, v) -> sb.append(String.format("  %-28s %14d%n", k, v)));
            Map<String, Long> drops = (Map<String, Long>) m.get("drops");
            if (!drops.isEmpty()) {
                sb.append("  drops:\n");
                drops.forEach((k, v) -> sb.append(String.format("    %-26s %14d%n", k, v)));
            }
            Map<String, Long> cow = (Map<String, Long>) m.get("cow");
            sb.append(String.format("  cow: %d copies, %d bytes, %d shared, %d headroom copies%n", cow.get("copies"),
                    cow.get("bytes"), cow.get("shared"), cow.get("headroom_copies")));
            Map<String, Integer> neigh = (Map<String, Integer>) m.get("neigh");
            if (!neigh.isEmpty()) {
                sb.append("  neigh: ");
                List<String> parts = new ArrayList<>();
                neigh.forEach((k, v) -> parts.add(v + " " + k));
                sb.append(String.join(", ", parts)).append('\n');
            }
            for (Map<String, Object> f : (List<Map<String, Object>>) m.get("fdb")) {
                sb.append(String.format("  fdb %s: %s learned, %s static, %s local%n", f.get("bridge"), f.get("learned"),
                        f.get("static"), f.get("local")));
            }
            for (Map<String, Object> p : (List<Map<String, Object>>) m.get("paths")) {
                sb.append(String.format("  path %-16s %10d pkts %12d bytes  p50 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us%n",
                        p.get("path"), p.get("packets"), p.get("bytes"), p.get("p50_us"), p.get("p99_us"), p.get("p999_us"),
                        p.get("max_us")));
            }
            Map<String, Object> nf = (Map<String, Object>) m.get("netfilter");
            if (nf != null) {
                netfilterText(sb, nf);
            }
        }
        return sb.toString().stripTrailing();
    }

    /** The netfilter counters as conntrack -C and -S print them, then invalid reasons and NAT's counters. */
    @SuppressWarnings("unchecked")
    private static void netfilterText(StringBuilder sb, Map<String, Object> nf) {
        sb.append(String.format("  conntrack: %d entries (max %d)%n", nf.get("entries"), nf.get("max")));
        sb.append("   ");
        ((Map<String, Long>) nf.get("stats")).forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
        sb.append('\n');
        Map<String, Long> invalid = (Map<String, Long>) nf.get("invalid");
        if (!invalid.isEmpty()) {
            sb.append("  conntrack invalid:\n");
            invalid.forEach((k, v) -> sb.append(String.format("    %-26s %14d%n", k, v)));
        }
        Map<String, Long> nat = (Map<String, Long>) nf.get("nat");
        if (nat != null) {
            sb.append("  nat:");
            nat.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
            sb.append('\n');
        }
    }
}
