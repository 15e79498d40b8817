package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.run.VirtualRun;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Many containers on one bridge pinging one server whose neighbour table is capped by gc_thresh3: the server
 * cannot make entries for the requesters beyond the cap, so their ARP requests go unanswered and their pings fail.
 * The run's drop table must say so (NEIGH_CREATEFAIL in the server, with the knob that raises the limit) instead
 * of {@code drops: none} beside a dozen failed pings.
 */
class NeighTableOverflowRunTest {
    private static VirtualRun.RunResult run(String thresh3) {
        return VirtualRun.run(TopologyFile.parse("t.yaml", PingersOnABridge.FILE,
                java.util.Map.of("n", "20", "thresh3", thresh3)), new VirtualRun.Options(2_000_000_000L, null, null));
    }

    @Test
    void requestsTheFullServerTableCannotAnswerAreCountedAsNeighCreatefailWithTheKnob() {
        VirtualRun.RunResult r = run("8");
        // Eight requesters fit; the other twelve ask three times each (at 0, 1 and 2 s) and are never answered.
        assertEquals(12, r.summary().failed().size(), r.summary().outcomes().toString());
        List<String> drops = r.summary().drops();
        String row = drops.stream().filter(l -> l.contains("NEIGH_CREATEFAIL") && l.contains("server")).findFirst()
                .orElseThrow(() -> new AssertionError(String.join("\n", drops)));
        assertTrue(row.matches("\\s*server\\s+NEIGH_CREATEFAIL\\s+36"), row);
        String reason = drops.stream().filter(l -> l.trim().startsWith("NEIGH_CREATEFAIL ")).findFirst()
                .orElseThrow(() -> new AssertionError(String.join("\n", drops)));
        assertTrue(reason.contains("net.ipv4.neigh.default.gc_thresh3"), reason);
    }

    @Test
    void withRoomForEveryRequesterNothingIsDroppedAndEveryPingIsAnswered() {
        VirtualRun.RunResult r = run("1024");
        assertEquals(List.of(), r.summary().failed());
        assertEquals(List.of("drops: none"), r.summary().drops());
    }
}
