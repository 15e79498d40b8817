package dev.usnet.tcp.cc;

import java.util.List;
import java.util.Locale;

/**
 * The individual behaviours that differ between kernel versions; a {@link KernelPreset} sets all of them, and
 * each can be overridden on its own ({@link #withOverride}) to combine them. Keys are {@code usnet.tcp.*} knobs.
 *
 * @param ai                how tcp_cong_avoid_ai credits ACKs ({@code usnet.tcp.ai})
 * @param ssLeftover        slow start returns the unused part of {@code acked} to additive increase (3.19+)
 *                          ({@code usnet.tcp.ss_leftover})
 * @param ssWhileLeq        slow start while cwnd &lt;= ssthresh (before 4.3) rather than cwnd &lt; ssthresh
 *                          ({@code usnet.tcp.ss_while_leq})
 * @param ssCap             where slow start stops: ssthresh + 1 (before 4.3) or ssthresh ({@code usnet.tcp.ss_cap})
 * @param cubicCntFloor     the smallest CUBIC cnt: 1 before 4.0, 2 from 4.0 ({@code usnet.tcp.cubic_cnt_floor})
 * @param cubicIdleShift    CUBIC shifts its epoch by the idle time on CA_EVENT_TX_START (4.3+)
 *                          ({@code usnet.tcp.cubic_idle_shift})
 * @param cubicPerPacket    CUBIC counts acknowledged packets (3.19+) rather than ACKs scaled by its delayed-ACK
 *                          ratio (3.18) ({@code usnet.tcp.cubic_per_packet})
 * @param cubicJiffyUpdate  CUBIC recomputes cnt at most once per jiffy but applies TCP friendliness on every
 *                          call (3.19+), rather than skipping the whole update while cwnd is unchanged and at most
 *                          HZ/32 passed (3.18) ({@code usnet.tcp.cubic_jiffy_update})
 * @param cubicHystartUs    CUBIC keeps delay_min and the HyStart clock in µs as Linux 5.6+ does, rather than in
 *                          ms (ms × 8 for delay_min) as 3.18–5.5 do; on only in the 6.x preset
 *                          ({@code usnet.tcp.cubic_hystart_us})
 */
