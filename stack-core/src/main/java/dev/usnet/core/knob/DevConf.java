package dev.usnet.core.knob;

/**
 * One device's settings of every per-device knob family declared ({@code net.ipv4.conf.<dev>.*},
 * {@code net.ipv4.neigh.<dev>.*}, ...) by {@link DeviceKnob} slot, and of every per-device spec
 * ({@code usnet.netem.<dev>}) by {@link DeviceSpecKnob} slot, so the packet path reads them without lookups and a
 * new family needs no field here.
 */
public final class DevConf {
    // By DeviceKnob slot; a slot past the end holds the knob's default. Replaced as a whole on every set (sets are
    // rare), so a reader on another thread sees an old or a new array, never half of one.
    private volatile long[] values = NO_VALUES;
    private static final long[] NO_VALUES = new long[0];
    // By DeviceSpecKnob slot, null for none (link emulation and the like). Never copied from {@code default}: like
    // a qdisc, such a setting belongs to one device. Replaced as a whole on every set, as values is.
    private volatile Object[] specs = NO_SPECS;
    private static final Object[] NO_SPECS = new Object[0];

    /** This device's value of {@code k}: an array read. */
    public long get(DeviceKnob k) {
        long[] a = values;
        return k.slot < a.length ? a[k.slot] : k.defaultValue();
    }

    /** Sets this device's value of {@code k} (range checked by the caller, {@link Knobs#set(String, String)}). */
    public synchronized void set(DeviceKnob k, long v) {
        long[] a = values;
        long[] n = a.length > k.slot ? a.clone() : DeviceKnob.defaults();
        System.arraycopy(a, 0, n, 0, Math.min(a.length, n.length));
        n[k.slot] = v;
        values = n;
    }

    /** This device's value of {@code k}, null when it has none: an array read. */
    @SuppressWarnings("unchecked")
    public <T> T get(DeviceSpecKnob<T> k) {
        Object[] a = specs;
        return k.slot < a.length ? (T) a[k.slot] : null;
    }

    /** Sets (null: removes) this device's value of {@code k}; {@link Knobs} checks and names it. */
    synchronized <T> void set(DeviceSpecKnob<T> k, T v) {
        Object[] a = specs;
        Object[] n = java.util.Arrays.copyOf(a, Math.max(a.length, k.slot + 1));
        n[k.slot] = v;
        specs = n;
    }

    /** A new device's settings from this one's ({@code default}'s): the per-device numbers, no spec. */
    public DevConf copy() {
        DevConf c = new DevConf();
        c.values = values;
        return c;
    }
}
