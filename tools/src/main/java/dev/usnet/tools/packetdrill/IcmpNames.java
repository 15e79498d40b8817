package dev.usnet.tools.packetdrill;

import java.util.Map;

/** ICMPv4 type and code names as packetdrill scripts write them, to their RFC 792 / RFC 1812 numbers. */
final class IcmpNames {
    static final int DEST_UNREACH = 3;
    static final int FRAG_NEEDED = 4;

    private static final Map<String, Integer> TYPES = Map.ofEntries(
            Map.entry("echo_reply", 0), Map.entry("unreachable", DEST_UNREACH), Map.entry("source_quench", 4),
            Map.entry("redirect", 5), Map.entry("echo_request", 8), Map.entry("time_exceeded", 11),
            Map.entry("parameter_problem", 12), Map.entry("timestamp_request", 13), Map.entry("timestamp_reply", 14),
            Map.entry("information_request", 15), Map.entry("information_reply", 16),
            Map.entry("address_mask_request", 17), Map.entry("address_mask_reply", 18));

    private static final Map<String, Integer> UNREACH_CODES = Map.ofEntries(
            Map.entry("net_unreachable", 0), Map.entry("host_unreachable", 1), Map.entry("protocol_unreachable", 2),
            Map.entry("port_unreachable", 3), Map.entry("frag_needed", FRAG_NEEDED),
            Map.entry("source_route_failed", 5), Map.entry("net_unknown", 6), Map.entry("host_unknown", 7),
            Map.entry("source_host_isolated", 8), Map.entry("net_prohibited", 9), Map.entry("host_prohibited", 10),
            Map.entry("net_unreachable_for_tos", 11), Map.entry("host_unreachable_for_tos", 12),
            Map.entry("packet_filtered", 13), Map.entry("precedence_violation", 14),
            Map.entry("precedence_cutoff", 15));

    private IcmpNames() {
    }

    static Integer type(String name) {
        if (name.startsWith("type_")) {
            return number(name.substring(5));
        }
        return TYPES.get(name);
    }

    static Integer code(int type, String name) {
        if (name.startsWith("code_")) {
            return number(name.substring(5));
        }
        return type == DEST_UNREACH ? UNREACH_CODES.get(name) : null;
    }

    private static Integer number(String s) {
        try {
            int v = Integer.parseInt(s);
            return v >= 0 && v <= 255 ? v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
