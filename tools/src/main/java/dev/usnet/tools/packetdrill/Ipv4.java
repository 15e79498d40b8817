package dev.usnet.tools.packetdrill;

/** Dotted IPv4 addresses to and from the int form of {@link ScriptOptions} (198.18.0.1 is 0xC6120001). */
final class Ipv4 {
    private Ipv4() {
    }

    static int parse(String dotted) {
        String[] p = dotted.split("\\.", -1);
        if (p.length != 4) {
            throw new IllegalArgumentException("not an IPv4 address: " + dotted);
        }
        int v = 0;
        for (String s : p) {
            int b;
            try {
                b = Integer.parseInt(s);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an IPv4 address: " + dotted);
            }
            if (b < 0 || b > 255 || s.isEmpty()) {
                throw new IllegalArgumentException("not an IPv4 address: " + dotted);
            }
            v = (v << 8) | b;
        }
        return v;
    }

    static String format(int a) {
        return (a >>> 24) + "." + ((a >>> 16) & 255) + "." + ((a >>> 8) & 255) + "." + (a & 255);
    }

    /** The prefix length of a netmask ({@code 255.255.255.0} → 24); fails on a mask with holes. */
    static int prefixLength(int mask) {
        int len = Integer.bitCount(mask);
        if (len != Integer.numberOfLeadingZeros(~mask) ) {
            throw new IllegalArgumentException("not a netmask: " + format(mask));
        }
        return len;
    }
}
