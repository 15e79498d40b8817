package dev.usnet.core.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocatorMetric;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails the test class when Netty's leak detector (PARANOID in every test JVM) reports a leaked buffer.
 * Registered for every test through JUnit's extension auto-detection, so it is installed before any buffer
 * is allocated; each class ends with a GC and a poll of the detector. It also counts the buffers the detector
 * tracks that are not yet released ({@link #liveBuffers()}), an exact leak check without waiting for a GC.
 */
public final class LeakGuard implements AfterAllCallback {
    private static final List<String> LEAKS = new ArrayList<>();
    private static final AtomicLong LIVE = new AtomicLong();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                       long maxActive) {
                return new ResourceLeakDetector<>(resource, samplingInterval) {
                    @Override
                    public ResourceLeakTracker<T> track(T obj) {
                        return counted(super.track(obj));
                    }

                    @Override
                    public ResourceLeakTracker<T> trackForcibly(T obj) {
                        return counted(super.trackForcibly(obj));
                    }

                    @Override
                    protected void reportTracedLeak(String resourceType, String records) {
                        record("LEAK: " + resourceType + records);
                    }

                    @Override
                    protected void reportUntracedLeak(String resourceType) {
                        record("LEAK: " + resourceType + " (untraced)");
                    }

                    @Override
                    protected boolean needReport() {
                        return true;
                    }
                };
            }
        });
    }

    private static <T> ResourceLeakTracker<T> counted(ResourceLeakTracker<T> t) {
        if (t == null) {
            return null;
        }
        LIVE.incrementAndGet();
        AtomicBoolean closed = new AtomicBoolean();
        return new ResourceLeakTracker<>() {
            @Override
            public void record() {
                t.record();
            }

            @Override
            public void record(Object hint) {
                t.record(hint);
            }

            @Override
            public boolean close(T trackedObject) {
                boolean c = t.close(trackedObject);
                if (c && closed.compareAndSet(false, true)) {
                    LIVE.decrementAndGet();
                }
                return c;
            }

            @Override
            public Throwable getCloseStackTraceIfAny() {
                return t.getCloseStackTraceIfAny();
            }
        };
    }

    /**
     * Buffers allocated and not yet released. A test that takes this before and after a piece of work that should
     * free everything it allocated sees a leak at once, without a GC. Under PARANOID (every test JVM) it is what
     * the leak detector tracks; with the detector off (fuzzing, where PARANOID's stack traces cost 10x the
     * throughput) it is the pooled allocator's active allocations, exact only when its thread caches are off
     * ({@code -Dio.netty.allocator.smallCacheSize=0 -Dio.netty.allocator.normalCacheSize=0}, as {@code usnet fuzz}
     * runs).
     */
    public static long liveBuffers() {
        if (ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.PARANOID) {
            return LIVE.get();
        }
        PooledByteBufAllocatorMetric m = PooledByteBufAllocator.DEFAULT.metric();
        long n = 0;
        for (PoolArenaMetric a : m.directArenas()) {
            n += a.numActiveAllocations();
        }
        for (PoolArenaMetric a : m.heapArenas()) {
            n += a.numActiveAllocations();
        }
        return n;
    }

    private static synchronized void record(String s) {
        LEAKS.add(s);
    }

    /** Collects garbage and makes the detector look at what was collected; returns leaks seen so far. */
    public static synchronized List<String> collect() {
        for (int i = 0; i < 4; i++) {
            System.gc();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(1);
            b.release();
            ByteBuf h = PooledByteBufAllocator.DEFAULT.heapBuffer(1);
            h.release();
        }
        List<String> l = new ArrayList<>(LEAKS);
        LEAKS.clear();
        return l;
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (System.getenv("JAZZER_FUZZ") != null && !System.getenv("JAZZER_FUZZ").isEmpty()) {
            // Fuzzing runs with the detector off; each input checked liveBuffers() itself.
            return;
        }
        if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
            throw new AssertionError("tests must run with -Dio.netty.leakDetection.level=PARANOID");
        }
        List<String> leaks = collect();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " buffer leak(s) after " + context.getDisplayName() + ":\n"
                    + String.join("\n", leaks));
        }
    }
}
