package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.time.VirtualScheduler;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What virtual time's event queue costs per event as the number of pending timers grows: {@code pending} timers
 * (one per TCP connection's retransmission timer, say) each re-arm themselves when they fire, 1–200 ms ahead (a
 * fixed-seed draw), so the queue holds {@code pending} events at every step. One op runs the next instant
 * ({@code runUntil(nextEventTime())}): one event, its callback re-arming it (a timer the scheduler allocates, as
 * {@code Scheduler.schedule} does). {@code recyclable} true arms with {@code executeAfter} instead (the stack's
 * own never-cancelled work, whose event objects are reused).
 */
@State(Scope.Thread)
public class VirtualSchedulerBench extends UsnetBench {
    @Param({"1", "1000", "100000"})
    int pending;

    @Param({"false", "true"})
    boolean recyclable;

    private VirtualScheduler vs;
    private long[] delays;
    private int next;
    private long fired;

    private final class Rearming implements Runnable {
        @Override
        public void run() {
            fired++;
            long d = delays[next];
            next = (next + 1) & (delays.length - 1);
            if (recyclable) {
                vs.executeAfter(this, d);
            } else {
                vs.schedule(this, d);
            }
        }
    }

    @Setup(Level.Trial)
    public void setup() {
        SplittableRandom rnd = new SplittableRandom(24);
        delays = new long[1 << 16];
        for (int i = 0; i < delays.length; i++) {
            delays[i] = 1_000_000L + rnd.nextLong(199_000_000L);
        }
        vs = new VirtualScheduler();
        for (int i = 0; i < pending; i++) {
            Rearming t = new Rearming();
            if (recyclable) {
                vs.executeAfter(t, delays[i & (delays.length - 1)]);
            } else {
                vs.schedule(t, delays[i & (delays.length - 1)]);
            }
        }
        // Sanity: a step runs an event and the queue keeps its size.
        long before = fired;
        step();
        check(fired > before, "a step ran no event");
        check(vs.pending() == pending, "the queue holds " + vs.pending() + " events, not " + pending);
    }

    @Benchmark
    public long step() {
        vs.runUntil(vs.nextEventTime());
        return fired;
    }

    @TearDown(Level.Trial)
    public void teardown() {
        check(vs.pending() == pending, "the queue lost events: " + vs.pending() + " of " + pending);
    }
}
