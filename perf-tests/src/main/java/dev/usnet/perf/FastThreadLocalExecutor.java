package dev.usnet.perf;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * JMH worker threads as Netty {@link FastThreadLocalThread}s, like the event-loop threads a real-time usnet
 * namespace runs on ({@code RealTimeScheduler}). Selected with {@code -Djmh.executor=CUSTOM
 * -Djmh.executor.class=dev.usnet.perf.FastThreadLocalExecutor} (every benchmark's {@code @Fork} sets it).
 *
 * <p>It matters: with Netty 4.2 on a plain thread the pooled allocator recycles neither its buffer objects nor
 * its per-thread caches, so every {@code Packet.allocate} leaves about 176 B of garbage behind, hiding
 * whatever the stack itself allocates. Run with {@code -jvmArgsAppend -Djmh.executor=PLATFORM} to see the
 * plain-thread numbers (what a virtual-time run driven from {@code main} pays).
 */
public final class FastThreadLocalExecutor extends ThreadPoolExecutor {
    public FastThreadLocalExecutor(int maxThreads, String prefix) {
        super(maxThreads, maxThreads, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), new Factory(prefix));
    }

    private static final class Factory implements java.util.concurrent.ThreadFactory {
        private final String prefix;
        private final AtomicInteger n = new AtomicInteger();

        Factory(String prefix) {
            this.prefix = prefix;
        }

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new FastThreadLocalThread(r, prefix + "-ftl-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
    }
}
