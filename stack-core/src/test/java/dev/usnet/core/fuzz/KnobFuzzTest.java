package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;

/** Knob values on a router, then traffic through it: {@link NamespaceUnderFuzz#fuzzKnobs}. */
class KnobFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void knobs(byte[] data) {
        NamespaceUnderFuzz.fuzzKnobs(data);
    }
}
