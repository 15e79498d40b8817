package dev.usnet.core.netns;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/** The receive backlog's knobs (Linux's net_core_table) and the namespace's timer rate. */
public final class NetCoreSysctl implements SysctlTable {
    public static final LongKnob NETDEV_MAX_BACKLOG = LongKnob.define("net.core.netdev_max_backlog", 1000, 1, 65_536,
            "frames the receive backlog holds before it drops (enqueue_to_backlog)");
    public static final LongKnob DEV_WEIGHT = LongKnob.define("net.core.dev_weight", 64, 1, 65_536,
            "frames one run of the receive backlog handles before it yields (process_backlog's quota, the NAPI "
                    + "weight of the per-CPU backlog)");
    // Fixed at build: timers already armed count in its jiffies.
    public static final LongKnob HZ = LongKnob.defineAtBuild("usnet.hz", 1000, 100, 1000,
            "the jiffy rate of timers that count in jiffies in Linux (inet_peer limits; CONFIG_HZ)");

    private static final List<Knob> KNOBS = List.of(NETDEV_MAX_BACKLOG, DEV_WEIGHT, HZ);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public NetCoreSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }
}
