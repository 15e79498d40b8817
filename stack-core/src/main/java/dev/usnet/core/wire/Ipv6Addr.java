package dev.usnet.core.wire;

import io.netty.buffer.ByteBuf;

/**
 * An IPv6 address (RFC 4291) as two longs in network order: {@code hi} holds bytes 0–7, {@code lo} bytes 8–15.
 * The packet path works on the two longs through the static methods and allocates nothing; the record is for
 * configuration, tables keyed by address and printing.
 */
public record Ipv6Addr(long hi, long lo) implements Comparable<Ipv6Addr> {
    public static final Ipv6Addr ANY = new Ipv6Addr(0, 0);
    public static final Ipv6Addr LOOPBACK = new Ipv6Addr(0, 1);
    /** ff02::1, all nodes on the link. */
    public static final Ipv6Addr ALL_NODES = new Ipv6Addr(0xff02_0000_0000_0000L, 1);
    /** ff02::2, all routers on the link. */
    public static final Ipv6Addr ALL_ROUTERS = new Ipv6Addr(0xff02_0000_0000_0000L, 2);
    /** ff02::16, where MLDv2 reports go. */
    public static final Ipv6Addr ALL_MLDV2_ROUTERS = new Ipv6Addr(0xff02_0000_0000_0000L, 0x16);
    /** fe80::/64, the link-local prefix every interface's link-local address is made in. */
    public static final long LINK_LOCAL_PREFIX = 0xfe80_0000_0000_0000L;

    /** Multicast scopes (RFC 4291 §2.7), the low nibble of the second byte. */
    public static final int SCOPE_INTERFACE_LOCAL = 0x1;
    public static final int SCOPE_LINK_LOCAL = 0x2;
    public static final int SCOPE_REALM_LOCAL = 0x3;
    public static final int SCOPE_ADMIN_LOCAL = 0x4;
    public static final int SCOPE_SITE_LOCAL = 0x5;
    public static final int SCOPE_ORGANIZATION_LOCAL = 0x8;
    public static final int SCOPE_GLOBAL = 0xe;

    /** Reads 16 bytes at absolute index {@code off}. */
    public static Ipv6Addr read(ByteBuf buf, int off) {
        return new Ipv6Addr(buf.getLong(off), buf.getLong(off + 8));
    }

    /** Writes the address as 16 bytes at absolute index {@code off}. */
    public void write(ByteBuf buf, int off) {
        buf.setLong(off, hi);
        buf.setLong(off + 8, lo);
    }

    /**
     * Parses the text forms of RFC 4291 §2.2: eight groups of up to four hex digits, one {@code ::} for a run of
     * zero groups, and an embedded dotted IPv4 address in place of the last two groups. A zone ({@code %eth0})
     * is refused: the caller names the device separately.
     */
    public static Ipv6Addr parse(String text) {
        String s = text.trim();
        if (s.isEmpty() || s.indexOf('%') >= 0) {
            throw bad(text);
        }
        int[] groups = new int[8];
        int n = 0;
        int gap = -1;
        int i = 0;
        int len = s.length();
        if (s.startsWith("::")) {
            gap = 0;
            i = 2;
            if (len == 2) {
                return ANY;
            }
        } else if (s.startsWith(":")) {
            throw bad(text);
        }
        while (i < len) {
            int end = s.indexOf(':', i);
            String part = end < 0 ? s.substring(i) : s.substring(i, end);
            if (part.indexOf('.') >= 0) {
                if (end >= 0 || n > 6) {
                    throw bad(text);
                }
                int v4;
                try {
                    v4 = Ipv4Addr.parse(part);
                } catch (IllegalArgumentException e) {
                    throw bad(text);
                }
                groups[n++] = v4 >>> 16;
                groups[n++] = v4 & 0xffff;
                i = len;
                break;
            }
            if (part.isEmpty() || part.length() > 4 || n == 8) {
                throw bad(text);
            }
            int v = 0;
            for (int k = 0; k < part.length(); k++) {
                int d = Character.digit(part.charAt(k), 16);
                if (d < 0) {
                    throw bad(text);
                }
                v = (v << 4) | d;
            }
            groups[n++] = v;
            if (end < 0) {
                i = len;
            } else if (end + 1 < len && s.charAt(end + 1) == ':') {
                if (gap >= 0) {
                    throw bad(text);
                }
                gap = n;
                i = end + 2;
            } else if (end + 1 == len) {
                throw bad(text);
            } else {
                i = end + 1;
            }
        }
        if (gap < 0 ? n != 8 : n > 7) {
            throw bad(text);
        }
        int[] full = new int[8];
        if (gap < 0) {
            full = groups;
        } else {
            int tail = n - gap;
            System.arraycopy(groups, 0, full, 0, gap);
            System.arraycopy(groups, gap, full, 8 - tail, tail);
        }
        long h = 0;
        long l = 0;
        for (int k = 0; k < 4; k++) {
            h = (h << 16) | full[k];
            l = (l << 16) | full[k + 4];
        }
        return new Ipv6Addr(h, l);
    }

    private static IllegalArgumentException bad(String text) {
        return new IllegalArgumentException("not an IPv6 address: '" + text + "'");
    }

    /** Group {@code i} (0–7) as an unsigned 16-bit value. */
    public int group(int i) {
        long w = i < 4 ? hi : lo;
        return (int) (w >>> (48 - 16 * (i & 3))) & 0xffff;
    }

