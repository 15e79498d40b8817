package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Knob values on a router, then traffic through it ({@link NamespaceUnderFuzz#fuzzKnobs}); and knob values alone,
 * as fast as the parser goes ({@link NamespaceUnderFuzz#fuzzKnobValues}).
 */
class KnobFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void knobs(byte[] data) {
        NamespaceUnderFuzz.fuzzKnobs(data);
    }

    @FuzzTest(maxDuration = "5m")
    void values(byte[] data) {
        NamespaceUnderFuzz.fuzzKnobValues(data);
    }
}
