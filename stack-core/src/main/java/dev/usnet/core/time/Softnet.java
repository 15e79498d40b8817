package dev.usnet.core.time;

import io.netty.util.concurrent.EventExecutor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * softnet_data's poll list and net_rx_action for one event loop: receive work scheduled for any namespace on the
 * loop ({@link Napi}) joins one list, and one task on the loop runs everything on it. A broadcast flooded to ten
 * thousand containers thus costs the loops carrying them one task hand-off each (and at most one wake-up), not one
 * per container. Like net_rx_action it stops after {@link #BUDGET_NANOS} (netdev_budget_usecs) with work left
 * and queues itself again behind the loop's other tasks (timers, I/O, apps), as the kernel defers to ksoftirqd.
 */
final class Softnet implements Runnable {
    /** net.core.netdev_budget_usecs: 2 ms of receive work per run before the loop's other tasks get their turn. */
    static final long BUDGET_NANOS = 2_000_000L;

    private static final VarHandle PENDING;
    private static final VarHandle RAISED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PENDING = l.findVarHandle(Softnet.class, "pending", Napi.class);
            RAISED = l.findVarHandle(Softnet.class, "raised", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final EventExecutor loop;
    // Scheduled entries, newest first (a lock-free stack any thread pushes onto); the loop takes it whole.
    @SuppressWarnings("unused")
    private volatile Napi pending;
    // NET_RX_SOFTIRQ raised: this task is queued on the loop or running. Only its transitions post the task.
    @SuppressWarnings("unused")
    private volatile boolean raised;
    // Taken from pending, oldest first, not yet run (loop thread only).
    private Napi local;

    Softnet(EventExecutor loop) {
        this.loop = loop;
    }

    /** napi_schedule: {@code n} joins the poll list; the loop is told only when nothing was raised yet. */
    void schedule(Napi n) {
        Napi head;
        do {
            head = (Napi) PENDING.getVolatile(this);
            n.pollNext = head;
        } while (!PENDING.compareAndSet(this, head, n));
        if (!(boolean) RAISED.getVolatile(this) && RAISED.compareAndSet(this, false, true)) {
            loop.execute(this);
        }
    }

    /** net_rx_action. */
    @Override
    public void run() {
        long deadline = System.nanoTime() + BUDGET_NANOS;
        while (true) {
            Napi n = local;
            if (n == null) {
                n = takePending();
                if (n == null) {
                    RAISED.setVolatile(this, false);
                    // A schedule between the take and the reset saw it raised and did not post: look once more.
                    if (PENDING.getVolatile(this) == null || !RAISED.compareAndSet(this, false, true)) {
                        return;
                    }
                    continue;
                }
            }
            local = n.pollNext;
            n.pollNext = null;
            try {
                n.run();
            } catch (RuntimeException | Error e) {
                // The loop logs it; the rest of the list still runs.
                loop.execute(this);
                throw e;
            }
            if (System.nanoTime() - deadline > 0 && (local != null || PENDING.getVolatile(this) != null)) {
                // Out of budget: the rest waits behind the loop's other tasks, still raised.
                loop.execute(this);
                return;
            }
        }
    }

    /** The pending list, oldest first (the stack reversed), or null. */
    private Napi takePending() {
        Napi n = (Napi) PENDING.getAndSet(this, (Napi) null);
        Napi prev = null;
        while (n != null) {
            Napi next = n.pollNext;
            n.pollNext = prev;
            prev = n;
            n = next;
        }
        return prev;
    }
}
