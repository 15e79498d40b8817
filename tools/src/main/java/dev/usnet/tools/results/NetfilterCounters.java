package dev.usnet.tools.results;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.conntrack.ConntrackSysctl;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.stack.NetStack;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A namespace's netfilter counters as one ordered map: connection tracking's table size and limit, its
 * {@code conntrack -S} counters, its invalid packets by reason, and NAT's counters. Results, {@code ctl stats} and
 * the metrics report the same numbers, and only for namespaces where connection tracking ever ran, so a topology
 * without netfilter reports none of it.
 */
public final class NetfilterCounters {
    private NetfilterCounters() {}

    /** Whether connection tracking ever ran in {@code s} (NAT needs it, so NAT did not run without it). */
    public static boolean ran(NetStack s) {
        ConntrackCore ct = ConntrackCore.of(s.ipv4());
        return ct != null && ct.everActive();
    }

    /**
     * {@code entries} (confirmed entries now), {@code max} ({@code nf_conntrack_max}), {@code stats} (the
     * {@code conntrack -S} fields in its order), {@code invalid} (by reason, only reasons that occurred) and
     * {@code nat} (NAT's counters); null when connection tracking never ran in {@code s}.
     */
    public static Map<String, Object> of(NetStack s) {
        if (!ran(s)) {
            return null;
        }
        ConntrackCore ct = ConntrackCore.of(s.ipv4());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("entries", (long) ct.table().count());
        m.put("max", s.knobs().get(ConntrackSysctl.MAX));
        m.put("stats", ct.stats().asMap());
        m.put("invalid", ct.stats().invalidReasons());
        NatCore nat = NatCore.of(s.ipv4());
        if (nat != null) {
            m.put("nat", nat.stats().asMap());
        }
        return m;
    }
}
