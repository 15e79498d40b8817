package dev.usnet.perf;

import io.netty.util.concurrent.EventExecutor;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/** CPU time and allocation of event-loop threads (by thread id), for the scenario benchmarks' per-loop figures. */
public final class LoopThreads {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private LoopThreads() {}

    /** The id of the thread {@code loop} runs on. */
    public static long threadId(EventExecutor loop) throws Exception {
        return loop.submit(() -> Thread.currentThread().threadId()).get(10, TimeUnit.SECONDS);
    }

    /** CPU time the threads {@code ids} have used so far, in ns (a thread without a figure counts 0). */
    public static long cpuNanos(long... ids) {
        long sum = 0;
        for (long id : ids) {
            sum += Math.max(0, THREADS.getThreadCpuTime(id));
        }
        return sum;
    }

    /** Bytes the threads {@code ids} have allocated so far (a thread without a figure counts 0). */
    public static long allocatedBytes(long... ids) {
        long sum = 0;
        for (long id : ids) {
            sum += Math.max(0, THREADS.getThreadAllocatedBytes(id));
        }
        return sum;
    }
}
