package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.usnet.core.knob.Knobs;
import dev.usnet.tcp.cc.KernelPreset;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The loss-recovery knobs: what each preset sets, one knob overriding one behaviour, the detector each choice gets. */
class LossSwitchesTest {

    private static List<String> values(LossSwitches ls) {
        return LossSwitches.KEYS.stream().map(ls::get).toList();
    }

    @Test
    void presetsSetTheTableOfTheDoc() {
        for (KernelPreset k : List.of(KernelPreset.V3_18, KernelPreset.V3_19, KernelPreset.V4_0, KernelPreset.V4_3)) {
            assertEquals(List.of("0", "1", "3", "0", "0", "3.x"), values(LossSwitches.forPreset(k)), k.label());
        }
        LossSwitches v6 = LossSwitches.forPreset(KernelPreset.V6);
        assertEquals(List.of("1", "0", "3", "2", "1", "6.x"), values(v6));
        assertEquals(true, v6.rack());
        assertEquals(true, v6.tlp());
        assertEquals(false, v6.earlyRetransmit(), "RACK replaced early retransmit");
        assertEquals(true, LossSwitches.forPreset(KernelPreset.V4_3).earlyRetransmit());
    }

    @Test
    void eachKnobOverridesOneBehaviourAndPresetFollowsTheKernel() {
        Knobs k = new Knobs();
        k.set("usnet.tcp.kernel", "6.x");
        k.set("net.ipv4.tcp_frto", "0");
        LossSwitches ls = TcpSysctl.lossSwitches(k);
        assertEquals(List.of("1", "0", "3", "0", "1", "6.x"), values(ls));
        k.set("net.ipv4.tcp_frto", "preset");
        k.set("usnet.tcp.kernel", "4.3");
        k.set("net.ipv4.tcp_recovery", "1");
        assertEquals(List.of("1", "1", "3", "0", "0", "3.x"), values(TcpSysctl.lossSwitches(k)));
        k.set("net.ipv4.tcp_early_retrans", "4");
        LossSwitches probesOnly = TcpSysctl.lossSwitches(k);
        assertEquals(true, probesOnly.tlp());
        assertEquals(false, probesOnly.earlyRetransmit());
    }

    @Test
    void badValuesNameTheKnobAndWhatItTakes() {
        Knobs k = new Knobs();
        assertEquals("net.ipv4.tcp_recovery: 8 is out of range 0..7",
                assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.tcp_recovery", "8")).getMessage());
        assertEquals("net.ipv4.tcp_frto: 'yes please' is not an integer (expected 0..2)",
                assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.tcp_frto", "yes please")).getMessage());
        assertEquals("usnet.tcp.tlp_pto: '5.x' is not one of 3.x, 6.x",
                assertThrows(IllegalArgumentException.class, () -> k.set("usnet.tcp.tlp_pto", "5.x")).getMessage());
        assertEquals("net.ipv4.tcp_early_retrans: 5 is out of range 0..4",
                assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.tcp_early_retrans", "5")).getMessage());
        assertEquals("preset", k.get("net.ipv4.tcp_recovery"), "a rejected value leaves the knob as it was");
    }

    /** The detector an established connection got under {@code knobs}. */
    private static LossDetector detectorWith(String... knobs) {
        try (SegmentHarness h = new SegmentHarness(knobs)) {
            return h.accept(SegmentHarness.PeerSyn.linux()).recovery.detector();
        }
    }

    @Test
    void theChooserPicksOneDetectorPerKnobSetting() {
        assertInstanceOf(FackDetector.class, detectorWith(), "4.3, the default: FACK");
        assertInstanceOf(Rfc6675Detector.class, detectorWith("net.ipv4.tcp_fack", "0"));
        assertInstanceOf(RackDetector.class, detectorWith("usnet.tcp.kernel", "6.x"));
        assertInstanceOf(Rfc6675Detector.class, detectorWith("usnet.tcp.kernel", "6.x", "net.ipv4.tcp_recovery", "0"),
                "6.x has no FACK to fall back to");
        assertInstanceOf(RackDetector.class, detectorWith("net.ipv4.tcp_recovery", "1"), "RACK on a 4.3 preset");
        assertInstanceOf(NewRenoDetector.class, detectorWith("usnet.tcp.kernel", "6.x", "net.ipv4.tcp_sack", "0"),
                "without SACK neither RACK nor FACK");
    }
}
