package dev.usnet.core.knob;

/**
 * A knob every device has its own value of, named {@code <family><dev>.<name>} ({@code net.ipv4.conf.eth0.proxy_arp}),
 * with the pseudo-devices {@code all} and {@code default} as Linux has them: one entry of a per-device ctl_table
 * such as devinet's or a neighbour table's parms. The family prefix is the declaring table's, so {@link Knobs}
 * recognises a per-device key by the families declared, not by names it knows itself. Values live in each
 * device's {@link DevConf}, by this knob's slot, which the packet path reads as an array element.
 */
public final class DeviceKnob {
    private static final java.util.concurrent.atomic.AtomicInteger SLOTS = new java.util.concurrent.atomic.AtomicInteger();
    private static volatile DeviceKnob[] bySlot = new DeviceKnob[0];

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
    private final Effect effect;
    private final Initial initial;
    final int slot;

    private DeviceKnob(String family, String name, long def, long min, long max, Combine combine, Effect effect,
            Initial initial) {
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
        this.effect = effect;
        this.initial = initial;
        this.slot = SLOTS.getAndIncrement();
        synchronized (DeviceKnob.class) {
            DeviceKnob[] a = java.util.Arrays.copyOf(bySlot, Math.max(bySlot.length, slot + 1));
            a[slot] = this;
            bySlot = a;
        }
    }

    /** Declares (and registers) a per-device integer knob with its default and range. */
    public static DeviceKnob define(String family, String name, long def, long min, long max, Combine combine) {
        return define(family, name, def, min, max, combine, null, null);
    }

    /**
     * As {@link #define(String, String, long, long, long, Combine)}, with what setting it changes besides its own
     * value ({@code effect}, may be null) and what a new device starts with ({@code initial}, null for
     * {@code default}'s value).
     */
    public static DeviceKnob define(String family, String name, long def, long min, long max, Combine combine,
            Effect effect, Initial initial) {
        return Knobs.register(new DeviceKnob(family, name, def, min, max, combine, effect, initial));
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
        return c.get(this);
    }

    void set(DevConf c, long v) {
        c.set(this, v);
    }

    /** The defaults of every per-device knob declared so far, by slot: what a device's settings start from. */
    static long[] defaults() {
        DeviceKnob[] a = bySlot;
        long[] d = new long[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i] == null ? 0 : a[i].def;
        }
        return d;
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
