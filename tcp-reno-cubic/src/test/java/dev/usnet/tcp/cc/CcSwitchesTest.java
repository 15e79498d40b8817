package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-switch overrides: values each key takes, what they change, and the messages for what they reject. */
class CcSwitchesTest {
    private static final CcSwitches K40 = KernelPreset.V4_0.switches();

    @Test
    void presetsSetTheTableOfTheDoc() {
        CcSwitches k318 = KernelPreset.V3_18.switches();
        assertEquals(List.of("per-ack", "false", "true", "ssthresh+1", "1", "false", "false", "false", "false"),
                CcSwitches.KEYS.stream().map(k318::get).toList());
        CcSwitches k319 = KernelPreset.V3_19.switches();
        assertEquals(List.of("accumulate", "true", "true", "ssthresh+1", "1", "false", "true", "true", "false"),
                CcSwitches.KEYS.stream().map(k319::get).toList());
        assertEquals(List.of("gentle", "true", "true", "ssthresh+1", "2", "false", "true", "true", "false"),
                CcSwitches.KEYS.stream().map(K40::get).toList());
        CcSwitches k43 = KernelPreset.V4_3.switches();
        assertEquals(List.of("gentle", "true", "false", "ssthresh", "2", "true", "true", "true", "false"),
                CcSwitches.KEYS.stream().map(k43::get).toList());
        // 6.x: as 4.3, with HyStart's delay clock in µs (Linux 5.6+).
        CcSwitches k6 = KernelPreset.V6.switches();
        assertEquals(List.of("gentle", "true", "false", "ssthresh", "2", "true", "true", "true", "true"),
                CcSwitches.KEYS.stream().map(k6::get).toList());
    }

    @Test
    void eachOverrideChangesOnlyItsSwitch() {
        String[][] v = {
            {CcSwitches.AI, "accumulate"}, {CcSwitches.SS_LEFTOVER, "0"}, {CcSwitches.SS_WHILE_LEQ, "false"},
            {CcSwitches.SS_CAP, "ssthresh"}, {CcSwitches.CUBIC_CNT_FLOOR, "1"}, {CcSwitches.CUBIC_IDLE_SHIFT, "1"},
            {CcSwitches.CUBIC_PER_PACKET, "false"}, {CcSwitches.CUBIC_JIFFY_UPDATE, "off"}, {CcSwitches.CUBIC_HYSTART_US, "true"}};
        assertEquals(CcSwitches.KEYS.size(), v.length);
        for (String[] kv : v) {
            CcSwitches o = K40.withOverride(kv[0], kv[1]);
            assertNotEquals(K40, o, kv[0]);
            for (String other : CcSwitches.KEYS) {
                if (!other.equals(kv[0])) {
                    assertEquals(K40.get(other), o.get(other), kv[0] + " changed " + other);
                }
            }
            // get and withOverride round-trip.
            assertEquals(o, K40.withOverride(kv[0], o.get(kv[0])));
        }
        assertEquals("gentle", K40.get(CcSwitches.AI), "the original is unchanged");
    }

    @Test
    void valuesAreParsedLikeSysctls() {
        assertEquals(CcSwitches.AiMode.PER_ACK, K40.withOverride("usnet.tcp.ai", " Per-Ack ").ai());
        assertEquals(CcSwitches.SsCap.SSTHRESH_PLUS_ONE,
                KernelPreset.V4_3.switches().withOverride("usnet.tcp.ss_cap", "ssthresh+1").ssCap());
        assertTrue(K40.withOverride("usnet.tcp.cubic_idle_shift", "yes").cubicIdleShift());
        assertEquals(1, K40.withOverride("usnet.tcp.cubic_cnt_floor", "1").cubicCntFloor());
    }

    @Test
    void rejectionsNameTheKeyAndWhatItTakes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> K40.withOverride("usnet.tcp.ai", "fast"));
        assertEquals("usnet.tcp.ai: 'fast' is not one of per-ack, accumulate, gentle", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> K40.withOverride("usnet.tcp.ss_cap", "2"));
        assertEquals("usnet.tcp.ss_cap: '2' is not one of ssthresh+1, ssthresh", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> K40.withOverride("usnet.tcp.cubic_cnt_floor", "3"));
        assertEquals("usnet.tcp.cubic_cnt_floor: '3' is not one of 1, 2", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> K40.withOverride("usnet.tcp.ss_leftover", "maybe"));
        assertEquals("usnet.tcp.ss_leftover: 'maybe' is not a boolean (1, 0, true, false)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> K40.withOverride("usnet.tcp.cubic_beta", "717"));
        assertTrue(e.getMessage().startsWith("'usnet.tcp.cubic_beta' is not a congestion-control switch; the switches are usnet.tcp.ai, "),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> K40.get("usnet.tcp.kernel"));
        assertThrows(IllegalArgumentException.class, () -> K40.withOverride("usnet.tcp.cubic_idle_shift", null));
    }

    @Test
    void overridesReachTheAlgorithms() {
        // Slow start of 4.3 with 4.0's condition: (10, 0, 10, 3) slow-starts again (cap ssthresh, leftover 2).
        CcSwitches s = KernelPreset.V4_3.switches().withOverride(CcSwitches.SS_WHILE_LEQ, "1");
        CwndState st = new CwndState(10, 0, 10);
        RenoCongAvoid.congAvoid(st, 3, s);
        assertEquals("10/3", st.toString(), "cap ssthresh: no growth, all 3 left over to AI");
        st = new CwndState(10, 0, 10);
        RenoCongAvoid.congAvoid(st, 3, s.withOverride(CcSwitches.SS_CAP, "ssthresh+1"));
        assertEquals("11/2", st.toString());
    }
}
