package dev.usnet.core.ipv4;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/** ICMP's knobs (Linux's icmp_* entries of ipv4_net_table): echo replies and the rate limits of errors. */
public final class IcmpSysctl implements SysctlTable {
    private static final long INT_MAX = Integer.MAX_VALUE;

    public static final LongKnob RATELIMIT = LongKnob.define("net.ipv4.icmp_ratelimit", 1000, 0, INT_MAX,
            "milliseconds between ICMP messages of a rate-limited type to one peer (inet_peer token bucket)");
    public static final LongKnob RATEMASK = LongKnob.define("net.ipv4.icmp_ratemask", 0x1818, 0, 0x7ffff,
            "bit per ICMP type that icmp_ratelimit limits (default: unreachable, source quench, time exceeded, "
                    + "parameter problem)");
    public static final LongKnob MSGS_PER_SEC = LongKnob.define("net.ipv4.icmp_msgs_per_sec", 1000, 0, INT_MAX,
            "ICMP messages per second the namespace sends at most, all peers together");
    public static final LongKnob MSGS_BURST = LongKnob.define("net.ipv4.icmp_msgs_burst", 50, 0, INT_MAX,
            "burst of the namespace-wide ICMP limit");
    public static final LongKnob ECHO_IGNORE_ALL = LongKnob.define("net.ipv4.icmp_echo_ignore_all", 0, 0, 1,
            "answer no echo request");
    public static final LongKnob ECHO_IGNORE_BROADCASTS = LongKnob.define("net.ipv4.icmp_echo_ignore_broadcasts", 1,
            0, 1, "answer no echo request sent to a broadcast address");
    public static final LongKnob IGNORE_BOGUS_ERROR_RESPONSES = LongKnob.define(
            "net.ipv4.icmp_ignore_bogus_error_responses", 1, 0, 1,
            "do not log ICMP errors sent in answer to broadcast frames");

    private static final List<Knob> KNOBS = List.of(RATELIMIT, RATEMASK, MSGS_PER_SEC, MSGS_BURST, ECHO_IGNORE_ALL,
            ECHO_IGNORE_BROADCASTS, IGNORE_BOGUS_ERROR_RESPONSES);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public IcmpSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }
}
