package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BusyPollSelectStrategyTest {
    /** A non-blocking epoll_wait stand-in: returns the queued ready counts, then 0, and counts its calls. */
    static final class SelectNow implements IntSupplier {
        int calls;
        int next;

        @Override
        public int get() {
            calls++;
            int n = next;
            next = 0;
            return n;
        }
    }

    @Test
    void withoutBusyPollingAnIdleLoopBlocksAtOnceAndPendingTasksPollWithoutBlocking() throws Exception {
        SelectStrategy s = BusyPollSelectStrategy.factory(0).newSelectStrategy();
        SelectNow now = new SelectNow();
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(now, false));
        assertEquals(0, now.calls, "blocking wait without a non-blocking poll first");
        now.next = 3;
        assertEquals(3, s.calculateStrategy(now, true), "with tasks waiting the loop must not block");
        assertEquals(1, now.calls);
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(now, false));
    }

    @Test
    void afterActivityTheLoopSpinsInsteadOfBlockingUntilTheWindowHasPassed() throws Exception {
        SelectStrategy s = BusyPollSelectStrategy.factory(200_000).newSelectStrategy();
        SelectNow now = new SelectNow();
        // Just created: counts as active, so it polls.
        assertEquals(0, s.calculateStrategy(now, false));
        now.next = 2;
        assertEquals(2, s.calculateStrategy(now, false), "ready descriptors found by spinning are handed over");
        assertEquals(2, now.calls);
        TimeUnit.MILLISECONDS.sleep(400);
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(now, false), "200 ms without work: block");
        assertEquals(2, now.calls);
        // Woken from the blocking wait: that was activity, so the next turns spin again.
        assertEquals(0, s.calculateStrategy(now, false));
        assertEquals(3, now.calls);
    }

    @Test
    void negativeBusyPollIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> BusyPollSelectStrategy.factory(-1));
    }
}
