package dev.usnet.tcp;

import dev.usnet.core.time.Scheduler;
import dev.usnet.core.time.Timeout;

/**
 * One of a connection's timers (retransmit, delayed ACK, keep-alive, TIME-WAIT), re-armed like mod_timer:
 * moving the deadline only updates a field, and the scheduler is asked again only when the pending wake-up
 * is later than the new deadline. So re-arming the RTO on every ACK allocates nothing.
 */
final class SockTimer {
    private final Scheduler scheduler;
    private final Runnable action;
    private final Runnable wake = this::wake;
    private long deadline;
    private boolean armed;
    private Timeout pending;
    private long pendingAt;

    SockTimer(Scheduler scheduler, Runnable action) {
        this.scheduler = scheduler;
        this.action = action;
    }

    /** Fires {@code delayNanos} from now, replacing any earlier deadline. */
    void arm(long delayNanos) {
        long now = scheduler.nanoTime();
        deadline = now + Math.max(0, delayNanos);
        armed = true;
        if (pending == null || !pending.isPending() || pendingAt > deadline) {
            if (pending != null) {
                pending.cancel();
            }
            pendingAt = deadline;
            pending = scheduler.schedule(wake, deadline - now);
        }
    }

    void cancel() {
        armed = false;
    }

    boolean isArmed() {
        return armed;
    }

    /** The deadline on the scheduler clock (valid while armed). */
    long deadline() {
        return deadline;
    }

    /** Stops for good: cancels the pending wake-up too. */
    void stop() {
        armed = false;
        if (pending != null) {
            pending.cancel();
            pending = null;
        }
    }

    private void wake() {
        pending = null;
        if (!armed) {
            return;
        }
        long now = scheduler.nanoTime();
        if (now < deadline) {
            pendingAt = deadline;
            pending = scheduler.schedule(wake, deadline - now);
            return;
        }
        armed = false;
        action.run();
    }
}
