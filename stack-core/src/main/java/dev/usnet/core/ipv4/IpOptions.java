package dev.usnet.core.ipv4;

import io.netty.buffer.ByteBuf;

/**
 * IPv4 options (RFC 791) as Linux's ip_options_compile / ip_forward_options / ip_options_fragment see
 * them: validated on input, record route and timestamp filled in when forwarding, non-copied options
 * blanked in later fragments.
 */
public final class IpOptions {
    public static final int OK = -1;
    /** Source-routed datagrams are refused (accept_source_route = 0, Linux's default). */
    public static final int SOURCE_ROUTE = -2;

    public static final int IPOPT_END = 0;
    public static final int IPOPT_NOOP = 1;
    public static final int IPOPT_RR = 7;
    public static final int IPOPT_TIMESTAMP = 68;
    public static final int IPOPT_LSRR = 131;
    public static final int IPOPT_SSRR = 137;
    public static final int IPOPT_RA = 148;
    private static final int COPIED = 0x80;

    private IpOptions() {}

    /**
     * Checks the option list of the header at {@code ipOff}; returns {@link #OK}, {@link #SOURCE_ROUTE}, or the
     * byte offset (from the IP header) of the problem, for ICMP parameter problem.
     */
    public static int validate(ByteBuf b, int ipOff) {
        int hl = (b.getUnsignedByte(ipOff) & 0xf) * 4;
        int i = 20;
        while (i < hl) {
            int type = b.getUnsignedByte(ipOff + i);
            if (type == IPOPT_END) {
                break;
            }
            if (type == IPOPT_NOOP) {
                i++;
                continue;
            }
            if (i + 1 >= hl) {
                return i;
            }
            int len = b.getUnsignedByte(ipOff + i + 1);
            if (len < 2 || i + len > hl) {
                return i;
            }
            switch (type) {
                case IPOPT_RR -> {
                    if (len < 3) {
                        return i + 1;
                    }
                    int ptr = b.getUnsignedByte(ipOff + i + 2);
                    if (ptr < 4) {
                        return i + 2;
                    }
                    if (ptr <= len && ptr + 3 > len) {
                        return i + 2;
                    }
                }
                case IPOPT_TIMESTAMP -> {
                    if (len < 4) {
                        return i + 1;
                    }
                    int ptr = b.getUnsignedByte(ipOff + i + 2);
                    if (ptr < 5) {
                        return i + 2;
                    }
                }
                case IPOPT_LSRR, IPOPT_SSRR -> {
                    return SOURCE_ROUTE;
                }
                default -> { }
            }
            i += len;
        }
        return OK;
    }

    /**
     * ip_forward_options: records {@code outAddr} in a record-route option with room left, stamps a timestamp
     * option, and returns true when the header changed (its checksum must then be recomputed).
     */
    public static boolean forward(ByteBuf b, int ipOff, int outAddr, long msSinceMidnight) {
        int hl = (b.getUnsignedByte(ipOff) & 0xf) * 4;
        boolean changed = false;
        int i = 20;
        while (i < hl) {
            int type = b.getUnsignedByte(ipOff + i);
            if (type == IPOPT_END) {
                break;
            }
            if (type == IPOPT_NOOP) {
                i++;
                continue;
            }
            int len = b.getUnsignedByte(ipOff + i + 1);
            if (type == IPOPT_RR) {
                int ptr = b.getUnsignedByte(ipOff + i + 2);
                if (ptr + 3 <= len) {
                    b.setInt(ipOff + i + ptr - 1, outAddr);
                    b.setByte(ipOff + i + 2, ptr + 4);
                    changed = true;
                }
            } else if (type == IPOPT_TIMESTAMP) {
                changed |= stamp(b, ipOff + i, len, outAddr, msSinceMidnight);
            }
            i += len;
        }
        return changed;
    }

    private static boolean stamp(ByteBuf b, int opt, int len, int addr, long ms) {
        int ptr = b.getUnsignedByte(opt + 2);
        int oflw = b.getUnsignedByte(opt + 3);
        int flags = oflw & 0xf;
        int need = flags == 0 ? 4 : 8;
        if (ptr + need - 1 > len) {
            // No room: count the hop in the overflow nibble (saturating).
            int over = oflw >>> 4;
            if (over < 15) {
                b.setByte(opt + 3, ((over + 1) << 4) | flags);
                return true;
            }
            return false;
        }
        int ts = (int) (ms & 0xffff_ffffL);
        switch (flags) {
            case 0 -> {
                b.setInt(opt + ptr - 1, ts);
                b.setByte(opt + 2, ptr + 4);
            }
            case 1 -> {
                b.setInt(opt + ptr - 1, addr);
                b.setInt(opt + ptr + 3, ts);
                b.setByte(opt + 2, ptr + 8);
            }
            case 3 -> {
                if (b.getInt(opt + ptr - 1) != addr) {
                    return false;
                }
                b.setInt(opt + ptr + 3, ts);
                b.setByte(opt + 2, ptr + 8);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** ip_options_fragment: options without the copied bit become NOOPs in fragments after the first. */
    public static void blankUncopied(ByteBuf b, int ipOff) {
        int hl = (b.getUnsignedByte(ipOff) & 0xf) * 4;
        int i = 20;
        while (i < hl) {
            int type = b.getUnsignedByte(ipOff + i);
            if (type == IPOPT_END) {
                break;
            }
            if (type == IPOPT_NOOP) {
                i++;
                continue;
            }
            int len = b.getUnsignedByte(ipOff + i + 1);
            if (len < 2 || i + len > hl) {
                break;
            }
            if ((type & COPIED) == 0) {
                for (int k = 0; k < len; k++) {
                    b.setByte(ipOff + i + k, IPOPT_NOOP);
                }
            }
            i += len;
        }
    }
}
