package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.Pacer;
import org.junit.jupiter.api.Test;

class PacerTest {
    private static final long MS = 1_000_000L;

    @Test
    void onTimeTicksSendTheRate() {
        Pacer p = new Pacer(5_000);
        p.start(0);
        long total = 0;
        for (int ms = 1; ms <= 1000; ms++) {
            total += p.due(ms * MS);
        }
        assertEquals(5_000, total);
        assertEquals(0, p.skipped());
    }

    /**
     * The demo's sender thread stalls for hundreds of milliseconds at start (class loading, JIT, a shared core):
     * sending everything owed at once put 1 000-2 700 datagrams into one tick, overflowing the unresolved
     * neighbour's queue (NEIGH_QUEUE_FULL, evicting TCP's SYN) and then the host's receive backlog (BACKLOG_FULL).
     */
    @Test
    void aStallIsSkippedNotBurst() {
        Pacer p = new Pacer(5_000);
        p.start(0);
        assertEquals(5, p.due(1 * MS));
        long afterStall = p.due(301 * MS);
        assertTrue(afterStall <= Pacer.MAX_BURST_NANOS * 5_000 / 1_000_000_000L,
                "a 300 ms stall at 5000 pps must not become one burst, got " + afterStall);
        assertEquals(1_500 - afterStall, p.skipped());
        // The schedule slips instead of catching up: the next millisecond sends at the rate again.
        assertEquals(5, p.due(302 * MS));
        assertEquals(0, p.due(302 * MS));
    }

    @Test
    void lowRatesStillSendAfterAStall() {
        Pacer p = new Pacer(10);
        p.start(0);
        assertEquals(1, p.due(2_000 * MS), "at least one datagram goes out after a long stall");
        assertEquals(19, p.skipped());
    }
}
