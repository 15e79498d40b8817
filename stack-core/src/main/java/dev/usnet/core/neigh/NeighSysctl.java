package dev.usnet.core.neigh;

import dev.usnet.core.knob.DeviceKnob;
import dev.usnet.core.knob.DeviceKnob.Combine;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * The neighbour tables' knobs. Each protocol family's table has the same set under its own prefix, as Linux gives
 * every neigh_table its own {@code gc_thresh*} and neigh_parms per device: {@link Table#declare} declares one
 * table's set ({@code net.ipv4.neigh.} for ARP's, {@code net.ipv6.neigh.} for NDP's), with the same names and
 * defaults. This table is IPv4's; its knobs are also the static fields below, which the neighbour table reads.
 */
public final class NeighSysctl implements SysctlTable {
    private static final long INT_MAX = Integer.MAX_VALUE;

    /**
     * One neighbour table's knobs: its size limits ({@code <prefix>default.gc_thresh*}, namespace-wide as the
     * table's) and each device's parameters ({@code <prefix><dev>.*}, Linux's neigh_parms).
     */
    public static final class Table {
        private final String family;
        public final LongKnob gcThresh1;
        public final LongKnob gcThresh2;
        public final LongKnob gcThresh3;
        public final DeviceKnob mcastSolicit;
        public final DeviceKnob ucastSolicit;
        public final DeviceKnob appSolicit;
        public final DeviceKnob retransTimeMs;
        public final DeviceKnob baseReachableTimeMs;
        public final DeviceKnob delayFirstProbeTime;
        public final DeviceKnob gcStaleTime;
        public final DeviceKnob unresQlenBytes;
        public final DeviceKnob proxyDelay;
        public final DeviceKnob proxyQlen;

        private Table(String family) {
            this.family = family;
            gcThresh1 = LongKnob.define(family + "default.gc_thresh1", 128, 0, INT_MAX,
                    "below this many entries the periodic neighbour GC removes nothing");
            gcThresh2 = LongKnob.define(family + "default.gc_thresh2", 512, 0, INT_MAX,
                    "above it, a new entry forces a GC when the last one is more than 5 s ago");
            gcThresh3 = LongKnob.define(family + "default.gc_thresh3", 1024, 1, INT_MAX,
                    "the hard limit: at it, a new entry forces a GC and fails when nothing could be removed");
            mcastSolicit = DeviceKnob.define(family, "mcast_solicit", 3, 0, 255, Combine.DEVICE);
            ucastSolicit = DeviceKnob.define(family, "ucast_solicit", 3, 0, 255, Combine.DEVICE);
            appSolicit = DeviceKnob.define(family, "app_solicit", 0, 0, 255, Combine.DEVICE);
            retransTimeMs = DeviceKnob.define(family, "retrans_time_ms", 1000, 10, INT_MAX, Combine.DEVICE);
            baseReachableTimeMs = DeviceKnob.define(family, "base_reachable_time_ms", 30_000, 1, INT_MAX,
                    Combine.DEVICE);
            delayFirstProbeTime = DeviceKnob.define(family, "delay_first_probe_time", 5, 0, INT_MAX, Combine.DEVICE);
            gcStaleTime = DeviceKnob.define(family, "gc_stale_time", 60, 0, INT_MAX, Combine.DEVICE);
            unresQlenBytes = DeviceKnob.define(family, "unres_qlen_bytes", 212_992, 0, INT_MAX, Combine.DEVICE);
            proxyDelay = DeviceKnob.define(family, "proxy_delay", 80, 0, INT_MAX, Combine.DEVICE);
            proxyQlen = DeviceKnob.define(family, "proxy_qlen", 64, 0, INT_MAX, Combine.DEVICE);
        }

        /**
         * Declares (and registers) a neighbour table's knobs under {@code family} ({@code net.ipv6.neigh.}); a
         * protocol family does this once, in its own {@link SysctlTable}, and lists {@link #knobs()} and
         * {@link #deviceKnobs()} there.
         */
        public static Table declare(String family) {
            return new Table(family);
        }

        /** The per-device family, e.g. {@code net.ipv4.neigh.}. */
        public String family() {
            return family;
        }

        /** The namespace-wide knobs (the GC thresholds). */
        public List<Knob> knobs() {
            return List.of(gcThresh1, gcThresh2, gcThresh3);
        }

        /** The per-device parameters. */
        public List<DeviceKnob> deviceKnobs() {
            return List.of(mcastSolicit, ucastSolicit, appSolicit, retransTimeMs, baseReachableTimeMs,
                    delayFirstProbeTime, gcStaleTime, unresQlenBytes, proxyDelay, proxyQlen);
        }
    }

    /** ARP's table: {@code net.ipv4.neigh.*}. */
    public static final Table IPV4 = Table.declare("net.ipv4.neigh.");

    /** The per-device family of IPv4's parameters. */
    public static final String NEIGH = IPV4.family();

    public static final LongKnob GC_THRESH1 = IPV4.gcThresh1;
    public static final LongKnob GC_THRESH2 = IPV4.gcThresh2;
    public static final LongKnob GC_THRESH3 = IPV4.gcThresh3;

    public static final DeviceKnob MCAST_SOLICIT = IPV4.mcastSolicit;
    public static final DeviceKnob UCAST_SOLICIT = IPV4.ucastSolicit;
    public static final DeviceKnob APP_SOLICIT = IPV4.appSolicit;
    public static final DeviceKnob RETRANS_TIME_MS = IPV4.retransTimeMs;
    public static final DeviceKnob BASE_REACHABLE_TIME_MS = IPV4.baseReachableTimeMs;
    public static final DeviceKnob DELAY_FIRST_PROBE_TIME = IPV4.delayFirstProbeTime;
    public static final DeviceKnob GC_STALE_TIME = IPV4.gcStaleTime;
    public static final DeviceKnob UNRES_QLEN_BYTES = IPV4.unresQlenBytes;
    public static final DeviceKnob PROXY_DELAY = IPV4.proxyDelay;
    public static final DeviceKnob PROXY_QLEN = IPV4.proxyQlen;

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public NeighSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return IPV4.knobs();
    }

    @Override
    public List<DeviceKnob> deviceKnobs() {
        return IPV4.deviceKnobs();
    }
}
