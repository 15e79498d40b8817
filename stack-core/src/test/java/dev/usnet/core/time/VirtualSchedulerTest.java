package dev.usnet.core.time;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Virtual time runs events by time, then in the order they were scheduled, whichever way they were scheduled (work
 * for now waits in a queue of its own beside the timer heap), and a run that cannot leave an instant ends with
 * {@link VirtualScheduler.ClockStalled} naming what kept it there.
 */
class VirtualSchedulerTest {

    /** A task that logs its number and may schedule more; its toString is what a stall report shows. */
    private record Step(int id, List<Integer> log) implements Runnable {
        @Override
        public void run() {
            log.add(id);
        }
    }

    @Test
    void eventsRunByTimeThenInTheOrderTheyWereScheduledHoweverTheyWereScheduled() {
        SplittableRandom r = new SplittableRandom(7);
        for (int trial = 0; trial < 50; trial++) {
            VirtualScheduler vs = new VirtualScheduler(1_000);
            List<Integer> log = new ArrayList<>();
            List<long[]> expected = new ArrayList<>();    // {time, order, id}
            List<Timeout> cancellable = new ArrayList<>();
            List<Integer> cancelled = new ArrayList<>();
            int id = 0;
            long order = 0;
            for (int k = 0; k < 200; k++) {
                int how = r.nextInt(4);
                long delay = r.nextInt(3) == 0 ? 0 : r.nextLong(50);
                Step s = new Step(id, log);
                switch (how) {
                    case 0 -> vs.execute(s);
                    case 1 -> vs.executeAfter(s, delay);
                    case 2 -> cancellable.add(vs.schedule(s, delay));
                    default -> vs.schedule(s, delay, new dev.usnet.core.stats.CpuAccount(0));
                }
                long at = 1_000 + (how == 0 ? 0 : delay);
                expected.add(new long[] {at, order++, id});
                if (how == 2 && r.nextInt(5) == 0) {
                    cancellable.getLast().cancel();
                    cancelled.add(id);
                }
                id++;
            }
            vs.runUntil(10_000);
            List<Integer> want = expected.stream()
                    .sorted((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]))
                    .map(a -> (int) a[2]).filter(x -> !cancelled.contains(x)).toList();
            assertEquals(want, log, "trial " + trial);
            assertEquals(0, vs.pending());
        }
    }

    @Test
    void workScheduledForNowFromATimerRunsAfterWhatWasAlreadyDueThen() {
        VirtualScheduler vs = new VirtualScheduler();
        List<Integer> log = new ArrayList<>();
        vs.schedule(() -> {
            log.add(1);
            vs.execute(new Step(4, log));
            vs.schedule(new Step(5, log), 0);
        }, 100);
        vs.schedule(new Step(2, log), 100);
        vs.executeAfter(new Step(3, log), 100);
        vs.schedule(new Step(6, log), 101);
        vs.runUntil(1_000);
        assertEquals(List.of(1, 2, 3, 4, 5, 6), log);
        assertEquals(1_000, vs.nanoTime());
    }

    @Test
    void aRunThatCannotLeaveAnInstantEndsWithClockStalledNamingWhatSpun() {
        VirtualScheduler vs = new VirtualScheduler(5_000_000);
        vs.setStallLimit(10_000);
        vs.schedule(() -> { }, 1_000_000_000L);           // a timer the clock would go to, if it could
        Runnable spin = new Runnable() {
            @Override
            public void run() {
                vs.execute(this);
            }

            @Override
            public String toString() {
                return "spinner";
            }
        };
        vs.execute(spin);
        VirtualScheduler.ClockStalled e = assertThrows(VirtualScheduler.ClockStalled.class, () -> vs.runFor(2_000_000_000L));
        assertEquals(5_000_000, e.atNanos());
        assertTrue(e.work() > 10_000, "stopped after the limit: " + e.work());
        assertEquals(List.of("spinner"), List.copyOf(e.busiest().keySet()));
        assertTrue(e.getMessage().startsWith("virtual time stalled at 0.005000 s:"), e.getMessage());
        assertTrue(e.getMessage().contains("spinner ×"), e.getMessage());
        assertEquals(5_000_000, vs.nanoTime(), "the clock stayed where it stalled");
    }

    @Test
    void framesReportedByReceiveRunsCountTowardsTheLimit() {
        VirtualScheduler vs = new VirtualScheduler();
        vs.setStallLimit(1_000);
        Runnable heavy = new Runnable() {
            @Override
            public void run() {
                vs.ranFrames(64);
                vs.execute(this);
            }
        };
        vs.execute(heavy);
        VirtualScheduler.ClockStalled e = assertThrows(VirtualScheduler.ClockStalled.class, () -> vs.runFor(1));
        // 1 000 units are 16 runs of 64 frames, not 1 000 runs.
        assertTrue(e.work() < 1_000 + 65 * (1 + 1_000), "work " + e.work());
    }

    @Test
    void muchWorkAtOneInstantThatEndsIsNoStall() {
        VirtualScheduler vs = new VirtualScheduler(1_000_000_000L);
        vs.setStallLimit(1_000);
        List<Integer> log = new ArrayList<>();
        // Ten bursts of 900 events, each at the same instant (a benchmark whose clock never moves): the count starts
        // again whenever everything due at the instant has run.
        for (int round = 0; round < 10; round++) {
            for (int i = 0; i < 900; i++) {
                vs.execute(new Step(i, log));
            }
            vs.runUntil(vs.nanoTime());
        }
        assertEquals(9_000, log.size());
        // One burst of 1 500 that ends: too much for the limit, so it is a stall.
        for (int i = 0; i < 1_500; i++) {
            vs.execute(new Step(i, log));
        }
        assertThrows(VirtualScheduler.ClockStalled.class, () -> vs.runUntil(vs.nanoTime()));
    }

    @Test
    void theStallLimitIsAtLeastOne() {
        assertThrows(IllegalArgumentException.class, () -> new VirtualScheduler().setStallLimit(0));
    }
}
