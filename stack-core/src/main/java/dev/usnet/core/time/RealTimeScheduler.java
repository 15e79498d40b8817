package dev.usnet.core.time;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Wall-clock time on a Netty event executor: the same stack code, real timers, real I/O. One scheduler per loop
 * (a CPU), shared by the namespaces it carries, gathers their receive work into one poll list ({@link Softnet});
 * namespaces given schedulers of their own on one loop work too, with a poll list each.
 */
public final class RealTimeScheduler implements Scheduler {
    private final EventExecutor executor;
    private final Softnet softnet;

    public RealTimeScheduler(EventExecutor executor) {
        this.executor = executor;
        this.softnet = new Softnet(executor);
    }

    public EventExecutor executor() {
        return executor;
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void execute(Runnable task) {
        executor.execute(task);
    }

    @Override
    public void napiSchedule(Napi napi) {
        softnet.schedule(napi);
    }

    @Override
    public Timeout schedule(Runnable task, long delayNanos) {
        ScheduledFuture<?> f = executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        return new Timeout() {
            @Override
            public void cancel() {
                f.cancel(false);
            }

            @Override
            public boolean isPending() {
                return !f.isDone();
            }
        };
    }

    @Override
    public boolean inLoop() {
        return executor.inEventLoop();
    }

    @Override
    public boolean isVirtual() {
        return false;
    }
}
