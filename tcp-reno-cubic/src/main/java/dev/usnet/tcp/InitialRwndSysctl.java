package dev.usnet.tcp;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.Knob.Applies;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.knob.SysctlTable;
import dev.usnet.core.knob.ValueKnob;
import java.util.List;

/**
 * {@code usnet.tcp.init_rwnd}: how tcp_select_initial_window sizes the receive window a SYN or SYN-ACK offers.
 * Up to Linux 4.19 it offered at most TCP_DEFAULT_INIT_RCVWND (10) segments of the buffer's space; from 4.20
 * ("up initial rmem to 128KB and SYN rwin to around 64KB") it offers the whole initial space, rounded down to
 * whole segments and capped at 65535 (the largest unscaled window), a route's initrwnd metric aside. Every preset
 * usnet has (3.18-4.3) predates that change, so {@code preset} means {@code segments} until a newer one exists.
 */
public final class InitialRwndSysctl implements SysctlTable {
    /** The two rules. */
    public enum Rule {
        /** Linux 3.x-4.19: at most 10 segments (fewer above MSS 1460, tcp_default_init_rwnd). */
        SEGMENTS,
        /** Linux 4.20+: the whole initial space, whole segments, at most 65535. */
        SPACE
    }

    public static final String FOLLOW_PRESET = "preset";

    public static final ValueKnob<String> INIT_RWND = ValueKnob.defineWord("usnet.tcp.init_rwnd", FOLLOW_PRESET,
            InitialRwndSysctl::check, Applies.NEW_SOCKETS,
            "initial receive window of a SYN/SYN-ACK: segments (Linux 3.x-4.19, 10 segments), space (4.20+, the "
                    + "whole initial space up to 65535), preset (follows usnet.tcp.kernel: segments for 3.18-4.3)");

    private static String check(String v) {
        return switch (v) {
            case FOLLOW_PRESET, "segments", "space" -> v;
            default -> throw new IllegalArgumentException("'" + v + "' is not one of preset, segments, space");
        };
    }

    /** The rule in force in a namespace with these knobs. */
    static Rule rule(Knobs knobs) {
        return switch (knobs.get(INIT_RWND)) {
            case "space" -> Rule.SPACE;
            // "segments", and "preset": every preset usnet models predates Linux 4.20.
            default -> Rule.SEGMENTS;
        };
    }

    /** For {@link java.util.ServiceLoader}; the knob itself is the static field. */
    public InitialRwndSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return List.of(INIT_RWND);
    }
}
