package dev.usnet.tcp.cc;

/**
 * {@code usnet.tcp.kernel}: the congestion-avoidance behaviour of a Linux version, as a set of switches that
 * can also be set one by one (see {@link CcSwitches}); the preset also sets how losses are detected and repaired
 * ({@code dev.usnet.tcp.LossSwitches}).
 */
public enum KernelPreset {
    /** Linux 3.18: per-ACK additive increase (acked ignored), no slow-start leftover. */
    V3_18("3.18"),
    /** Linux 3.19: accumulated credit paid out at once (the credit bug), slow-start leftover fed to AI. */
    V3_19("3.19"),
    /** Linux 4.0–4.2: as 3.19 but credit from a larger window is applied gently; CUBIC cnt floor 2. */
    V4_0("4.0"),
    /** Linux 4.3 and later: slow start while cwnd &lt; ssthresh capped at ssthresh; CUBIC epoch shifted by idle time. */
    V4_3("4.3"),
    /**
     * Linux 6.x (today's kernel): CUBIC as 4.3 with HyStart's delay clock in µs; RACK-TLP loss detection, F-RTO
     * and D-SACK undo (see {@code dev.usnet.tcp.LossSwitches}).
     */
    V6("6.x");

    private final String label;

    KernelPreset(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    public static KernelPreset parse(String s) {
        for (KernelPreset k : values()) {
            if (k.label.equals(s)) {
                return k;
            }
        }
        if (s.equals("4.1") || s.equals("4.2")) {
            return V4_0;
        }
        throw new IllegalArgumentException("usnet.tcp.kernel: '" + s + "' is not one of 3.18, 3.19, 4.0, 4.3, 6.x");
    }

    /**
     * The switches of this version. The CUBIC columns: 3.18 counts ACKs scaled by a delayed-ACK ratio and skips
     * updates for HZ/32 while cwnd is unchanged; 3.19 counts packets and
     * recomputes once per jiffy; 4.0 raises the cnt floor to 2; 4.3 shifts the epoch over idle time. All but 6.x
     * use the ms HyStart clock (5.6 moved it to µs).
     */
    public CcSwitches switches() {
        return switch (this) {
            case V3_18 -> new CcSwitches(CcSwitches.AiMode.PER_ACK, false, true, CcSwitches.SsCap.SSTHRESH_PLUS_ONE, 1, false,
                    false, false, false);
            case V3_19 -> new CcSwitches(CcSwitches.AiMode.ACCUMULATE, true, true, CcSwitches.SsCap.SSTHRESH_PLUS_ONE, 1, false,
                    true, true, false);
            case V4_0 -> new CcSwitches(CcSwitches.AiMode.GENTLE, true, true, CcSwitches.SsCap.SSTHRESH_PLUS_ONE, 2, false,
                    true, true, false);
            case V4_3 -> new CcSwitches(CcSwitches.AiMode.GENTLE, true, false, CcSwitches.SsCap.SSTHRESH, 2, true,
                    true, true, false);
            case V6 -> new CcSwitches(CcSwitches.AiMode.GENTLE, true, false, CcSwitches.SsCap.SSTHRESH, 2, true,
                    true, true, true);
        };
    }
}
