package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr6;
import java.util.ArrayList;
import java.util.List;

/**
 * A device's {@code addresses:} list, both families in one list as {@code ip addr add} takes them: {@code
 * 198.18.0.1/24}, {@code 2001:db8:1::1/64}, {@code 2001:db8:1::1/64 nodad}. The family is the address's own (a
 * colon makes it IPv6). Bad entries are reported with their line and left out.
 */
public final class AddressSyntax {
    private AddressSyntax() {}

    /** The addresses of one list, by family. */
    public record Addresses(List<Addr> v4, List<Addr6> v6) {}

    /** Reads {@code key} of {@code m}: a list of addresses of either family. */
    public static Addresses read(YamlMap m, String key) {
        List<Addr> v4 = new ArrayList<>();
        List<Addr6> v6 = new ArrayList<>();
        for (YamlMap.Item it : m.list(key)) {
            String s = m.scalar(it.node(), it.where(), "an address with prefix length like 198.18.0.1/24 or 2001:db8:1::1/64");
            if (s == null) {
                continue;
            }
            String t = s.trim();
            if (t.indexOf(':') >= 0) {
                Addr6 a = ipv6(t, it.where(), m.problems());
                if (a != null) {
                    v6.add(a);
                }
            } else {
                Addr a = ipv4(t, it.where(), m.problems());
                if (a != null) {
                    v4.add(a);
                }
            }
        }
        return new Addresses(List.copyOf(v4), List.copyOf(v6));
    }

    /** {@code A.B.C.D/LEN}; null when bad (reported). */
    static Addr ipv4(String s, Where w, Problems problems) {
        int slash = s.indexOf('/');
        try {
            if (slash < 0) {
                throw new IllegalArgumentException();
            }
            int ip = Ipv4Addr.parse(s.substring(0, slash));
            String lenText = s.substring(slash + 1);
            if (!lenText.matches("[0-9]{1,2}")) {
                throw new IllegalArgumentException();
            }
            int len = Integer.parseInt(lenText);
            if (len > 32) {
                throw new IllegalArgumentException();
            }
            return new Addr(ip, len, s, w);
        } catch (IllegalArgumentException e) {
            problems.add(w, "expected an IPv4 address with prefix length like 198.18.0.1/24, got \"" + s + "\"");
            return null;
        }
    }

    /** {@code ADDR/LEN [nodad]}; null when bad (reported). */
    static Addr6 ipv6(String s, Where w, Problems problems) {
        String[] words = s.split("\\s+");
        boolean nodad = false;
        for (int i = 1; i < words.length; i++) {
            if (!words[i].equals("nodad")) {
                problems.add(w, "\"" + s + "\": unknown flag '" + words[i] + "' (an IPv6 address takes only nodad)");
                return null;
            }
            nodad = true;
        }
        String cidr = words[0];
        int slash = cidr.indexOf('/');
        String lenText = slash < 0 ? "" : cidr.substring(slash + 1);
        if (slash < 0 || !lenText.matches("[0-9]{1,3}") || Integer.parseInt(lenText) > 128) {
            problems.add(w, "expected an IPv6 address with prefix length 0..128 like 2001:db8:1::1/64, got \"" + s + "\"");
            return null;
        }
        Ipv6Addr ip;
        try {
            ip = Ipv6Addr.parse(cidr.substring(0, slash));
        } catch (IllegalArgumentException e) {
            problems.add(w, "expected an IPv6 address with prefix length like 2001:db8:1::1/64, got \"" + s + "\"");
            return null;
        }
        if (ip.isMulticast() || ip.isUnspecified()) {
            problems.add(w, cidr + " is " + (ip.isMulticast() ? "a multicast" : "the unspecified") + " address, which no device"
                    + " can have (Linux: Cannot assign requested address)");
            return null;
        }
        if (Ipv6Addr.isV4Mapped(ip.hi(), ip.lo())) {
            problems.add(w, cidr + " is an IPv4-mapped address (::ffff:a.b.c.d), which names an IPv4 peer of an IPv6 socket;"
                    + " give the device the IPv4 address itself");
            return null;
        }
        return new Addr6(ip, Integer.parseInt(lenText), nodad, s, w);
    }
}
