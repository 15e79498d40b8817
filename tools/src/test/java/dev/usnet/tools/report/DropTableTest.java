package dev.usnet.tools.report;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.stats.DropReason;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link DropTable}: only what occurred, aligned, and one explanation per reason however many namespaces had it. */
class DropTableTest {

    @Test
    void rowsForWhatOccurredThenEachReasonExplainedOnce() {
        Map<String, Map<DropReason, Long>> by = new LinkedHashMap<>();
        by.put("host", Map.of(DropReason.NEIGH_QUEUE_FULL, 12L));
        by.put("ctr1", Map.of());
        by.put("ctr22", new java.util.EnumMap<>(Map.of(DropReason.NETEM_LOSS, 3L, DropReason.NEIGH_QUEUE_FULL, 1234L,
                DropReason.IP_NOROUTE, 0L)));
        assertEquals(List.of(
                "drops:",
                "  namespace  reason            packets",
                "  host       NEIGH_QUEUE_FULL       12",
                "  ctr22      NEIGH_QUEUE_FULL     1234",
                "  ctr22      NETEM_LOSS              3",
                "drop reasons:",
                "  NEIGH_QUEUE_FULL  packet waited for ARP resolution and the neighbour's unresolved queue"
                        + " (unres_qlen_bytes) was full",
                "  NETEM_LOSS        " + DropReason.NETEM_LOSS.description()), DropTable.lines(by));
    }

    @Test
    void noDropsIsOneLine() {
        assertEquals(List.of("drops: none"), DropTable.lines(Map.of("a", Map.of(DropReason.IP_CSUM, 0L))));
    }

    @Test
    void everyReasonHasAnExplanationOfItsOwn() {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (DropReason r : DropReason.values()) {
            String d = r.description();
            assertEquals(true, d.length() >= 20 && seen.add(d), r + ": " + d);
        }
    }
}
