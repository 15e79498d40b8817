package dev.usnet.core.knob;

/**
 * A knob every device has its own value of, named {@code <family><dev>.<name>} ({@code net.ipv4.conf.eth0.proxy_arp}),
 * with the pseudo-devices {@code all} and {@code default} as Linux has them: one entry of a per-device ctl_table
 * such as devinet's or a neighbour table's parms. The family prefix is the declaring table's, so {@link Knobs}
 * recognises a per-device key by the families declared, not by names it knows itself. Values live in each
 * device's {@link DevConf} fields, which the packet path reads directly.
 */
public final class DeviceKnob {
    /** Writes the value into a device's settings. */
    public interface Setter {
        void set(DevConf c, long v);
    }

    /** Reads the value from a device's settings. */
    public interface Getter {
        long get(DevConf c);
    }

    /** What setting the knob changes besides its own value (Linux's proc handler side effects). */
    public interface Effect {
        void apply(Knobs knobs, String dev, long value);
    }

    /** The value a device created later starts with when it is not {@code default}'s. */
    public interface Initial {
        long of(Knobs knobs);
    }

    /** How a device's value combines with {@code all}'s when the packet path asks (Linux's IN_DEV_*CONF macros). */
    public enum Combine {
        /** The device's own value only. */
        DEVICE,
        /** On when on for {@code all} or the device (IN_DEV_ORCONF). */
        OR,
        /** The larger of {@code all} and the device (IN_DEV_MAXCONF). */
        MAX
    }

    private final String family;
    private final String name;
    private final long def;
    private final long min;
    private final long max;
    private final Combine combine;
    private final Setter setter;
    private final Getter getter;
    private final Effect effect;
    private final Initial initial;

    private DeviceKnob(String family, String name, long def, long min, long max, Combine combine, Setter setter,
            Getter getter, Effect effect, Initial initial) {
        if (!family.endsWith(".") || name.isEmpty() || name.contains(".")) {
            throw new IllegalArgumentException("per-device knob '" + family + "<dev>." + name
                    + "' needs a family ending in '.' and a name without dots");
        }
        if (def < min || def > max || min > max) {
            throw new IllegalArgumentException(family + "<dev>." + name + ": default " + def + " outside " + min + ".." + max);
        }
        this.family = family;
        this.name = name;
        this.def = def;
        this.min = min;
        this.max = max;
        this.combine = combine;
        this.setter = setter;
        this.getter = getter;
        this.effect = effect;
        this.initial = initial;
    }

    /** Declares (and registers) a per-device integer knob with its range; {@code def} is {@link DevConf}'s default. */
    public static DeviceKnob define(String family, String name, long def, long min, long max, Combine combine,
            Setter setter, Getter getter) {
        return define(family, name, def, min, max, combine, setter, getter, null, null);
    }

    /**
     * As {@link #define(String, String, long, long, long, Combine, Setter, Getter)}, with what setting it changes
     * besides its own value ({@code effect}, may be null) and what a new device starts with ({@code initial}, null
     * for {@code default}'s value).
     */
    public static DeviceKnob define(String family, String name, long def, long min, long max, Combine combine,
            Setter setter, Getter getter, Effect effect, Initial initial) {
        return Knobs.register(new DeviceKnob(family, name, def, min, max, combine, setter, getter, effect, initial));
    }

    /** The prefix before the device name, e.g. {@code net.ipv4.conf.}. */
    public String family() {
        return family;
    }

    /** The name after the device name, e.g. {@code proxy_arp}. */
    public String name() {
        return name;
    }

    /** The name with a {@code <dev>} placeholder, as {@link Knobs#known()} lists it. */
    public String pattern() {
        return family + "<dev>." + name;
    }

    public long defaultValue() {
        return def;
    }

    public long min() {
        return min;
    }

    public long max() {
        return max;
    }

    public Combine combine() {
        return combine;
    }

    /** This knob's value in {@code c}. */
    public long get(DevConf c) {
        return getter.get(c);
    }

    void set(DevConf c, long v) {
        setter.set(c, v);
    }

    Effect effect() {
        return effect;
    }

    Initial initial() {
        return initial;
    }

    @Override
    public String toString() {
        return pattern();
    }
}
