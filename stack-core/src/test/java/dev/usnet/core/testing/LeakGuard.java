package dev.usnet.core.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails the test class when Netty's leak detector (PARANOID in every test JVM) reports a leaked buffer.
 * Registered for every test through JUnit's extension auto-detection, so it is installed before any buffer
 * is allocated; each class ends with a GC and a poll of the detector.
 */
public final class LeakGuard implements AfterAllCallback {
    private static final List<String> LEAKS = new ArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                       long maxActive) {
                return new ResourceLeakDetector<>(resource, samplingInterval) {
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
