package dev.usnet.core.knob;

/**
 * One device's settings of every per-device knob family declared ({@code net.ipv4.conf.<dev>.*},
 * {@code net.ipv4.neigh.<dev>.*}, ...), by {@link DeviceKnob} slot, so the packet path reads them without lookups
 * and a new family needs no field here.
 */
public final class DevConf {
    // By DeviceKnob slot; a slot past the end holds the knob's default. Replaced as a whole on every set (sets are
    // rare), so a reader on another thread sees an old or a new array, never half of one.
    private volatile long[] values = NO_VALUES;
    private static final long[] NO_VALUES = new long[0];
    /**
     * usnet.netem.<dev>.*: the device's link emulation, null for none. Never copied from {@code default}:
     * like a qdisc, it belongs to one device.
     */
    public volatile dev.usnet.core.netem.NetemParams netem;

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

    public DevConf copy() {
        DevConf c = new DevConf();
        c.values = values;
        return c;
    }
}
