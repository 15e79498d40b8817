package dev.usnet.core.nftables;

import java.util.LinkedHashMap;
import java.util.Map;

/** The symbolic values nft reads and prints: protocols, ICMP types and codes, TCP flags, ct state and status. */
final class NftNames {
    private NftNames() {}

    static final Map<String, Integer> PROTOCOLS = ordered("icmp", 1, "igmp", 2, "tcp", 6, "udp", 17, "gre", 47,
            "esp", 50, "ah", 51, "sctp", 132);
    static final Map<String, Integer> ICMP_TYPES = ordered("echo-reply", 0, "destination-unreachable", 3,
            "source-quench", 4, "redirect", 5, "echo-request", 8, "router-advertisement", 9,
            "router-solicitation", 10, "time-exceeded", 11, "parameter-problem", 12, "timestamp-request", 13,
            "timestamp-reply", 14, "info-request", 15, "info-reply", 16, "address-mask-request", 17,
            "address-mask-reply", 18);
    static final Map<String, Integer> ICMP_REJECT_CODES = ordered("net-unreachable", 0, "host-unreachable", 1,
            "prot-unreachable", 2, "port-unreachable", 3, "net-prohibited", 9, "host-prohibited", 10,
            "admin-prohibited", 13);
    static final Map<String, Integer> TCP_FLAGS = ordered("fin", 0x01, "syn", 0x02, "rst", 0x04, "psh", 0x08,
            "ack", 0x10, "urg", 0x20, "ecn", 0x40, "cwr", 0x80);
    /** NF_CT_STATE_BIT: invalid, then 1 << (ctinfo % IP_CT_IS_REPLY + 1), untracked. */
    static final Map<String, Integer> CT_STATES = ordered("invalid", 1, "established", 2, "related", 4, "new", 8,
            "untracked", 64);
    static final Map<String, Integer> CT_STATUS = ordered("expected", 1, "seen-reply", 2, "assured", 4,
            "confirmed", 8, "snat", 16, "dnat", 32, "dying", 512);

    private static Map<String, Integer> ordered(Object... kv) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (Integer) kv[i + 1]);
        }
        return m;
    }

    static String nameOf(Map<String, Integer> m, int v) {
        for (Map.Entry<String, Integer> e : m.entrySet()) {
            if (e.getValue() == v) {
                return e.getKey();
            }
        }
        return null;
    }

    /** A bit mask as nft prints it: the names of its bits in bit order, joined by commas. */
    static String bits(Map<String, Integer> m, int mask) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Integer> e : m.entrySet()) {
            if ((mask & e.getValue()) != 0) {
                if (!sb.isEmpty()) {
                    sb.append(',');
                }
                sb.append(e.getKey());
            }
        }
        return sb.toString();
    }

    static String ipv4(int a) {
        return (a >>> 24) + "." + ((a >>> 16) & 0xff) + "." + ((a >>> 8) & 0xff) + "." + (a & 0xff);
    }
}