public record CcSwitches(AiMode ai, boolean ssLeftover, boolean ssWhileLeq, SsCap ssCap, int cubicCntFloor,
                         boolean cubicIdleShift, boolean cubicPerPacket, boolean cubicJiffyUpdate,
                         boolean cubicHystartUs) {

    /** tcp_cong_avoid_ai variants. */
    public enum AiMode {
        /** 3.18: +1 every w+1 calls; acked has no effect. */
        PER_ACK("per-ack"),
        /** 3.19: cnt += acked, cwnd += cnt / w; credit from a larger w is paid out at once. */
        ACCUMULATE("accumulate"),
        /** 4.0+: as ACCUMULATE, but credit already at least w on entry only adds 1 and is reset. */
        GENTLE("gentle");

        private final String word;

        AiMode(String word) {
            this.word = word;
        }

        /** The knob value ({@code usnet.tcp.ai=per-ack}). */
        public String word() {
            return word;
        }
    }

    /** Slow-start ceiling. */
    public enum SsCap {
        SSTHRESH_PLUS_ONE("ssthresh+1"),
        SSTHRESH("ssthresh");

        private final String word;

        SsCap(String word) {
            this.word = word;
        }

        /** The knob value ({@code usnet.tcp.ss_cap=ssthresh+1}). */
        public String word() {
            return word;
        }
    }

    public static final String AI = "usnet.tcp.ai";
    public static final String SS_LEFTOVER = "usnet.tcp.ss_leftover";
    public static final String SS_WHILE_LEQ = "usnet.tcp.ss_while_leq";
    public static final String SS_CAP = "usnet.tcp.ss_cap";
    public static final String CUBIC_CNT_FLOOR = "usnet.tcp.cubic_cnt_floor";
    public static final String CUBIC_IDLE_SHIFT = "usnet.tcp.cubic_idle_shift";
    public static final String CUBIC_PER_PACKET = "usnet.tcp.cubic_per_packet";
    public static final String CUBIC_JIFFY_UPDATE = "usnet.tcp.cubic_jiffy_update";
    public static final String CUBIC_HYSTART_US = "usnet.tcp.cubic_hystart_us";

    /** Every switch's knob key, in record order. */
    public static final List<String> KEYS = List.of(AI, SS_LEFTOVER, SS_WHILE_LEQ, SS_CAP, CUBIC_CNT_FLOOR,
            CUBIC_IDLE_SHIFT, CUBIC_PER_PACKET, CUBIC_JIFFY_UPDATE, CUBIC_HYSTART_US);

    public CcSwitches {
        if (ai == null || ssCap == null) {
            throw new IllegalArgumentException("ai and ssCap must be set");
        }
        if (cubicCntFloor != 1 && cubicCntFloor != 2) {
            throw new IllegalArgumentException(CUBIC_CNT_FLOOR + ": " + cubicCntFloor + " is not one of 1, 2");
        }
    }

    /**
     * A copy with the switch {@code key} set from its knob value; {@code this} is unchanged.
     *
     * @throws IllegalArgumentException for an unknown key or a value the key does not take, naming both
     */
    public CcSwitches withOverride(String key, String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        return switch (key) {
            case AI -> new CcSwitches(parseAi(v, value), ssLeftover, ssWhileLeq, ssCap, cubicCntFloor, cubicIdleShift,
                    cubicPerPacket, cubicJiffyUpdate, cubicHystartUs);
            case SS_LEFTOVER -> new CcSwitches(ai, bool(key, v, value), ssWhileLeq, ssCap, cubicCntFloor, cubicIdleShift,
                    cubicPerPacket, cubicJiffyUpdate, cubicHystartUs);
            case SS_WHILE_LEQ -> new CcSwitches(ai, ssLeftover, bool(key, v, value), ssCap, cubicCntFloor, cubicIdleShift,
                    cubicPerPacket, cubicJiffyUpdate, cubicHystartUs);
            case SS_CAP -> new CcSwitches(ai, ssLeftover, ssWhileLeq, parseSsCap(v, value), cubicCntFloor, cubicIdleShift,
                    cubicPerPacket, cubicJiffyUpdate, cubicHystartUs);
            case CUBIC_CNT_FLOOR -> new CcSwitches(ai, ssLeftover, ssWhileLeq, ssCap, parseFloor(v, value), cubicIdleShift,
                    cubicPerPacket, cubicJiffyUpdate, cubicHystartUs);
            case CUBIC_IDLE_SHIFT -> new CcSwitches(ai, ssLeftover, ssWhileLeq, ssCap, cubicCntFloor, bool(key, v, value),
                    cubicPerPacket, cubicJiffyUpdate, cubicHystartUs);
            case CUBIC_PER_PACKET -> new CcSwitches(ai, ssLeftover, ssWhileLeq, ssCap, cubicCntFloor, cubicIdleShift,
                    bool(key, v, value), cubicJiffyUpdate, cubicHystartUs);
            case CUBIC_JIFFY_UPDATE -> new CcSwitches(ai, ssLeftover, ssWhileLeq, ssCap, cubicCntFloor, cubicIdleShift,
                    cubicPerPacket, bool(key, v, value), cubicHystartUs);
            case CUBIC_HYSTART_US -> new CcSwitches(ai, ssLeftover, ssWhileLeq, ssCap, cubicCntFloor, cubicIdleShift,
                    cubicPerPacket, cubicJiffyUpdate, bool(key, v, value));
            default -> throw new IllegalArgumentException("'" + key + "' is not a congestion-control switch; the switches are "
                    + String.join(", ", KEYS));
        };
    }

    /** The knob value of switch {@code key} as {@link #withOverride} takes it (so the two round-trip). */
    public String get(String key) {
        return switch (key) {
            case AI -> ai.word();
            case SS_LEFTOVER -> Boolean.toString(ssLeftover);
            case SS_WHILE_LEQ -> Boolean.toString(ssWhileLeq);
            case SS_CAP -> ssCap.word();
            case CUBIC_CNT_FLOOR -> Integer.toString(cubicCntFloor);
            case CUBIC_IDLE_SHIFT -> Boolean.toString(cubicIdleShift);
            case CUBIC_PER_PACKET -> Boolean.toString(cubicPerPacket);
            case CUBIC_JIFFY_UPDATE -> Boolean.toString(cubicJiffyUpdate);
            case CUBIC_HYSTART_US -> Boolean.toString(cubicHystartUs);
            default -> throw new IllegalArgumentException("'" + key + "' is not a congestion-control switch; the switches are "
                    + String.join(", ", KEYS));
        };
    }

    private static AiMode parseAi(String v, String raw) {
        for (AiMode m : AiMode.values()) {
            if (m.word.equals(v)) {
                return m;
            }
        }
        throw new IllegalArgumentException(AI + ": '" + raw + "' is not one of per-ack, accumulate, gentle");
    }

    private static SsCap parseSsCap(String v, String raw) {
        for (SsCap c : SsCap.values()) {
            if (c.word.equals(v)) {
                return c;
            }
        }
        throw new IllegalArgumentException(SS_CAP + ": '" + raw + "' is not one of ssthresh+1, ssthresh");
    }

    private static int parseFloor(String v, String raw) {
        return switch (v) {
            case "1" -> 1;
            case "2" -> 2;
            default -> throw new IllegalArgumentException(CUBIC_CNT_FLOOR + ": '" + raw + "' is not one of 1, 2");
        };
    }

    /** Booleans as sysctls write them (1/0) or as words. */
    private static boolean bool(String key, String v, String raw) {
        return switch (v) {
            case "1", "true", "on", "yes" -> true;
            case "0", "false", "off", "no" -> false;
            default -> throw new IllegalArgumentException(key + ": '" + raw + "' is not a boolean (1, 0, true, false)");
        };
    }
}
