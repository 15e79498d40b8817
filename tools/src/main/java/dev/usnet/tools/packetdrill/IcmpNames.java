package dev.usnet.tools.packetdrill;

import java.util.Map;

/**
 * ICMP type and code names as packetdrill scripts write them, to their numbers: ICMPv4 (RFC 792 / RFC 1812) for
 * scripts run over IPv4, ICMPv6 (RFC 4443) over IPv6. A script's icmp line is not translated between the two, as
 * packetdrill does not: {@code unreachable port_unreachable} exists in both (type 3 code 3, type 1 code 4),
 * {@code unreachable frag_needed} only in ICMPv4 and {@code packet_too_big} only in ICMPv6.
 */
final class IcmpNames {
    static final int DEST_UNREACH = 3;
    static final int FRAG_NEEDED = 4;
    static final int V6_DEST_UNREACH = 1;
    static final int V6_PACKET_TOO_BIG = 2;

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

    private static final Map<String, Integer> V6_TYPES = Map.ofEntries(
            Map.entry("unreachable", V6_DEST_UNREACH), Map.entry("packet_too_big", V6_PACKET_TOO_BIG),
            Map.entry("time_exceeded", 3), Map.entry("parameter_problem", 4), Map.entry("echo_request", 128),
            Map.entry("echo_reply", 129));

    /** RFC 4443 §3.1; code 0 also under the name packetdrill scripts use for it over both versions. */
    private static final Map<String, Integer> V6_UNREACH_CODES = Map.ofEntries(
            Map.entry("no_route", 0), Map.entry("net_unreachable", 0), Map.entry("admin_prohibited", 1),
            Map.entry("not_neighbour", 2), Map.entry("beyond_scope", 2), Map.entry("address_unreachable", 3),
            Map.entry("port_unreachable", 4), Map.entry("source_address_failed_policy", 5),
            Map.entry("reject_route", 6));

    private static final Map<String, Integer> V6_TIME_EXCEEDED_CODES = Map.ofEntries(
            Map.entry("exceeded_hop_limit", 0), Map.entry("exceeded_frag_time", 1));

    private static final Map<String, Integer> V6_PARAMETER_PROBLEM_CODES = Map.ofEntries(
            Map.entry("header_field", 0), Map.entry("unknown_next_header", 1), Map.entry("unknown_option", 2));

    private IcmpNames() {
    }

    /** The ICMPv4 type, or null. */
    static Integer type(String name) {
        return type(name, false);
    }

    /** The ICMPv4 code of {@code type}, or null. */
    static Integer code(int type, String name) {
        return code(type, name, false);
    }

    static Integer type(String name, boolean v6) {
        if (name.startsWith("type_")) {
            return number(name.substring(5));
        }
        return (v6 ? V6_TYPES : TYPES).get(name);
    }

    static Integer code(int type, String name, boolean v6) {
        if (name.startsWith("code_")) {
            return number(name.substring(5));
        }
        Map<String, Integer> codes = !v6 ? (type == DEST_UNREACH ? UNREACH_CODES : null) : switch (type) {
            case V6_DEST_UNREACH -> V6_UNREACH_CODES;
            case 3 -> V6_TIME_EXCEEDED_CODES;
            case 4 -> V6_PARAMETER_PROBLEM_CODES;
            default -> null;
        };
        return codes == null ? null : codes.get(name);
    }

    /** Whether a type name, and a code name for it, exist in ICMPv4 or ICMPv6 (the parser's first check). */
    static boolean knownInEither(String typeName, String codeName) {
        for (boolean v6 : new boolean[] {false, true}) {
            Integer t = type(typeName, v6);
            if (t != null && (codeName == null || code(t, codeName, v6) != null)) {
                return true;
            }
        }
        return false;
    }

    /** The line's type number for the version. The line passed {@link #problem}. */
    static int type(PacketSpec.Icmp icmp, boolean v6) {
        return type(icmp.typeName(), v6);
    }

    /** The line's code number for the version (0 when it names none). The line passed {@link #problem}. */
    static int code(PacketSpec.Icmp icmp, boolean v6) {
        return icmp.codeName() == null ? 0 : code(type(icmp, v6), icmp.codeName(), v6);
    }

    /** Why the line cannot be an ICMP (v6: ICMPv6) packet, or null when it can. */
    static String problem(PacketSpec.Icmp icmp, boolean v6) {
        String family = v6 ? "ICMPv6" : "ICMPv4";
        Integer t = type(icmp.typeName(), v6);
        if (t == null) {
            return "unknown " + family + " type " + icmp.typeName();
        }
        Integer c = icmp.codeName() == null ? Integer.valueOf(0) : code(t, icmp.codeName(), v6);
        if (c == null) {
            return "unknown " + family + " code " + icmp.codeName() + " for " + icmp.typeName();
        }
        if (icmp.mtu() != null) {
            boolean ok = v6 ? t == V6_PACKET_TOO_BIG && c == 0 : t == DEST_UNREACH && c == FRAG_NEEDED;
            if (!ok) {
                return v6 ? "an ICMPv6 mtu is only valid for packet_too_big"
                        : "an ICMP mtu is only valid for unreachable frag_needed";
            }
        }
        return null;
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
