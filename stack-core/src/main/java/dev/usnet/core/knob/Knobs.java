package dev.usnet.core.knob;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.netem.NetemParams;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A namespace's settings, named like Linux sysctls where Linux has them ({@code net.ipv4.ip_forward},
 * {@code net.ipv4.conf.<dev>.proxy_arp}, ...) and {@code usnet.*} for variants Linux only has across
 * versions. Unknown keys and bad values are rejected with a message naming the key and what it takes.
 * Hot values are mirrored into fields (and {@link DevConf}s) so the packet path never parses strings.
 */
public final class Knobs {
    /** A device-scoped knob: how to apply it to a DevConf and how it combines with {@code all}. */
    private record DevKnob(String section, String name, int min, int max, Setter setter, Getter getter) {}

    private interface Setter {
        void set(DevConf c, long v);
    }

    private interface Getter {
        long get(DevConf c);
    }

    private static final Map<String, DevKnob> DEV_KNOBS = new TreeMap<>();

    private static void conf(String n, int min, int max, Setter s, Getter g) {
        DEV_KNOBS.put("conf." + n, new DevKnob("conf", n, min, max, s, g));
    }

    private static void neigh(String n, int min, int max, Setter s, Getter g) {
        DEV_KNOBS.put("neigh." + n, new DevKnob("neigh", n, min, max, s, g));
    }

    static {
        conf("forwarding", 0, 1, (c, v) -> c.forwarding = (int) v, c -> c.forwarding);
        conf("proxy_arp", 0, 1, (c, v) -> c.proxyArp = (int) v, c -> c.proxyArp);
        conf("send_redirects", 0, 1, (c, v) -> c.sendRedirects = (int) v, c -> c.sendRedirects);
        conf("accept_redirects", 0, 1, (c, v) -> c.acceptRedirects = (int) v, c -> c.acceptRedirects);
        conf("rp_filter", 0, 2, (c, v) -> c.rpFilter = (int) v, c -> c.rpFilter);
        conf("arp_ignore", 0, 8, (c, v) -> c.arpIgnore = (int) v, c -> c.arpIgnore);
        conf("arp_announce", 0, 2, (c, v) -> c.arpAnnounce = (int) v, c -> c.arpAnnounce);
        conf("arp_accept", 0, 2, (c, v) -> c.arpAccept = (int) v, c -> c.arpAccept);
        neigh("mcast_solicit", 0, 255, (c, v) -> c.mcastSolicit = (int) v, c -> c.mcastSolicit);
        neigh("ucast_solicit", 0, 255, (c, v) -> c.ucastSolicit = (int) v, c -> c.ucastSolicit);
        neigh("app_solicit", 0, 255, (c, v) -> c.appSolicit = (int) v, c -> c.appSolicit);
        neigh("retrans_time_ms", 10, Integer.MAX_VALUE, (c, v) -> c.retransTimeMs = v, c -> c.retransTimeMs);
        neigh("base_reachable_time_ms", 1, Integer.MAX_VALUE, (c, v) -> c.baseReachableTimeMs = v, c -> c.baseReachableTimeMs);
        neigh("delay_first_probe_time", 0, Integer.MAX_VALUE, (c, v) -> c.delayFirstProbeTimeS = v, c -> c.delayFirstProbeTimeS);
        neigh("gc_stale_time", 0, Integer.MAX_VALUE, (c, v) -> c.gcStaleTimeS = v, c -> c.gcStaleTimeS);
        neigh("unres_qlen_bytes", 0, Integer.MAX_VALUE, (c, v) -> c.unresQlenBytes = (int) v, c -> c.unresQlenBytes);
        neigh("proxy_delay", 0, Integer.MAX_VALUE, (c, v) -> c.proxyDelay = (int) v, c -> c.proxyDelay);
        neigh("proxy_qlen", 0, Integer.MAX_VALUE, (c, v) -> c.proxyQlen = (int) v, c -> c.proxyQlen);
    }

