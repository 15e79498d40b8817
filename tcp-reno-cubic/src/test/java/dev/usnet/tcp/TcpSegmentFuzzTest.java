package dev.usnet.tcp;

import com.code_intelligence.jazzer.junit.FuzzTest;

/** A TCP listener and an established connection fed arbitrary segments: {@link TcpUnderFuzz}. */
class TcpSegmentFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void listener(byte[] data) {
        TcpUnderFuzz.fuzzListener(data);
    }

    @FuzzTest(maxDuration = "5m")
    void established(byte[] data) {
        TcpUnderFuzz.fuzzEstablished(data);
    }
}
