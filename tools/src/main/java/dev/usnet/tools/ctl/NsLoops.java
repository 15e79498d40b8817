package dev.usnet.tools.ctl;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;

/**
 * Where a control request touches a namespace: on the thread that runs that namespace's packets and timers, so a
 * request never races the data path. In real time that is the namespace's event loop ({@link RealTimeScheduler});
 * in virtual time every namespace runs on the one thread that drives the virtual clock, which takes requests
 * between slices of virtual time ({@link Virtual#drain}).
 */
public interface NsLoops {
    /** Runs {@code task} on {@code stack}'s thread; the future completes with its result or its exception. */
    <T> CompletableFuture<T> submit(NetStack stack, Callable<T> task);

    /**
     * Runs {@code task} where changes that belong to no namespace yet run (creating one): the caller's thread in
     * real time, the clock's thread in virtual time.
     */
    <T> CompletableFuture<T> submitGlobal(Callable<T> task);

    /** Event loops in real time: each namespace's {@link RealTimeScheduler#executor()}. */
    static NsLoops realTime() {
        return new NsLoops() {
            @Override
            public <T> CompletableFuture<T> submit(NetStack stack, Callable<T> task) {
                CompletableFuture<T> f = new CompletableFuture<>();
                if (!(stack.scheduler() instanceof RealTimeScheduler rt)) {
                    f.completeExceptionally(new IllegalStateException("namespace " + stack.name() + " is not on an event loop"));
                    return f;
                }
                try {
                    rt.executor().execute(() -> run(task, f));
                } catch (RejectedExecutionException e) {
                    f.completeExceptionally(new CtlException("namespace " + stack.name() + " is shutting down"));
                }
                return f;
            }

            @Override
            public <T> CompletableFuture<T> submitGlobal(Callable<T> task) {
                CompletableFuture<T> f = new CompletableFuture<>();
                run(task, f);
                return f;
            }
        };
    }

    private static <T> void run(Callable<T> task, CompletableFuture<T> f) {
        try {
            f.complete(task.call());
        } catch (Throwable t) {
            f.completeExceptionally(t);
        }
    }

    /**
     * Virtual time: requests wait in an inbox that the clock's thread empties between slices ({@link #drain}), at
     * the virtual instant it has reached. A run that takes no requests is the same run as without this.
     */
    final class Virtual implements NsLoops {
        private record Pending(Runnable run, CompletableFuture<?> future) {}

        private final ConcurrentLinkedQueue<Pending> inbox = new ConcurrentLinkedQueue<>();
        private volatile boolean closed;

        @Override
        public <T> CompletableFuture<T> submit(NetStack stack, Callable<T> task) {
            return submitGlobal(task);
        }

        @Override
        public <T> CompletableFuture<T> submitGlobal(Callable<T> task) {
            CompletableFuture<T> f = new CompletableFuture<>();
            if (closed) {
                f.completeExceptionally(new CtlException("the virtual run has ended"));
                return f;
            }
            inbox.add(new Pending(() -> run(task, f), f));
            if (closed) {
                close();
            }
            return f;
        }

        /** Runs every waiting request; called by the thread that drives the virtual clock. */
        public void drain() {
            Pending p;
            while ((p = inbox.poll()) != null) {
                p.run().run();
            }
        }

        /** The run is over: requests still waiting, and any that come, fail. */
        public void close() {
            closed = true;
            Pending p;
            while ((p = inbox.poll()) != null) {
                p.future().completeExceptionally(new CtlException("the virtual run has ended"));
            }
        }
    }
}
