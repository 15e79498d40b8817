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
        vs.setTaskLimit(5_000);
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
        assertEquals(15_000, e.work(), "stopped once the spinner alone did the task limit after the stall limit");
        assertEquals(java.util.Map.of("spinner", 5_000L), e.busiest());
        assertTrue(e.getMessage().startsWith("virtual time stalled at 0.005000 s:"), e.getMessage());
        assertTrue(e.getMessage().contains("spinner ×"), e.getMessage());
        assertEquals(5_000_000, vs.nanoTime(), "the clock stayed where it stalled");
    }

    @Test
    void framesReportedByReceiveRunsCountTowardsTheLimit() {
        VirtualScheduler vs = new VirtualScheduler();
        vs.setStallLimit(1_000);
        vs.setTaskLimit(1_000);
        Runnable heavy = new Runnable() {
            @Override
            public void run() {
                vs.ranFrames(64);
                vs.execute(this);
            }
        };
        vs.execute(heavy);
        VirtualScheduler.ClockStalled e = assertThrows(VirtualScheduler.ClockStalled.class, () -> vs.runFor(1));
        // 1 000 units are 16 runs of 64 frames, not 1 000 runs; the task's own count has its frames too.
        assertTrue(e.work() < 2 * (1_000 + 65), "work " + e.work());
        assertTrue(e.busiest().values().iterator().next() >= 1_000, e.busiest().toString());
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
        // One burst of 1 500 that ends: past the stall limit, but each task ran once, so it is no stall.
        for (int i = 0; i < 1_500; i++) {
            vs.execute(new Step(i, log));
        }
        vs.runUntil(vs.nanoTime());
        assertEquals(10_500, log.size());
    }

    /**
     * A bridge flooding a broadcast from each of its hosts to every port, as receive runs: each of {@code hosts}
     * ports' backlog gets one frame per sender and hands them on in runs of at most 64.
     */
    private static final class Port implements Runnable {
        final VirtualScheduler vs;
        final String name;
        int queued;
        int handled;

        Port(VirtualScheduler vs, String name) {
            this.vs = vs;
            this.name = name;
        }

        void enqueue() {
            if (queued++ == 0) {
                vs.execute(this);
            }
        }

        @Override
        public void run() {
            int n = Math.min(64, queued);
            queued -= n;
            handled += n;
            vs.ranFrames(n);
            if (queued > 0) {
                vs.execute(this);
            }
        }

        @Override
        public String toString() {
            return "receive backlog of " + name;
        }
    }

    @Test
    void aLargeBurstThatEndsRunsToItsEndWhileOneTaskThatNeverEndsStalls() {
        VirtualScheduler vs = new VirtualScheduler();
        vs.setStallLimit(10_000);
        vs.setTaskLimit(5_000);
        int[] longInstants = {0};
        vs.onLongInstant(() -> longInstants[0]++);
        List<Port> ports = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            ports.add(new Port(vs, "h" + i));
        }
        // 1 000 broadcasts at once, each to 1 000 ports: a million frames at one instant, a hundred times the stall
        // limit, but no port handles more than 1 000 of them.
        for (int sender = 0; sender < 1_000; sender++) {
            vs.execute(() -> ports.forEach(Port::enqueue));
        }
        vs.runFor(1_000);
        assertEquals(1_000, vs.nanoTime());
        assertTrue(ports.stream().allMatch(p -> p.handled == 1_000));
        assertEquals(1, longInstants[0], "the watchdog looked closer once");
        // Broadcasts that come back for ever (a loop of bridges) at the same instant: spread over a thousand ports
        // as the burst was, yet one port's count reaches the task limit, as it must when the work never ends.
        Runnable storm = new Runnable() {
            @Override
            public void run() {
                ports.forEach(Port::enqueue);
                vs.execute(this);
            }

            @Override
            public String toString() {
                return "broadcast storm";
            }
        };
        vs.execute(storm);
        VirtualScheduler.ClockStalled e = assertThrows(VirtualScheduler.ClockStalled.class, () -> vs.runFor(1_000));
        assertEquals(1_000, e.atNanos());
        assertEquals(2, longInstants[0]);
        assertEquals(5_000L, e.busiest().values().iterator().next(), e.busiest().toString());
        assertTrue(e.busiest().keySet().stream().allMatch(k -> k.startsWith("receive backlog of h")), e.busiest().toString());
        assertTrue(e.getMessage().contains("of the work after the first 10000, one task did 5000"), e.getMessage());
    }

    @Test
    void theStallLimitIsAtLeastOne() {
        assertThrows(IllegalArgumentException.class, () -> new VirtualScheduler().setStallLimit(0));
        assertThrows(IllegalArgumentException.class, () -> new VirtualScheduler().setTaskLimit(0));
    }
}
