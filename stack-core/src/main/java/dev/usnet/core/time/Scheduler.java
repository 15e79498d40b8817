package dev.usnet.core.time;

import dev.usnet.core.stats.CpuAccount;

/**
 * The clock and executor a namespace runs on. One interface, two implementations: virtual time (a
 * deterministic discrete-event queue) and real time (a Netty event loop). Every timer in the stack goes
 * through it.
 */
public interface Scheduler {
    /** Now, in nanoseconds, on this scheduler's clock. */
    long nanoTime();

    /** Runs {@code task} soon on this scheduler's thread, after what is already queued for now. */
    void execute(Runnable task);

    /** Runs {@code task} after {@code delayNanos}; the handle cancels it. */
    Timeout schedule(Runnable task, long delayNanos);

    /**
     * napi_schedule: runs {@code napi} soon on this scheduler's thread, like {@link #execute}; a real-time loop
     * gathers what is scheduled for all its namespaces into one task ({@link Softnet}). The caller makes sure
     * {@code napi} is not scheduled already.
     */
    default void napiSchedule(Napi napi) {
        execute(napi);
    }

    /**
     * A receive run handled {@code frames} frames: the unit of work virtual time's watchdog counts, beside the
     * events themselves, to tell a run stuck at one instant ({@link VirtualScheduler#stallLimit()}).
     */
    default void ranFrames(int frames) {
    }

    /**
     * Runs {@code task} after {@code delayNanos}, never cancelled: for the stack's own recurring work (a
     * receive backlog run delayed by the CPU model), which a virtual scheduler runs without allocating.
     */
    default void executeAfter(Runnable task, long delayNanos) {
        schedule(task, delayNanos);
    }

    /**
     * Like {@link #schedule(Runnable, long)}, with the callback's run time measured into {@code account}
     * (the namespace whose timer it is), on the thread that runs it.
     */
    default Timeout schedule(Runnable task, long delayNanos, CpuAccount account) {
        return schedule(() -> {
            long t0 = System.nanoTime();
            try {
                task.run();
            } finally {
                account.addMeasuredTimer(System.nanoTime() - t0);
            }
        }, delayNanos);
    }

    /**
     * The modelled machine called {@code name} on this scheduler (usnet.cpu.machine), made by the first namespace
     * that names it; null where machines are not modelled (real time only accounts the CPU model).
     */
    default CpuMachine cpuMachine(String name) {
        return null;
    }

    /** True when called from the thread that runs this scheduler's tasks. */
    boolean inLoop();

    /** True when time is simulated (no wall-clock waits). */
    boolean isVirtual();
}
