package dev.usnet.core.netem;

import dev.usnet.core.knob.DeviceSpecKnob;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * Link emulation's knobs: each device's {@code usnet.netem.<dev>} (a whole tc-like spec) and
 * {@code usnet.netem.<dev>.<param>} (one parameter), the settings of its netem qdisc. A device's transmit reads
 * them with {@link #NETEM}'s {@code get}, an array element.
 */
public final class NetemSysctl implements SysctlTable {
    /** The per-device family of link emulation's settings. */
    public static final String FAMILY = "usnet.netem.";

    /** {@link NetemParams}' text forms, as a knob value. */
    private static final DeviceSpecKnob.Syntax<NetemParams> SYNTAX = new DeviceSpecKnob.Syntax<>() {
        @Override
        public NetemParams none() {
            return NetemParams.NONE;
        }

        @Override
        public boolean isNone(NetemParams value) {
            return value.isNone();
        }

        @Override
        public NetemParams parse(String text) {
            return NetemParams.parse(text);
        }

        @Override
        public String format(NetemParams value) {
            return value.format();
        }

        @Override
        public List<String> params() {
            return NetemParams.PARAMS;
        }

        @Override
        public String get(NetemParams value, String param) {
            return value.get(param);
        }

        @Override
        public NetemParams with(NetemParams value, String param, String text) {
            return value.with(param, text);
        }
    };

    /** A device's link emulation; a device without it holds none (null), and its frames bypass the emulator. */
    public static final DeviceSpecKnob<NetemParams> NETEM = DeviceSpecKnob.define(FAMILY, "link emulation",
            "link-emulation parameter", SYNTAX);

    /** For {@link java.util.ServiceLoader}; the knob itself is the static field. */
    public NetemSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return List.of();
    }

    @Override
    public List<DeviceSpecKnob<?>> deviceSpecKnobs() {
        return List.of(NETEM);
    }
}