    /**
     * The text form of RFC 5952, as {@code ip -6} prints it: lower-case hex without leading zeros, the longest run
     * of two or more zero groups (the first when tied) as {@code ::}, and, as the C library's inet_ntop, an
     * IPv4-mapped address ({@code ::ffff:a.b.c.d}) or one whose first six groups are zero and seventh is not
     * ({@code ::a.b.c.d}) with its last 32 bits dotted.
     */
    @Override
    public String toString() {
        if (hi == 0 && (lo >>> 32) == 0xffffL) {
            return "::ffff:" + Ipv4Addr.format((int) lo);
        }
        if (hi == 0 && (lo >>> 32) == 0 && (lo >>> 16) != 0) {
            return "::" + Ipv4Addr.format((int) lo);
        }
        int bestStart = -1;
        int bestLen = 1;
        for (int k = 0; k < 8; ) {
            if (group(k) != 0) {
                k++;
                continue;
            }
            int start = k;
            while (k < 8 && group(k) == 0) {
                k++;
            }
            if (k - start > bestLen) {
                bestStart = start;
                bestLen = k - start;
            }
        }
        StringBuilder sb = new StringBuilder(39);
        for (int k = 0; k < 8; k++) {
            if (k == bestStart) {
                sb.append("::");
                k += bestLen - 1;
                continue;
            }
            if (k > 0 && k != bestStart + bestLen) {
                sb.append(':');
            }
            sb.append(Integer.toHexString(group(k)));
        }
        return sb.toString();
    }

    @Override
    public int compareTo(Ipv6Addr o) {
        int c = Long.compareUnsigned(hi, o.hi);
        return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
    }

    /** The address with everything after the first {@code prefixLen} bits cleared. */
    public Ipv6Addr prefix(int prefixLen) {
        return new Ipv6Addr(hi & maskHi(prefixLen), lo & maskLo(prefixLen));
    }

    /** Whether the first {@code prefixLen} bits of {@code hi}/{@code lo} equal this address's. */
    public boolean prefixMatches(int prefixLen, long otherHi, long otherLo) {
        return ((hi ^ otherHi) & maskHi(prefixLen)) == 0 && ((lo ^ otherLo) & maskLo(prefixLen)) == 0;
    }

    /** The high 64 bits of a /{@code prefixLen} netmask. */
    public static long maskHi(int prefixLen) {
        return prefixLen <= 0 ? 0 : prefixLen >= 64 ? -1L : -1L << (64 - prefixLen);
    }

    /** The low 64 bits of a /{@code prefixLen} netmask. */
    public static long maskLo(int prefixLen) {
        return prefixLen <= 64 ? 0 : prefixLen >= 128 ? -1L : -1L << (128 - prefixLen);
    }

    public boolean isUnspecified() {
        return hi == 0 && lo == 0;
    }

    public boolean isLoopback() {
        return hi == 0 && lo == 1;
    }

    public boolean isMulticast() {
        return isMulticast(hi);
    }

    public boolean isLinkLocal() {
        return isLinkLocalUnicast(hi);
    }

    /** ff00::/8 (ipv6_addr_is_multicast). */
    public static boolean isMulticast(long hi) {
        return (hi >>> 56) == 0xff;
    }

    /** fe80::/10 (link-local unicast). */
    public static boolean isLinkLocalUnicast(long hi) {
        return (hi >>> 54) == (0xfe80L >>> 6);
    }

    /** ::ffff:0:0/96, an IPv4 address seen through an IPv6 socket. */
    public static boolean isV4Mapped(long hi, long lo) {
        return hi == 0 && (lo >>> 32) == 0xffffL;
    }

    /** The scope nibble of a multicast address (RFC 4291 §2.7). */
    public static int multicastScope(long hi) {
        return (int) (hi >>> 48) & 0xf;
    }

    /** ff02::1:ff00:0/104 + the low 24 bits of {@code lo}: where neighbour solicitations for it go (RFC 4291 §2.7.1). */
    public static Ipv6Addr solicitedNode(long lo) {
        return new Ipv6Addr(0xff02_0000_0000_0000L, 0x0000_0001_ff00_0000L | (lo & 0xff_ffffL));
    }

    /** Whether {@code hi}/{@code lo} is a solicited-node multicast address. */
    public static boolean isSolicitedNode(long hi, long lo) {
        return hi == 0xff02_0000_0000_0000L && (lo & 0xffff_ffff_ff00_0000L) == 0x0000_0001_ff00_0000L;
    }

    /** The Ethernet address an IPv6 multicast address maps to: 33:33 and its low 32 bits (RFC 2464 §7). */
    public static long multicastMac(long lo) {
        return 0x3333_0000_0000L | (lo & 0xffff_ffffL);
    }

    /**
     * The modified EUI-64 interface identifier of a 48-bit MAC (RFC 4291 appendix A): ff:fe inserted in the middle
     * and the universal/local bit flipped — what Linux's default {@code addr_gen_mode} 0 makes.
     */
    public static long eui64(long mac) {
        long upper = (mac >>> 24) & 0xff_ffffL;
        long lower = mac & 0xff_ffffL;
        return ((upper ^ 0x02_0000L) << 40) | (0xfffeL << 24) | lower;
    }

    /** fe80::/64 + the EUI-64 identifier of {@code mac}. */
    public static Ipv6Addr linkLocalFromMac(long mac) {
        return new Ipv6Addr(LINK_LOCAL_PREFIX, eui64(mac));
    }
}
