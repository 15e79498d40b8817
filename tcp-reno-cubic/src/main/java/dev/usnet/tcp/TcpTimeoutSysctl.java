package dev.usnet.tcp;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * The connection-lifecycle timeout knobs that arrived after Linux 4.3 (ipv4_net_table entries), kept apart from
 * {@link TcpSysctl} because their defaults describe newer kernels: 0 here keeps 3.18-4.3's behaviour, and a
 * namespace that models a 6.x kernel sets Linux's own default.
 */
public final class TcpTimeoutSysctl implements SysctlTable {
    /**
     * Linux 6.5+: the first N retransmissions of a SYN keep the initial 1 s timeout instead of doubling it, and
     * connect() gets N retransmissions more before it gives up (the deadline stays the one the doubling timer would
     * have reached after tcp_syn_retries). Linux's default is 4; 0 is every kernel before 6.5.
     */
    public static final LongKnob SYN_LINEAR_TIMEOUTS = LongKnob.define("net.ipv4.tcp_syn_linear_timeouts", 0, 0, 127,
            "SYN retransmissions that keep the initial timeout before it doubles (6.5+: 4; 0: always double)");

    private static final List<Knob> ALL = List.of(SYN_LINEAR_TIMEOUTS);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public TcpTimeoutSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return ALL;
    }
}
