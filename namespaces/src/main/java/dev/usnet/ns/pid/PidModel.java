package dev.usnet.ns.pid;

/**
 * How a usnet namespace's processes get their pids ({@code usnet.pidns.model}): {@link #NONE} no pid namespace of
 * their own (one number, in the initial pid namespace); {@link #MULTILEVEL} Linux's model since 2.6.24, a number at
 * every level from the process's own pid namespace up to the initial one ({@code struct pid} with {@code numbers[]});
 * {@link #FLAT} the model of the 2007 flat patches (OpenVZ's): one global number and one virtual number in the
 * process's own namespace, read by a plain dereference, nothing at the levels in between.
 */
public enum PidModel {
    NONE("none"),
    FLAT("flat"),
    MULTILEVEL("multilevel");

    private final String knobValue;

    PidModel(String knobValue) {
        this.knobValue = knobValue;
    }

    /** The {@code usnet.pidns.model} value. */
    public String knobValue() {
        return knobValue;
    }

    /** none | flat | multilevel; an IllegalArgumentException naming the knob otherwise. */
    public static PidModel parse(String v) {
        for (PidModel m : values()) {
            if (m.knobValue.equals(v.trim())) {
                return m;
            }
        }
        throw new IllegalArgumentException("usnet.pidns.model: '" + v + "' is not one of none, flat, multilevel");
    }
}
