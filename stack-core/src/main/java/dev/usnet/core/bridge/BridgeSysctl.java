package dev.usnet.core.bridge;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/** The bridge's knobs: br_netfilter's (net.bridge.*), which bridged traffic through the IP hooks. */
public final class BridgeSysctl implements SysctlTable {
    public static final LongKnob NF_CALL_IPTABLES = LongKnob.define("net.bridge.bridge-nf-call-iptables", 0, 0, 1,
            "br_netfilter is loaded and bridged IPv4 passes the IP hooks, which validate the header (bad ones are "
                    + "dropped) and trim link-layer padding, as on a Docker host");
    public static final LongKnob NF_CALL_IP6TABLES = LongKnob.define("net.bridge.bridge-nf-call-ip6tables", 0, 0, 1,
            "the same for IPv6 (version and payload length checked, padding trimmed)");

    private static final List<Knob> KNOBS = List.of(NF_CALL_IPTABLES, NF_CALL_IP6TABLES);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public BridgeSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }
}
