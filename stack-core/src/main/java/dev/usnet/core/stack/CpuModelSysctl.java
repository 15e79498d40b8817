package dev.usnet.core.stack;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.Knob.Applies;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import dev.usnet.core.knob.ValueKnob;
import java.util.List;

/**
 * The CPU model's knobs (docs/cpu-model.md): off by default; the costs per step are those measured in
 * perf-tests/README.md. Read once per backlog run.
 */
public final class CpuModelSysctl implements SysctlTable {
    private static final long MAX_COST = 1_000_000;

    public static final LongKnob MODEL = LongKnob.define("usnet.cpu.model", 0, 0, 1,
            "backlog processing consumes modelled CPU time (virtual time drains slower)");
    public static final LongKnob CORES = LongKnob.define("usnet.cpu.cores", 1, 1, 1024,
            "cores the namespace's modelled receive processing spreads over");
    public static final LongKnob L2_RX_NS = LongKnob.define("usnet.cpu.l2_rx_ns", 40, 0, MAX_COST,
            "ns per frame received (netif_receive_skb, eth_type_trans)");
    public static final LongKnob BRIDGE_FWD_NS = LongKnob.define("usnet.cpu.bridge_fwd_ns", 45, 0, MAX_COST,
            "ns per frame a bridge forwards or floods (br_handle_frame -> br_forward)");
    public static final LongKnob IP_FWD_NS = LongKnob.define("usnet.cpu.ip_fwd_ns", 135, 0, MAX_COST,
            "ns per IPv4 datagram forwarded (ip_forward, route lookup, TTL)");
    public static final LongKnob LOCAL_DELIVER_NS = LongKnob.define("usnet.cpu.local_deliver_ns", 150, 0, MAX_COST,
            "ns per IPv4 datagram delivered locally (ip_local_deliver)");
    public static final LongKnob COW_COPY_NS = LongKnob.define("usnet.cpu.cow_copy_ns", 340, 0, MAX_COST,
            "ns per copy-on-write copy (skb_cow -> pskb_expand_head), besides its bytes");
    public static final LongKnob COPY_PS_PER_BYTE = LongKnob.define("usnet.cpu.copy_ps_per_byte", 32, 0, MAX_COST,
            "picoseconds per byte a COW copy copies");
    public static final LongKnob CSUM_PS_PER_BYTE = LongKnob.define("usnet.cpu.csum_ps_per_byte", 107, 0, MAX_COST,
            "picoseconds per byte checksummed in software (csum_partial)");
    public static final LongKnob CT_LOOKUP_NS = LongKnob.define("usnet.cpu.ct_lookup_ns", 70, 0, MAX_COST,
            "ns per connection-tracking lookup (nf_conntrack_in: tuple, hash, table walk, state update)");
    public static final LongKnob CT_NEW_NS = LongKnob.define("usnet.cpu.ct_new_ns", 1100, 0, MAX_COST,
            "ns per new connection-tracking entry (init_conntrack and its confirmation), besides its lookup");
    public static final LongKnob NAT_NS = LongKnob.define("usnet.cpu.nat_ns", 45, 0, MAX_COST,
            "ns per packet NAT rewrites (addresses, ports, checksums: nf_nat_manip_pkt)");
    public static final LongKnob NFT_RULE_NS = LongKnob.define("usnet.cpu.nft_rule_ns", 10, 0, MAX_COST,
            "ns per nftables rule evaluated for a packet (nft_do_chain)");
    public static final ValueKnob<String> MACHINE = ValueKnob.defineWord("usnet.cpu.machine", "",
            CpuModelSysctl::checkMachineName, Applies.LIVE,
            "the modelled machine whose CPU this namespace's receive processing runs on; namespaces naming the same "
                    + "machine share its busy time; empty: a machine of its own");

    private static String checkMachineName(String v) {
        if (!v.matches("[A-Za-z0-9_.-]{0,64}")) {
            throw new IllegalArgumentException("usnet.cpu.machine: '" + v + "' is not a machine name (up to 64 of"
                    + " A-Z a-z 0-9 _ . -; empty for a machine of the namespace's own)");
        }
        return v;
    }

    private static final List<Knob> KNOBS = List.of(MODEL, CORES, L2_RX_NS, BRIDGE_FWD_NS, IP_FWD_NS,
            LOCAL_DELIVER_NS, COW_COPY_NS, COPY_PS_PER_BYTE, CSUM_PS_PER_BYTE, CT_LOOKUP_NS, CT_NEW_NS, NAT_NS,
            NFT_RULE_NS, MACHINE);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public CpuModelSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }
}
