package dev.usnet.tap;

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;

/**
 * An epoll loop that keeps polling without sleeping for a while after it last had work, like Linux's
 * {@code net.core.busy_poll} (microseconds a socket read spins on the device queue before sleeping).
 *
 * <p>Why: on a TAP path every frame the kernel sends while the loop sleeps costs a wake-up (the sender pays for
 * the IPI, the loop for being scheduled back in), and the next super-frame of a TCP stream usually follows
 * within tens of microseconds. Spinning through that gap with non-blocking {@code epoll_wait} calls trades CPU
 * for fewer wake-ups; after {@code busyPollMicros} without I/O or tasks the loop blocks as usual, so an idle
 * daemon does not burn a core.
 */
public final class BusyPollSelectStrategy implements SelectStrategy {
    /**
     * What {@code usnet run} and the tap-throughput benchmark use: 50 µs of spinning after activity carried 64 KiB
     * TCP super-frames through the bridge and router 10–20 % faster on the 2-vCPU VM (docs/real-io.md).
     */
    public static final int DEFAULT_MICROS = 50;

    private final long spinNanos;
    private long lastActive = System.nanoTime();
    private boolean wokeFromSelect;

    private BusyPollSelectStrategy(long spinNanos) {
        this.spinNanos = spinNanos;
    }

    /** A factory for {@code EpollIoHandler.newFactory(0, ...)}; one strategy (and its clock) per event loop. */
    public static SelectStrategyFactory factory(int busyPollMicros) {
        if (busyPollMicros < 0) {
            throw new IllegalArgumentException("busy poll must be >= 0 microseconds, got " + busyPollMicros);
        }
        long nanos = busyPollMicros * 1_000L;
        return () -> new BusyPollSelectStrategy(nanos);
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        long now = System.nanoTime();
        if (wokeFromSelect) {
            // Something woke the blocking wait (I/O, a task, a timer): that counts as activity.
            wokeFromSelect = false;
            lastActive = now;
        }
        if (hasTasks || now - lastActive < spinNanos) {
            int ready = selectNow.get();
            if (ready > 0 || hasTasks) {
                lastActive = now;
            }
            return ready;
        }
        wokeFromSelect = true;
        return SelectStrategy.SELECT;
    }
}
