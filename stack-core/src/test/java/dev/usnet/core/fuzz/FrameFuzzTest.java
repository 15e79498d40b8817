package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Frames into a router and into a bridge namespace ({@link NamespaceUnderFuzz} builds them and checks the
 * invariants after every frame and input; {@link FrameScript} reads the input). Without JAZZER_FUZZ the corpus
 * under {@code src/test/resources/dev/usnet/core/fuzz/FrameFuzzTestInputs/} is replayed; {@code ./usnet fuzz
 * router|bridge} fuzzes.
 */
class FrameFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void router(byte[] data) {
        NamespaceUnderFuzz.fuzz(NamespaceUnderFuzz.Kind.ROUTER, data);
    }

    @FuzzTest(maxDuration = "5m")
    void bridge(byte[] data) {
        NamespaceUnderFuzz.fuzz(NamespaceUnderFuzz.Kind.BRIDGE, data);
    }
}
