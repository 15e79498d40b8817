package dev.usnet.core.neigh;

import dev.usnet.core.knob.DeviceKnob;
import dev.usnet.core.knob.DeviceKnob.Combine;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * The neighbour table's knobs: its size limits ({@code gc_thresh*}, namespace-wide as neigh_table's) and each
 * device's parameters ({@code net.ipv4.neigh.<dev>.*}, Linux's neigh_parms).
 */
public final class NeighSysctl implements SysctlTable {
    private static final long INT_MAX = Integer.MAX_VALUE;

    /** The per-device family of the parameters. */
    public static final String NEIGH = "net.ipv4.neigh.";

    public static final LongKnob GC_THRESH1 = LongKnob.define("net.ipv4.neigh.default.gc_thresh1", 128, 0, INT_MAX,
            "below this many entries the periodic neighbour GC removes nothing");
    public static final LongKnob GC_THRESH2 = LongKnob.define("net.ipv4.neigh.default.gc_thresh2", 512, 0, INT_MAX,
            "above it, a new entry forces a GC when the last one is more than 5 s ago");
    public static final LongKnob GC_THRESH3 = LongKnob.define("net.ipv4.neigh.default.gc_thresh3", 1024, 1, INT_MAX,
            "the hard limit: at it, a new entry forces a GC and fails when nothing could be removed");

    public static final DeviceKnob MCAST_SOLICIT = DeviceKnob.define(NEIGH, "mcast_solicit", 3, 0, 255,
            Combine.DEVICE);
    public static final DeviceKnob UCAST_SOLICIT = DeviceKnob.define(NEIGH, "ucast_solicit", 3, 0, 255,
            Combine.DEVICE);
    public static final DeviceKnob APP_SOLICIT = DeviceKnob.define(NEIGH, "app_solicit", 0, 0, 255,
            Combine.DEVICE);
    public static final DeviceKnob RETRANS_TIME_MS = DeviceKnob.define(NEIGH, "retrans_time_ms", 1000, 10, INT_MAX,
            Combine.DEVICE);
    public static final DeviceKnob BASE_REACHABLE_TIME_MS = DeviceKnob.define(NEIGH, "base_reachable_time_ms", 30_000,
            1, INT_MAX, Combine.DEVICE);
    public static final DeviceKnob DELAY_FIRST_PROBE_TIME = DeviceKnob.define(NEIGH, "delay_first_probe_time", 5, 0,
            INT_MAX, Combine.DEVICE);
    public static final DeviceKnob GC_STALE_TIME = DeviceKnob.define(NEIGH, "gc_stale_time", 60, 0, INT_MAX,
            Combine.DEVICE);
    public static final DeviceKnob UNRES_QLEN_BYTES = DeviceKnob.define(NEIGH, "unres_qlen_bytes", 212_992, 0, INT_MAX,
            Combine.DEVICE);
    public static final DeviceKnob PROXY_DELAY = DeviceKnob.define(NEIGH, "proxy_delay", 80, 0, INT_MAX,
            Combine.DEVICE);
    public static final DeviceKnob PROXY_QLEN = DeviceKnob.define(NEIGH, "proxy_qlen", 64, 0, INT_MAX,
            Combine.DEVICE);

    private static final List<Knob> KNOBS = List.of(GC_THRESH1, GC_THRESH2, GC_THRESH3);
    private static final List<DeviceKnob> DEVICE_KNOBS = List.of(MCAST_SOLICIT, UCAST_SOLICIT, APP_SOLICIT,
            RETRANS_TIME_MS, BASE_REACHABLE_TIME_MS, DELAY_FIRST_PROBE_TIME, GC_STALE_TIME, UNRES_QLEN_BYTES,
            PROXY_DELAY, PROXY_QLEN);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public NeighSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }

    @Override
    public List<DeviceKnob> deviceKnobs() {
        return DEVICE_KNOBS;
    }
}
