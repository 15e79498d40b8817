package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * IPv6 frames alone into one dual-stack router kept across inputs ({@link NamespaceUnderFuzz#fuzzIpv6Input}): the
 * IPv6 header check, extension-header walk, reassembly, ICMPv6 and neighbour discovery at the rate a wire parser
 * target runs. Without JAZZER_FUZZ the corpus under
 * {@code src/test/resources/dev/usnet/core/fuzz/Ipv6InputFuzzTestInputs/} is replayed.
 */
class Ipv6InputFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void input(byte[] data) {
        NamespaceUnderFuzz.fuzzIpv6Input(data);
    }
}
