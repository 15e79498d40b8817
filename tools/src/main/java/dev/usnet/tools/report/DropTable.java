package dev.usnet.tools.report;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The packets each namespace dropped, by reason, for a report at the end of a run: one row per namespace and
 * reason that occurred, then one line per reason that occurred saying what it means
 * ({@link DropReason#description()}). Reasons that did not occur are left out; with no drops at all it is the
 * single line {@code drops: none}.
 *
 * <pre>
 * drops:
 *   namespace  reason        packets
 *   host       NEIGH_FAILED        3
 *   ctr1       NETEM_LOSS         12
 * drop reasons:
 *   NEIGH_FAILED  ARP got no answer to its solicitations ...
 *   NETEM_LOSS    link emulation drew the frame as lost ...
 * </pre>
 */
public final class DropTable {
    private DropTable() {}

    /** The table of {@code stacks}' drop counters as they are now, in the order given. */
    public static List<String> lines(List<NetStack> stacks) {
        Map<String, Map<DropReason, Long>> by = new LinkedHashMap<>();
        for (NetStack s : stacks) {
            by.put(s.name(), s.drops().snapshot());
        }
        return lines(by);
    }

    /** The table of drop counts by namespace name (iteration order) and reason; zero counts are left out. */
    public static List<String> lines(Map<String, Map<DropReason, Long>> dropsByNamespace) {
        Columns t = new Columns(2, "namespace", "reason", "packets");
        Set<DropReason> seen = EnumSet.noneOf(DropReason.class);
        dropsByNamespace.forEach((ns, drops) -> drops.forEach((reason, count) -> {
            if (count != 0) {
                t.row(ns, reason.name(), count);
                seen.add(reason);
            }
        }));
        if (seen.isEmpty()) {
            return List.of("drops: none");
        }
        List<String> out = new ArrayList<>();
        out.add("drops:");
        out.addAll(t.lines("  "));
        out.add("drop reasons:");
        int w = seen.stream().mapToInt(r -> r.name().length()).max().orElse(0);
        for (DropReason r : seen) {
            out.add("  " + r.name() + " ".repeat(w - r.name().length()) + "  " + r.description());
        }
        return out;
    }
}