    /** Namespace-wide integer knobs with their Linux defaults and ranges. */
    private record GlobalKnob(long def, long min, long max) {}

    private static final Map<String, GlobalKnob> GLOBAL = new TreeMap<>(Map.ofEntries(
            Map.entry("net.ipv4.ip_forward", new GlobalKnob(0, 0, 1)),
            Map.entry("net.ipv4.ip_default_ttl", new GlobalKnob(64, 1, 255)),
            Map.entry("net.ipv4.icmp_ratelimit", new GlobalKnob(1000, 0, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.icmp_ratemask", new GlobalKnob(0x1818, 0, 0x7ffff)),
            Map.entry("net.ipv4.icmp_msgs_per_sec", new GlobalKnob(1000, 0, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.icmp_msgs_burst", new GlobalKnob(50, 0, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.icmp_echo_ignore_all", new GlobalKnob(0, 0, 1)),
            Map.entry("net.ipv4.icmp_echo_ignore_broadcasts", new GlobalKnob(1, 0, 1)),
            Map.entry("net.ipv4.icmp_ignore_bogus_error_responses", new GlobalKnob(1, 0, 1)),
            Map.entry("net.ipv4.ipfrag_time", new GlobalKnob(30, 1, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.ipfrag_high_thresh", new GlobalKnob(4 * 1024 * 1024, 0, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.ip_no_pmtu_disc", new GlobalKnob(0, 0, 3)),
            Map.entry("net.ipv4.route.min_pmtu", new GlobalKnob(552, 68, 65_535)),
            Map.entry("net.ipv4.route.mtu_expires", new GlobalKnob(600, 0, Integer.MAX_VALUE)),
            Map.entry("net.core.netdev_max_backlog", new GlobalKnob(1000, 1, 65_536)),
            Map.entry("net.core.dev_weight", new GlobalKnob(64, 1, 65_536)),
            Map.entry("usnet.hz", new GlobalKnob(1000, 100, 1000)),
            Map.entry("net.bridge.bridge-nf-call-iptables", new GlobalKnob(0, 0, 1)),
            Map.entry("net.bridge.bridge-nf-call-ip6tables", new GlobalKnob(0, 0, 1)),
            Map.entry("net.ipv4.neigh.default.gc_thresh1", new GlobalKnob(128, 0, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.neigh.default.gc_thresh2", new GlobalKnob(512, 0, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.neigh.default.gc_thresh3", new GlobalKnob(1024, 1, Integer.MAX_VALUE)),
            Map.entry("net.ipv4.udp_rmem_packets", new GlobalKnob(256, 1, Integer.MAX_VALUE)),
            // ---- CPU model (docs/cpu-model.md): off by default; costs from perf-tests/README.md ----
            Map.entry("usnet.cpu.model", new GlobalKnob(0, 0, 1)),
            Map.entry("usnet.cpu.cores", new GlobalKnob(1, 1, 1024)),
            Map.entry("usnet.cpu.l2_rx_ns", new GlobalKnob(40, 0, 1_000_000)),
            Map.entry("usnet.cpu.bridge_fwd_ns", new GlobalKnob(45, 0, 1_000_000)),
            Map.entry("usnet.cpu.ip_fwd_ns", new GlobalKnob(135, 0, 1_000_000)),
            Map.entry("usnet.cpu.local_deliver_ns", new GlobalKnob(150, 0, 1_000_000)),
            Map.entry("usnet.cpu.cow_copy_ns", new GlobalKnob(340, 0, 1_000_000)),
            Map.entry("usnet.cpu.copy_ps_per_byte", new GlobalKnob(32, 0, 1_000_000)),
            Map.entry("usnet.cpu.csum_ps_per_byte", new GlobalKnob(107, 0, 1_000_000))));

    // ---- knobs other modules declare (LongKnob, ValueKnob): name -> declaration ----

    private static final ConcurrentHashMap<String, Knob> DECLARED = new ConcurrentHashMap<>();
    private static volatile boolean tablesLoaded;

    /** Registers a declared knob by name; declaring the same name twice is a programming error. */
    static <K extends Knob> K register(K k) {
        if (GLOBAL.containsKey(k.key()) || parseDevKey(k.key()) != null || k.key().startsWith(NETEM_PREFIX)
                || k.key().equals("usnet.forward.cow") || k.key().equals(CPU_MACHINE)) {
            throw new IllegalStateException("knob " + k.key() + " is already one of stack-core's");
        }
        Knob prev = DECLARED.putIfAbsent(k.key(), k);
        if (prev != null && prev != k) {
            throw new IllegalStateException("knob " + k.key() + " declared twice");
        }
        return k;
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

    // Mirrors of hot global knobs.
    private volatile boolean ipForward;
    private volatile int defaultTtl = 64;
    private volatile CowPolicy cowPolicy = CowPolicy.HEAD_COPY;
    private volatile String cpuMachine = "";
    private volatile int icmpRatelimitMs = 1000;
    private volatile int icmpRatemask = 0x1818;
    private volatile int icmpMsgsPerSec = 1000;
    private volatile int icmpMsgsBurst = 50;
    private volatile int backlogMax = 1000;
    private volatile int devWeight = 64;
    private volatile int neighGcThresh1 = 128;
    private volatile int neighGcThresh2 = 512;
    private volatile int neighGcThresh3 = 1024;
    private volatile long ipfragHighThresh = 4 * 1024 * 1024;
    private volatile long ipfragTimeS = 30;
    private volatile int hz = 1000;
    private volatile boolean brNfIptables;
    private volatile boolean brNfIp6tables;
    // CPU model mirrors (usnet.cpu.*), read once per backlog run.
    private volatile boolean cpuModel;
    private volatile int cpuCores = 1;
    private volatile long cpuL2RxNs = 40;
    private volatile long cpuBridgeFwdNs = 45;
    private volatile long cpuIpFwdNs = 135;
    private volatile long cpuLocalDeliverNs = 150;
    private volatile long cpuCowCopyNs = 340;
    private volatile long cpuCopyPsPerByte = 32;
    private volatile long cpuCsumPsPerByte = 107;

    /** usnet.cpu.model: backlog processing consumes modelled CPU time (virtual time drains slower). */
    public boolean cpuModel() {
        return cpuModel;
    }

    /** usnet.cpu.cores: cores the namespace's modelled receive processing spreads over. */
    public int cpuCores() {
        return cpuCores;
    }

    /** usnet.cpu.l2_rx_ns: per frame received (netif_receive_skb, eth_type_trans). */
    public long cpuL2RxNs() {
        return cpuL2RxNs;
    }

    /** usnet.cpu.bridge_fwd_ns: per frame a bridge forwards or floods (br_handle_frame → br_forward). */
    public long cpuBridgeFwdNs() {
        return cpuBridgeFwdNs;
    }

    /** usnet.cpu.ip_fwd_ns: per IPv4 datagram forwarded (ip_forward, route lookup, TTL). */
    public long cpuIpFwdNs() {
        return cpuIpFwdNs;
    }

    /** usnet.cpu.local_deliver_ns: per IPv4 datagram delivered locally (ip_local_deliver). */
    public long cpuLocalDeliverNs() {
        return cpuLocalDeliverNs;
    }

    /** usnet.cpu.cow_copy_ns: per copy-on-write copy (skb_cow → pskb_expand_head), besides its bytes. */
    public long cpuCowCopyNs() {
        return cpuCowCopyNs;
    }

    /** usnet.cpu.copy_ps_per_byte: picoseconds per byte a COW copy copies. */
    public long cpuCopyPsPerByte() {
        return cpuCopyPsPerByte;
    }

    /** usnet.cpu.csum_ps_per_byte: picoseconds per byte checksummed in software (csum_partial). */
    public long cpuCsumPsPerByte() {
        return cpuCsumPsPerByte;
    }

    public boolean ipForward() {
        return ipForward;
    }

    public int defaultTtl() {
        return defaultTtl;
    }

    /**
     * usnet.cpu.machine: the modelled machine whose CPU this namespace's receive processing runs on; namespaces
     * naming the same machine share its busy time (docs/cpu-model.md). Empty (the default): a machine of its own.
     */
    public String cpuMachine() {
        return cpuMachine;
    }

    /** The key of {@link #cpuMachine()}. */
    public static final String CPU_MACHINE = "usnet.cpu.machine";

    private static String checkMachineName(String v) {
        if (!v.matches("[A-Za-z0-9_.-]{0,64}")) {
            throw new IllegalArgumentException(CPU_MACHINE + ": '" + v + "' is not a machine name (up to 64 of"
                    + " A-Z a-z 0-9 _ . -; empty for a machine of the namespace's own)");
        }
        return v;
    }

    public CowPolicy cowPolicy() {
        return cowPolicy;
    }

    public int icmpRatelimitMs() {
        return icmpRatelimitMs;
    }

    public int icmpRatemask() {
        return icmpRatemask;
    }

    public int icmpMsgsPerSec() {
        return icmpMsgsPerSec;
    }

    public int icmpMsgsBurst() {
        return icmpMsgsBurst;
    }

    public int backlogMax() {
        return backlogMax;
    }

    /**
     * net.core.dev_weight: frames one run of the receive backlog handles before it yields (process_backlog's
     * quota, the NAPI weight of the per-CPU backlog), 64 as in Linux.
     */
    public int devWeight() {
        return devWeight;
    }

    /** net.ipv4.neigh.default.gc_thresh1: below this many entries the periodic neighbour GC removes nothing. */
    public int neighGcThresh1() {
        return neighGcThresh1;
    }

    /** gc_thresh2: above it, a new entry forces a GC when the last one is more than 5 s ago. */
    public int neighGcThresh2() {
        return neighGcThresh2;
    }

    /** gc_thresh3: the hard limit; at it, a new entry forces a GC and fails when nothing could be removed. */
    public int neighGcThresh3() {
        return neighGcThresh3;
    }

    /** net.ipv4.ipfrag_high_thresh: reassembly memory above which fragments are refused. */
    public long ipfragHighThresh() {
        return ipfragHighThresh;
    }

    /** net.ipv4.ipfrag_time: seconds an incomplete datagram waits for its fragments. */
    public long ipfragTimeS() {
        return ipfragTimeS;
    }

    /**
     * net.bridge.bridge-nf-call-iptables: br_netfilter is loaded and bridged IPv4 passes the IP hooks, which
     * validate the header (bad ones are dropped) and trim link-layer padding — as on a Docker host.
     */
    public boolean bridgeNfCallIptables() {
        return brNfIptables;
    }

    /** net.bridge.bridge-nf-call-ip6tables: the same for IPv6 (version and payload length checked, padding trimmed). */
    public boolean bridgeNfCallIp6tables() {
        return brNfIp6tables;
    }

    /** usnet.hz: the jiffy rate of timers that count in jiffies in Linux (inet_peer limits; CONFIG_HZ). */
    public int hz() {
        return hz;
    }

    public long getLong(String key) {
        return Long.parseLong(get(key));
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
            c.forwarding = ipForward ? 1 : 0;
            return c;
        });
    }

    /** Forgets a device's settings (it left the namespace). */
    public void forgetDevice(String dev) {
        devices.remove(dev);
        // The prefixes once, not per key: a namespace with 10 000 devices scans 10 000 keys per device deleted.
        String conf = "net.ipv4.conf." + dev + ".";
        String neigh = "net.ipv4.neigh." + dev + ".";
        String netem = NETEM_PREFIX + dev + ".";
        explicit.keySet().removeIf(k -> k.startsWith(conf) || k.startsWith(neigh) || k.startsWith(netem));
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
        if (k.startsWith(NETEM_PREFIX)) {
            NetemKey nk = parseNetemKey(k);
            DevConf c = dev(nk.dev);
            synchronized (c) {
                NetemParams p;
                try {
                    p = nk.param == null ? NetemParams.parse(v) : netem(nk.dev).with(nk.param, v);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(k + ": " + e.getMessage(), e);
                }
                putNetem(nk.dev, p);
            }
            return;
        }
        if (k.equals("usnet.forward.cow")) {
            cowPolicy = CowPolicy.parse(v);
            explicit.put(k, v);
            return;
        }
        if (k.equals(CPU_MACHINE)) {
            cpuMachine = checkMachineName(v);
            explicit.put(k, v);
            return;
        }
        Knob d = declared(k);
        if (d != null) {
            explicit.put(k, setDeclared(d, v));
            return;
        }
        GlobalKnob g = GLOBAL.get(k);
        if (g != null) {
            long n = parseRange(k, v, g.min, g.max);
            applyGlobal(k, n);
            explicit.put(k, Long.toString(n));
            return;
        }
        DevTarget t = parseDevKey(k);
        if (t == null) {
            throw new IllegalArgumentException(unknown(k));
        }
        long n = parseRange(k, v, t.knob.min, t.knob.max);
        switch (t.dev) {
            case "all" -> {
                t.knob.setter.set(all, n);
                if (t.knob.name.equals("forwarding")) {
                    // Linux: writing conf.all.forwarding (or ip_forward) sets it on every device.
                    applyGlobal("net.ipv4.ip_forward", n);
                    explicit.put("net.ipv4.ip_forward", Long.toString(n));
                }
            }
            case "default" -> t.knob.setter.set(defaults, n);
            default -> t.knob.setter.set(dev(t.dev), n);
        }
        explicit.put(k, Long.toString(n));
    }

    private void applyGlobal(String k, long n) {
        switch (k) {
            case "net.ipv4.ip_forward" -> {
                ipForward = n != 0;
                all.forwarding = (int) n;
                defaults.forwarding = (int) n;
                for (DevConf c : devices.values()) {
                    c.forwarding = (int) n;
                }
            }
            case "net.ipv4.ip_default_ttl" -> defaultTtl = (int) n;
            case "net.ipv4.icmp_ratelimit" -> icmpRatelimitMs = (int) n;
            case "net.ipv4.icmp_ratemask" -> icmpRatemask = (int) n;
            case "net.ipv4.icmp_msgs_per_sec" -> icmpMsgsPerSec = (int) n;
            case "net.ipv4.icmp_msgs_burst" -> icmpMsgsBurst = (int) n;
            case "net.core.netdev_max_backlog" -> backlogMax = (int) n;
            case "net.core.dev_weight" -> devWeight = (int) n;
            case "net.ipv4.neigh.default.gc_thresh1" -> neighGcThresh1 = (int) n;
            case "net.ipv4.neigh.default.gc_thresh2" -> neighGcThresh2 = (int) n;
            case "net.ipv4.neigh.default.gc_thresh3" -> neighGcThresh3 = (int) n;
            case "net.ipv4.ipfrag_high_thresh" -> ipfragHighThresh = n;
            case "net.ipv4.ipfrag_time" -> ipfragTimeS = n;
            case "usnet.hz" -> hz = (int) n;
            case "net.bridge.bridge-nf-call-iptables" -> brNfIptables = n != 0;
            case "net.bridge.bridge-nf-call-ip6tables" -> brNfIp6tables = n != 0;
            case "usnet.cpu.model" -> cpuModel = n != 0;
            case "usnet.cpu.cores" -> cpuCores = (int) n;
            case "usnet.cpu.l2_rx_ns" -> cpuL2RxNs = n;
            case "usnet.cpu.bridge_fwd_ns" -> cpuBridgeFwdNs = n;
            case "usnet.cpu.ip_fwd_ns" -> cpuIpFwdNs = n;
            case "usnet.cpu.local_deliver_ns" -> cpuLocalDeliverNs = n;
            case "usnet.cpu.cow_copy_ns" -> cpuCowCopyNs = n;
            case "usnet.cpu.copy_ps_per_byte" -> cpuCopyPsPerByte = n;
            case "usnet.cpu.csum_ps_per_byte" -> cpuCsumPsPerByte = n;
            default -> { }
        }
    }

    private record DevTarget(String dev, DevKnob knob) {}

    private static DevTarget parseDevKey(String k) {
        String section;
        String rest;
        if (k.startsWith("net.ipv4.conf.")) {
            section = "conf";
            rest = k.substring("net.ipv4.conf.".length());
        } else if (k.startsWith("net.ipv4.neigh.")) {
            section = "neigh";
            rest = k.substring("net.ipv4.neigh.".length());
        } else {
            return null;
        }
        int dot = rest.lastIndexOf('.');
        if (dot <= 0) {
            return null;
        }
        DevKnob dk = DEV_KNOBS.get(section + "." + rest.substring(dot + 1));
        return dk == null ? null : new DevTarget(rest.substring(0, dot), dk);
    }

    private static long parseRange(String k, String v, long min, long max) {
        return LongKnob.parseInRange(k, v, min, max);
    }

    // ---- usnet.netem.<dev>[.<param>]: link emulation ----

    private static final String NETEM_PREFIX = "usnet.netem.";

    private record NetemKey(String dev, String param) {}

    /**
     * {@code usnet.netem.<dev>.<param>} or {@code usnet.netem.<dev>} (a whole spec). A last part that is not a
     * parameter is part of the device name only when it is a number (a VLAN device like eth0.100).
     */
    private static NetemKey parseNetemKey(String k) {
        String rest = k.substring(NETEM_PREFIX.length());
        String dev = rest;
        String param = null;
        int dot = rest.lastIndexOf('.');
        if (dot > 0) {
            String last = rest.substring(dot + 1);
            if (NetemParams.PARAMS.contains(last)) {
                dev = rest.substring(0, dot);
                param = last;
            } else if (!last.chars().allMatch(Character::isDigit)) {
                String near = NearestNames.nearest(last, NetemParams.PARAMS);
                throw new IllegalArgumentException("unknown knob '" + k + "': '" + last + "' is not a link-emulation parameter"
                        + " (" + (near != null ? "did you mean '" + near + "'? " : "") + "known: "
                        + String.join(", ", NetemParams.PARAMS) + ")");
            }
        }
        if (dev.isEmpty() || dev.endsWith(".")) {
            throw new IllegalArgumentException("unknown knob '" + k + "' (expected usnet.netem.<dev> or usnet.netem.<dev>.<param>)");
        }
        if (dev.equals("all") || dev.equals("default")) {
            throw new IllegalArgumentException(k + ": link emulation is set per device, not for '" + dev + "'");
        }
        return new NetemKey(dev, param);
    }

    /** The device a {@code usnet.netem.*} knob names, or null when {@code key} is not one (or is malformed). */
    public static String netemDevice(String key) {
        if (!key.startsWith(NETEM_PREFIX)) {
            return null;
        }
        try {
            return parseNetemKey(key.trim()).dev;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** The link-emulation settings of device {@code dev} ({@link NetemParams#NONE} when none). */
    public NetemParams netem(String dev) {
        DevConf c = devices.get(dev);
        NetemParams p = c == null ? null : c.netem;
        return p == null ? NetemParams.NONE : p;
    }

    /**
     * Sets device {@code dev}'s link emulation as a whole ({@code tc qdisc replace ... netem}); NONE removes it.
     * The explicit values then list each parameter that differs from none.
     */
    public void setNetem(String dev, NetemParams p) {
        parseNetemKey(NETEM_PREFIX + dev);
        putNetem(dev, p);
        version++;
    }

    private void putNetem(String dev, NetemParams p) {
        DevConf c = dev(dev);
        synchronized (c) {
            c.netem = p.isNone() ? null : p;
            // The device's own keys by name: a scan of every explicit key per device set made a bridge of 10 000
            // ports with netem quadratic to build.
            explicit.remove(NETEM_PREFIX + dev);
            for (String param : NetemParams.PARAMS) {
                explicit.remove(NETEM_PREFIX + dev + "." + param);
            }
            for (String param : NetemParams.PARAMS) {
                String v = p.get(param);
                if (!v.equals(NetemParams.NONE.get(param))) {
                    explicit.put(NETEM_PREFIX + dev + "." + param, v);
                }
            }
        }
    }

    /** The current value of a knob as text. */
    public String get(String key) {
        if (key.startsWith(NETEM_PREFIX)) {
            NetemKey nk = parseNetemKey(key.trim());
            NetemParams p = netem(nk.dev);
            return nk.param == null ? p.format() : p.get(nk.param);
        }
        String e = explicit.get(key);
        if (e != null) {
            return e;
        }
        if (key.equals("usnet.forward.cow")) {
            return cowPolicy.knobValue();
        }
        if (key.equals(CPU_MACHINE)) {
            return cpuMachine;
        }
        GlobalKnob g = GLOBAL.get(key);
        if (g != null) {
            return Long.toString(g.def);
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
        return Long.toString(t.knob.getter.get(c));
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
        String dev = null;
        for (String prefix : new String[] {"net.ipv4.conf.", "net.ipv4.neigh."}) {
            int dot = k.lastIndexOf('.');
            if (k.startsWith(prefix) && dot > prefix.length()) {
                dev = k.substring(prefix.length(), dot);
            }
        }
        String d = dev;
        java.util.List<String> names = known().stream()
                .filter(n -> d != null || !n.contains("<dev>"))
                .map(n -> d == null ? n : n.replace("<dev>", d)).toList();
        java.util.List<String> near = NearestNames.nearest(k, names, 3);
        return "unknown knob '" + k + "'" + (near.isEmpty() ? " (no known knob has a similar name)"
                : " (did you mean " + String.join(" or ", near.stream().map(n -> "'" + n + "'").toList()) + "?)");
    }

    /** The names of knobs this version understands, with {@code <dev>} placeholders. */
    public static java.util.List<String> known() {
        java.util.List<String> l = new java.util.ArrayList<>(GLOBAL.keySet());
        l.add("usnet.forward.cow");
        l.add(CPU_MACHINE);
        l.addAll(declared().keySet());
        Function<DevKnob, String> f = d -> "net.ipv4." + d.section + ".<dev>." + d.name;
        DEV_KNOBS.values().forEach(d -> l.add(f.apply(d)));
        l.add(NETEM_PREFIX + "<dev>");
        NetemParams.PARAMS.forEach(p -> l.add(NETEM_PREFIX + "<dev>." + p));
        return l;
    }

    /** proxy_arp, send_redirects: on when on for {@code all} or for the device (IN_DEV_ORCONF). */
    public boolean proxyArp(DevConf c) {
        return (all.proxyArp | c.proxyArp) != 0;
    }

    public boolean sendRedirects(DevConf c) {
        return (all.sendRedirects | c.sendRedirects) != 0;
    }

    /** rp_filter: the larger of {@code all} and the device (IN_DEV_MAXCONF). */
    public int rpFilter(DevConf c) {
        return Math.max(all.rpFilter, c.rpFilter);
    }

    public int arpIgnore(DevConf c) {
        return Math.max(all.arpIgnore, c.arpIgnore);
    }

    public int arpAnnounce(DevConf c) {
        return Math.max(all.arpAnnounce, c.arpAnnounce);
    }
}
