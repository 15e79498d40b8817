package dev.usnet.core.knob;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A namespace's settings, named like Linux sysctls where Linux has them ({@code net.ipv4.ip_forward},
 * {@code net.ipv4.conf.<dev>.proxy_arp}, ...) and {@code usnet.*} for variants Linux only has across
 * versions. Unknown keys and bad values are rejected with a message naming the key and what it takes.
 *
 * <p>Knobs are declared by the code that reads them, in one {@link SysctlTable} per subsystem (IPv4, ICMP,
 * neighbour, bridge, ...), as Linux registers one ctl_table per subsystem; every table, stack-core's as well as
 * other modules', is found the same way, by {@link java.util.ServiceLoader}. This class keeps the values, parses
 * and checks text, names knobs and says what is wrong. The packet path reads a value by its declaration (an array
 * slot, or a {@link DevConf} slot), never by name.
 *
 * <p>Per-device knobs come in families, each a prefix its table declares: numbers ({@link DeviceKnob},
 * {@code net.ipv4.conf.<dev>.<name>}) and whole specs ({@link DeviceSpecKnob}, {@code usnet.netem.<dev>[.<param>]}).
 * Callers ask this class which key names which device ({@link #deviceOf}), whether a key is of a family
 * ({@link #isPerDevice}) and which families there are ({@link #deviceFamilies}), so a new family needs no change
 * outside its table.
 */
public final class Knobs {
    // ---- declared knobs (LongKnob, ValueKnob, DeviceKnob): name -> declaration ----

    private static final ConcurrentHashMap<String, Knob> DECLARED = new ConcurrentHashMap<>();
    // Per-device knobs by family + name ("net.ipv4.conf.proxy_arp"), and the families (prefixes) declared.
    private static final ConcurrentHashMap<String, DeviceKnob> DEVICE_KNOBS = new ConcurrentHashMap<>();
    private static final java.util.Set<String> FAMILIES = ConcurrentHashMap.newKeySet();
    // Per-device spec knobs by family ("usnet.netem.").
    private static final ConcurrentHashMap<String, DeviceSpecKnob<?>> SPEC_KNOBS = new ConcurrentHashMap<>();
    private static volatile boolean tablesLoaded;

    /** Registers a declared knob by name; declaring the same name twice is a programming error. */
    static <K extends Knob> K register(K k) {
        if (specOf(k.key()) != null || deviceKnobOf(k.key()) != null) {
            throw new IllegalStateException("knob " + k.key() + " would be a per-device knob's name");
        }
        Knob prev = DECLARED.putIfAbsent(k.key(), k);
        if (prev != null && prev != k) {
            throw new IllegalStateException("knob " + k.key() + " declared twice");
        }
        return k;
    }

    /** Registers a per-device knob; its family becomes a per-device prefix no namespace-wide knob may start with. */
    static DeviceKnob register(DeviceKnob d) {
        String f = d.family();
        if (SPEC_KNOBS.keySet().stream().anyMatch(s -> s.startsWith(f) || f.startsWith(s))
                || DECLARED.keySet().stream().anyMatch(key -> key.startsWith(f) && key.endsWith("." + d.name()))) {
            throw new IllegalStateException("per-device knob " + d.pattern() + " collides with a knob of another kind");
        }
        for (String other : FAMILIES) {
            if (!other.equals(f) && (other.startsWith(f) || f.startsWith(other))) {
                throw new IllegalStateException("per-device family " + f + " overlaps " + other);
            }
        }
        DeviceKnob prev = DEVICE_KNOBS.putIfAbsent(f + d.name(), d);
        if (prev != null && prev != d) {
            throw new IllegalStateException("knob " + d.pattern() + " declared twice");
        }
        FAMILIES.add(f);
        return d;
    }

    /**
     * Registers a per-device spec family; no other family may overlap it and no namespace-wide knob start with it.
     */
    static <T> DeviceSpecKnob<T> register(DeviceSpecKnob<T> d) {
        String f = d.family();
        if (SPEC_KNOBS.get(f) == d) {
            return d;
        }
        for (String other : java.util.stream.Stream.concat(FAMILIES.stream(), SPEC_KNOBS.keySet().stream()).toList()) {
            if (other.startsWith(f) || f.startsWith(other)) {
                throw new IllegalStateException("per-device family " + f + " overlaps " + other);
            }
        }
        if (DECLARED.keySet().stream().anyMatch(key -> key.startsWith(f))) {
            throw new IllegalStateException("per-device spec " + d.pattern() + " collides with a knob of another kind");
        }
        if (SPEC_KNOBS.putIfAbsent(f, d) != null) {
            throw new IllegalStateException("per-device spec " + d.pattern() + " declared twice");
        }
        return d;
    }

    /** The per-device spec family {@code key} starts with, or null. */
    private static DeviceSpecKnob<?> specOf(String key) {
        for (DeviceSpecKnob<?> d : SPEC_KNOBS.values()) {
            if (key.startsWith(d.family())) {
                return d;
            }
        }
        return null;
    }

    /** The per-device knob {@code key} would set on some device ({@code <family><dev>.<name>}), or null. */
    private static DeviceKnob deviceKnobOf(String key) {
        String family = familyOf(key);
        int dot = key.lastIndexOf('.');
        return family == null || dot <= family.length() ? null : DEVICE_KNOBS.get(family + key.substring(dot + 1));
    }

    /** The per-device family {@code key} starts with, or null. */
    private static String familyOf(String key) {
        for (String f : FAMILIES) {
            if (key.startsWith(f)) {
                return f;
            }
        }
        return null;
    }

    /** The declaration of {@code key} by any module on the class path, or null. */
    public static Knob declared(String key) {
        loadTables();
        return DECLARED.get(key);
    }

    /**
     * When a change of {@code key} takes effect: a declared knob says so itself; of stack-core's own, usnet.hz is
     * fixed at build (timers already armed count in its jiffies) and the rest are read per packet or timer.
     */
    public static Knob.Applies applies(String key) {
        Knob d = declared(key);
        if (d != null) {
            return d.applies();
        }
        return key.equals("usnet.hz") ? Knob.Applies.BUILD : Knob.Applies.LIVE;
    }

    /** Every knob declared by a module (through its {@link SysctlTable}), by name. */
    public static java.util.SortedMap<String, Knob> declared() {
        loadTables();
        return new TreeMap<>(DECLARED);
    }

    private static void loadTables() {
        if (tablesLoaded) {
            return;
        }
        synchronized (Knobs.class) {
            if (!tablesLoaded) {
                for (SysctlTable t : java.util.ServiceLoader.load(SysctlTable.class, Knobs.class.getClassLoader())) {
                    for (Knob k : t.knobs()) {
                        register(k);
                    }
                    for (DeviceKnob d : t.deviceKnobs()) {
                        register(d);
                    }
                    for (DeviceSpecKnob<?> d : t.deviceSpecKnobs()) {
                        register(d);
                    }
                }
                tablesLoaded = true;
            }
        }
    }

    /** A list knob such as net.ipv4.tcp_rmem as numbers. */
    public long[] getLongs(String key) {
        String[] parts = get(key).split(" ");
        long[] r = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            r[i] = Long.parseLong(parts[i]);
        }
        return r;
    }

    private final ConcurrentHashMap<String, String> explicit = new ConcurrentHashMap<>();
    // The explicit keys that name a device (of a per-device family: net.ipv4.conf.DEV.*, usnet.netem.DEV.*), by device:
    // forgetting or re-setting one device's keys touches only its own. A scan of every key per device was quadratic
    // in the devices (a bridge namespace with 10 000 emulated ports: 10^8 string tests to build it, again to delete).
    private final ConcurrentHashMap<String, java.util.Set<String>> explicitByDevice = new ConcurrentHashMap<>();
    // Values of declared knobs by slot. Empty until one is set (an idle namespace shares the declared defaults);
    // replaced as a whole on every set, so a reader on another thread sees an old or a new array, never half.
    private volatile long[] longs = NO_LONGS;
    private volatile Object[] values = NO_VALUES;
    private static final long[] NO_LONGS = new long[0];
    private static final Object[] NO_VALUES = new Object[0];

    /** The value of a declared integer knob in this namespace: an array read, for the packet path. */
    public long get(LongKnob k) {
        long[] a = longs;
        return k.slot < a.length ? a[k.slot] : k.defaultValue();
    }

    /** The value of a declared word or list knob in this namespace. */
    @SuppressWarnings("unchecked")
    public <T> T get(ValueKnob<T> k) {
        Object[] a = values;
        return k.slot < a.length ? (T) a[k.slot] : k.defaultValue();
    }

    /** Sets a declared integer knob; out of its range throws IllegalArgumentException naming it. */
    public void set(LongKnob k, long v) {
        k.check(v);
        putLong(k, v);
        if (k.effect() != null) {
            k.effect().apply(this, v);
        }
        explicit.put(k.key(), Long.toString(v));
        version++;
    }

    private synchronized void putLong(LongKnob k, long v) {
        long[] a = longs;
        long[] n = a.length > k.slot ? a.clone() : LongKnob.defaults();
        System.arraycopy(a, 0, n, 0, Math.min(a.length, n.length));
        n[k.slot] = v;
        longs = n;
    }

    private synchronized void putValue(ValueKnob<?> k, Object v) {
        Object[] a = values;
        Object[] n = a.length > k.slot ? a.clone() : ValueKnob.defaults();
        System.arraycopy(a, 0, n, 0, Math.min(a.length, n.length));
        n[k.slot] = v;
        values = n;
    }

    @SuppressWarnings("unchecked")
    private <T> String setDeclared(Knob d, String v) {
        if (d instanceof LongKnob lk) {
            long n = lk.parse(v);
            putLong(lk, n);
            if (lk.effect() != null) {
                lk.effect().apply(this, n);
            }
            return Long.toString(n);
        }
        ValueKnob<T> vk = (ValueKnob<T>) d;
        T parsed = vk.parse(v);
        putValue(vk, parsed);
        return vk.format(parsed);
    }
    // Bumped on every successful set, so layers above can cache parsed values and reload only on change.
    private volatile long version;
    private final DevConf all = new DevConf();
    private final DevConf defaults = new DevConf();
    private final ConcurrentHashMap<String, DevConf> devices = new ConcurrentHashMap<>();

    /** Loads every table, so that a device created here starts with what they declare. */
    public Knobs() {
        loadTables();
    }

    /** The {@code all} pseudo-device, whose values combine with each device's per knob as Linux does. */
    public DevConf all() {
        return all;
    }

    /** Settings of device {@code dev}, created from {@code default} on first use (as a new in_device). */
    public DevConf dev(String dev) {
        DevConf known = devices.get(dev);
        if (known != null) {
            return known;
        }
        return devices.computeIfAbsent(dev, d -> {
            DevConf c = defaults.copy();
            for (DeviceKnob k : DEVICE_KNOBS.values()) {
                if (k.initial() != null) {
                    k.set(c, k.initial().of(this));
                }
            }
            return c;
        });
    }

    /** The {@code default} pseudo-device: what a device created later starts with. */
    public DevConf defaultConf() {
        return defaults;
    }

    /** Every device's settings with {@code all}'s and {@code default}'s, for a knob that sets them all. */
    public void forEachDevConf(Consumer<DevConf> action) {
        action.accept(all);
        action.accept(defaults);
        devices.values().forEach(action);
    }

    /**
     * A per-device knob's value for the packet path: the device's, or combined with {@code all}'s as the knob
     * declares. Field reads only.
     */
    public long effective(DeviceKnob k, DevConf c) {
        return switch (k.combine()) {
            case DEVICE -> k.get(c);
            case OR -> k.get(all) | k.get(c);
            case MAX -> Math.max(k.get(all), k.get(c));
        };
    }

    private void putExplicit(String dev, String key, String value) {
        explicit.put(key, value);
        explicitByDevice.computeIfAbsent(dev, d -> ConcurrentHashMap.newKeySet()).add(key);
    }

    /** Forgets a device's settings (it left the namespace). */
    public void forgetDevice(String dev) {
        devices.remove(dev);
        java.util.Set<String> keys = explicitByDevice.remove(dev);
        if (keys != null) {
            keys.forEach(explicit::remove);
        }
    }

    public void renameDevice(String from, String to) {
        DevConf c = devices.remove(from);
        if (c != null) {
            devices.put(to, c);
        }
    }

    /** Counts changes: equal versions mean no knob changed in between. */
    public long version() {
        return version;
    }

    /** Sets a knob; throws IllegalArgumentException naming the key and the accepted values. */
    public void set(String key, String value) {
        setUnversioned(key, value);
        version++;
    }

    private void setUnversioned(String key, String value) {
        String k = key.trim();
        String v = value.trim();
        DeviceSpecKnob<?> spec = specOf(k);
        if (spec != null) {
            setSpec(spec, k, v);
            return;
        }
        Knob d = declared(k);
        if (d != null) {
            explicit.put(k, setDeclared(d, v));
            return;
        }
        DevTarget t = parseDevKey(k);
        if (t == null) {
            throw new IllegalArgumentException(unknown(k));
        }
        long n = parseRange(k, v, t.knob.min(), t.knob.max());
        DevConf c = switch (t.dev) {
            case "all" -> all;
            case "default" -> defaults;
            default -> dev(t.dev);
        };
        t.knob.set(c, n);
        if (t.dev.equals("all") || t.dev.equals("default")) {
            explicit.put(k, Long.toString(n));
        } else {
            putExplicit(t.dev, k, Long.toString(n));
        }
        if (t.knob.effect() != null) {
            t.knob.effect().apply(this, t.dev, n);
        }
    }

    private record DevTarget(String dev, DeviceKnob knob) {}

    /** {@code <family><dev>.<name>} of a declared per-device knob, or null. */
    private static DevTarget parseDevKey(String k) {
        loadTables();
        String family = familyOf(k);
        if (family == null) {
            return null;
        }
        String rest = k.substring(family.length());
        int dot = rest.lastIndexOf('.');
        if (dot <= 0) {
            return null;
        }
        DeviceKnob dk = DEVICE_KNOBS.get(family + rest.substring(dot + 1));
        return dk == null ? null : new DevTarget(rest.substring(0, dot), dk);
    }

    /**
     * The device a per-device knob names ({@code eth0} in {@code net.ipv4.conf.eth0.forwarding}, {@code all},
     * {@code default}; {@code eth0.100} in {@code usnet.netem.eth0.100.delay}), or null when {@code key} is not of a
     * declared per-device family or is malformed.
     */
    public static String deviceOf(String key) {
        loadTables();
        DeviceSpecKnob<?> spec = specOf(key);
        if (spec != null) {
            try {
                return parseSpecKey(spec, key.trim()).dev;
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        String family = familyOf(key);
        int dot = key.lastIndexOf('.');
        return family == null || dot <= family.length() ? null : key.substring(family.length(), dot);
    }

    /**
     * Whether {@code key} starts with a declared per-device family's prefix: it is that family's to accept or
     * refuse (with a message naming the nearest of its knobs), whatever follows.
     */
    public static boolean isPerDevice(String key) {
        loadTables();
        return familyOf(key) != null || specOf(key) != null;
    }

    /**
     * Whether a per-device spec family (a setting of one real device, never of {@code all} or {@code default})
     * names {@code key}'s device.
     */
    public static boolean isDeviceSpec(String key) {
        loadTables();
        return specOf(key) != null;
    }

    /** Every per-device family's prefix ({@code net.ipv4.conf.}, {@code usnet.netem.}, ...), sorted. */
    public static java.util.SortedSet<String> deviceFamilies() {
        loadTables();
        java.util.SortedSet<String> s = new java.util.TreeSet<>(FAMILIES);
        s.addAll(SPEC_KNOBS.keySet());
        return s;
    }

    /**
     * The device a per-device spec knob names ({@link #isDeviceSpec}), or null.
     *
     * @deprecated link emulation is one per-device spec family among any others declared: use
     *     {@link #isDeviceSpec} and {@link #deviceOf}. Kept until its last caller moves.
     */
    @Deprecated(forRemoval = true)
    public static String netemDevice(String key) {
        return isDeviceSpec(key) ? deviceOf(key) : null;
    }

    /** Whether any knob, namespace-wide or of a per-device family, is declared under {@code prefix}. */
    public static boolean anyDeclaredUnder(String prefix) {
        loadTables();
        return DECLARED.keySet().stream().anyMatch(k -> k.startsWith(prefix))
                || deviceFamilies().stream().anyMatch(f -> f.startsWith(prefix) || prefix.startsWith(f));
    }

    /**
     * The name of per-device knob {@code name} of {@code family} for device {@code dev}
     * ({@code net.ipv4.conf.} + {@code eth0} + {@code proxy_arp}); throws IllegalArgumentException naming the
     * nearest of that family's knobs when it has none of that name.
     */
    public static String deviceKey(String family, String dev, String name) {
        loadTables();
        if (!FAMILIES.contains(family)) {
            throw new IllegalArgumentException("no per-device knob family '" + family + "' (known: "
                    + String.join(", ", deviceFamilies()) + ")");
        }
        String key = family + dev + "." + name;
        if (DEVICE_KNOBS.get(family + name) == null) {
            throw new IllegalArgumentException(unknown(key));
        }
        return key;
    }

    private static long parseRange(String k, String v, long min, long max) {
        return LongKnob.parseInRange(k, v, min, max);
    }

    // ---- per-device specs: <family><dev>[.<param>] ----

    private record SpecKey(String dev, String param) {}

    /**
     * {@code <family><dev>.<param>} or {@code <family><dev>} (a whole spec). A last part that is not a parameter is
     * part of the device name only when it is a number (a VLAN device like eth0.100).
     */
    private static SpecKey parseSpecKey(DeviceSpecKnob<?> spec, String k) {
        String family = spec.family();
        String rest = k.substring(family.length());
        String dev = rest;
        String param = null;
        int dot = rest.lastIndexOf('.');
        if (dot > 0) {
            String last = rest.substring(dot + 1);
            List<String> params = spec.params();
            if (params.contains(last)) {
                dev = rest.substring(0, dot);
                param = last;
            } else if (!last.chars().allMatch(Character::isDigit)) {
                String near = NearestNames.nearest(last, params);
                throw new IllegalArgumentException("unknown knob '" + k + "': '" + last + "' is not a "
                        + spec.parameter() + " ("
                        + (near != null ? "did you mean '" + near + "'? " : "") + "known: " + String.join(", ", params) + ")");
            }
        }
        if (dev.isEmpty() || dev.endsWith(".")) {
            throw new IllegalArgumentException("unknown knob '" + k + "' (expected " + family + "<dev> or " + family
                    + "<dev>.<param>)");
        }
        if (dev.equals("all") || dev.equals("default")) {
            throw new IllegalArgumentException(k + ": " + spec.what() + " is set per device, not for '" + dev + "'");
        }
        return new SpecKey(dev, param);
    }

    private <T> void setSpec(DeviceSpecKnob<T> spec, String k, String v) {
        SpecKey sk = parseSpecKey(spec, k);
        DevConf c = dev(sk.dev);
        synchronized (c) {
            T p;
            try {
                p = sk.param == null ? spec.syntax().parse(v) : spec.syntax().with(get(spec, sk.dev), sk.param, v);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(k + ": " + e.getMessage(), e);
            }
            putSpec(spec, sk.dev, p);
        }
    }

    /** Device {@code dev}'s value of {@code spec} (the syntax's none when it has none). */
    public <T> T get(DeviceSpecKnob<T> spec, String dev) {
        DevConf c = devices.get(dev);
        T p = c == null ? null : c.get(spec);
        return p == null ? spec.syntax().none() : p;
    }

    /**
     * Sets device {@code dev}'s value of {@code spec} as a whole (link emulation: {@code tc qdisc replace ...
     * netem}); the syntax's none removes it. The explicit values then list each parameter that differs from none.
     */
    public <T> void set(DeviceSpecKnob<T> spec, String dev, T value) {
        parseSpecKey(spec, spec.family() + dev);
        putSpec(spec, dev, value);
        version++;
    }

    private <T> void putSpec(DeviceSpecKnob<T> spec, String dev, T p) {
        DevConf c = dev(dev);
        DeviceSpecKnob.Syntax<T> syntax = spec.syntax();
        synchronized (c) {
            c.set(spec, syntax.isNone(p) ? null : p);
            java.util.Set<String> keys = explicitByDevice.get(dev);
            String whole = spec.family() + dev;
            if (keys != null) {
                keys.removeIf(x -> {
                    boolean mine = x.equals(whole) || x.startsWith(whole + ".")
                            && spec.params().contains(x.substring(whole.length() + 1));
                    if (mine) {
                        explicit.remove(x);
                    }
                    return mine;
                });
            }
            T none = syntax.none();
            for (String param : spec.params()) {
                String v = syntax.get(p, param);
                if (!v.equals(syntax.get(none, param))) {
                    putExplicit(dev, whole + "." + param, v);
                }
            }
        }
    }

    /** The current value of a knob as text. */
    public String get(String key) {
        DeviceSpecKnob<?> spec = specOf(key);
        if (spec != null) {
            return getSpec(spec, key.trim());
        }
        String e = explicit.get(key);
        if (e != null) {
            return e;
        }
        Knob d = declared(key);
        if (d != null) {
            return d.defaultText();
        }
        DevTarget t = parseDevKey(key);
        if (t == null) {
            throw new IllegalArgumentException(unknown(key));
        }
        DevConf c = switch (t.dev) {
            case "all" -> all;
            case "default" -> defaults;
            default -> dev(t.dev);
        };
        return Long.toString(t.knob.get(c));
    }

    private <T> String getSpec(DeviceSpecKnob<T> spec, String key) {
        SpecKey sk = parseSpecKey(spec, key);
        T p = get(spec, sk.dev);
        return sk.param == null ? spec.syntax().format(p) : spec.syntax().get(p, sk.param);
    }

    /** Every knob set explicitly, sorted. */
    public Map<String, String> explicitValues() {
        return new TreeMap<>(explicit);
    }

    /**
     * "unknown knob 'K'" with the known names nearest to it; a per-device name is compared with the device
     * {@code K} names put in for {@code <dev>}, so {@code net.ipv4.conf.eth0.proxyarp} finds
     * {@code net.ipv4.conf.eth0.proxy_arp}.
     */
    static String unknown(String k) {
        String d = deviceOf(k);
        java.util.List<String> names = known().stream()
                .filter(n -> d != null || !n.contains("<dev>"))
                .map(n -> d == null ? n : n.replace("<dev>", d)).toList();
        java.util.List<String> near = NearestNames.nearest(k, names, 3);
        return "unknown knob '" + k + "'" + (near.isEmpty() ? " (no known knob has a similar name)"
                : " (did you mean " + String.join(" or ", near.stream().map(n -> "'" + n + "'").toList()) + "?)");
    }

    /** The names of knobs this version understands, with {@code <dev>} placeholders. */
    public static java.util.List<String> known() {
        java.util.List<String> l = new java.util.ArrayList<>(declared().keySet());
        new TreeMap<>(DEVICE_KNOBS).values().forEach(d -> l.add(d.pattern()));
        new TreeMap<>(SPEC_KNOBS).values().forEach(d -> {
            l.add(d.pattern());
            d.params().forEach(p -> l.add(d.pattern(p)));
        });
        return l;
    }
}
