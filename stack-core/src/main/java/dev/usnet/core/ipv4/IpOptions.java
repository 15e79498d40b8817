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
    private static final int TS_ONLY = 0;
    private static final int TS_TSANDADDR = 1;
    private static final int TS_PRESPEC = 3;

    /** Packet.optFlags bits (struct ip_options: rr_needaddr, ts_needaddr, ts_needtime). */
    public static final int RR_NEEDADDR = 1;
    public static final int TS_NEEDADDR = 2;
    public static final int TS_NEEDTIME = 4;

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
     * The receive half of ip_options_compile (after routing, as ip_rcv_options runs): a record-route option with
     * room gets {@code specDst} (the address this host is known by on the way in) in its next slot and its
     * pointer advanced; a timestamp option gets the time (and address) per its flags. The header checksum is
     * left stale, as Linux leaves it until ip_forward_options. Records what it did in the packet
     * (IPCB(skb)->opt) for forwarding and for echoing into ICMP replies.
     */
    public static void compileInput(dev.usnet.core.buf.Packet p, ByteBuf b, int ipOff, int specDst, long msSinceMidnight,
                                    java.util.function.IntPredicate isLocal) {
        int hl = (b.getUnsignedByte(ipOff) & 0xf) * 4;
        int rr = 0;
        int ts = 0;
        int flags = 0;
        for (int i = 20, len; i < hl && (len = optionLength(b, ipOff, i, hl)) > 0; i += len) {
            int type = b.getUnsignedByte(ipOff + i);
            int opt = ipOff + i;
            if (type == IPOPT_RR && rr == 0) {
                rr = i;
                int ptr = b.getUnsignedByte(opt + 2);
                if (ptr <= len) {
                    b.setInt(opt + ptr - 1, specDst);
                    b.setByte(opt + 2, ptr + 4);
                    flags |= RR_NEEDADDR;
                }
            } else if (type == IPOPT_TIMESTAMP && ts == 0) {
                ts = i;
                int ptr = b.getUnsignedByte(opt + 2);
                int oflw = b.getUnsignedByte(opt + 3);
                int tsFlags = oflw & 0xf;
                int timeAt = -1;
                if (ptr <= len) {
                    switch (tsFlags) {
                        case TS_ONLY -> {
                            timeAt = opt + ptr - 1;
                            flags |= TS_NEEDTIME;
                            b.setByte(opt + 2, ptr + 4);
                        }
                        case TS_TSANDADDR -> {
                            b.setInt(opt + ptr - 1, specDst);
                            timeAt = opt + ptr + 3;
                            flags |= TS_NEEDADDR | TS_NEEDTIME;
                            b.setByte(opt + 2, ptr + 8);
                        }
                        case TS_PRESPEC -> {
                            if (isLocal.test(b.getInt(opt + ptr - 1))) {
                                timeAt = opt + ptr + 3;
                                flags |= TS_NEEDTIME;
                                b.setByte(opt + 2, ptr + 8);
                            }
                        }
                        default -> { }
                    }
                    if (timeAt >= 0) {
                        b.setInt(timeAt, (int) msSinceMidnight);
                    }
                } else if ((oflw & 0xf0) != 0xf0) {
                    b.setByte(opt + 3, oflw + 0x10);
                }
            }
        }
        p.setIpOptions(rr, ts, flags);
    }

    /**
     * ip_forward_options: the slots the input filled now get {@code outAddr}, the outgoing source address;
     * returns true when the header changed (the caller recomputes its checksum; after compileInput it must).
     */
    public static boolean forward(dev.usnet.core.buf.Packet p, ByteBuf b, int ipOff, int outAddr) {
        int flags = p.optFlags();
        if ((flags & RR_NEEDADDR) != 0) {
            int opt = ipOff + p.optRr();
            b.setInt(opt + b.getUnsignedByte(opt + 2) - 5, outAddr);
        }
        if ((flags & TS_NEEDADDR) != 0) {
            int opt = ipOff + p.optTs();
            b.setInt(opt + b.getUnsignedByte(opt + 2) - 9, outAddr);
        }
        return p.optRr() != 0 || p.optTs() != 0;
    }

    /**
     * __ip_options_echo for the options a reply carries back: record route and timestamp, as now in the
     * received header, with pointers advanced for the replier's own entry; padded to 4 bytes. Writes into
     * {@code out} and returns the length and where build() must write (packed: len | rrOff << 8 | tsOff << 16 |
     * flags << 24), or 0 when nothing is echoed.
     */
    public static int echo(dev.usnet.core.buf.Packet p, ByteBuf b, int ipOff, byte[] out,
                           java.util.function.IntPredicate isLocal) {
        int n = 0;
        int rrOff = 0;
        int tsOff = 0;
        int dflags = 0;
        int flags = p.optFlags();
        if (p.optRr() != 0) {
            int opt = ipOff + p.optRr();
            int optlen = b.getUnsignedByte(opt + 1);
            int soffset = b.getUnsignedByte(opt + 2);
            b.getBytes(opt, out, n, optlen);
            if ((flags & RR_NEEDADDR) != 0 && soffset <= optlen) {
                if (soffset + 3 > optlen) {
                    return 0;
                }
                out[n + 2] = (byte) (soffset + 4);
                dflags |= RR_NEEDADDR;
            }
            rrOff = 20 + n;
            n += optlen;
        }
        if (p.optTs() != 0) {
            int opt = ipOff + p.optTs();
            int optlen = b.getUnsignedByte(opt + 1);
            int soffset = b.getUnsignedByte(opt + 2);
            b.getBytes(opt, out, n, optlen);
            if (soffset <= optlen) {
                if ((flags & TS_NEEDADDR) != 0) {
                    if (soffset + 3 > optlen) {
                        return 0;
                    }
                    dflags |= TS_NEEDADDR;
                    soffset += 4;
                }
                if ((flags & TS_NEEDTIME) != 0) {
                    if (soffset + 3 > optlen) {
                        return 0;
                    }
                    if ((out[n + 3] & 0xf) != TS_PRESPEC) {
                        dflags |= TS_NEEDTIME;
                        soffset += 4;
                    } else if (soffset + 7 <= optlen) {
                        int addr = ((out[n + soffset - 1] & 0xff) << 24) | ((out[n + soffset] & 0xff) << 16)
                                | ((out[n + soffset + 1] & 0xff) << 8) | (out[n + soffset + 2] & 0xff);
                        if (!isLocal.test(addr)) {
                            dflags |= TS_NEEDTIME;
                            soffset += 8;
                        }
                    }
                }
                out[n + 2] = (byte) soffset;
            }
            tsOff = 20 + n;
            n += optlen;
        }
        while ((n & 3) != 0) {
            out[n++] = IPOPT_END;
        }
        return n == 0 ? 0 : n | (rrOff << 8) | (tsOff << 16) | (dflags << 24);
    }

    /** ip_options_build: the replier's address (and time) go into the echoed options at {@code ipOff}. */
    public static void build(ByteBuf b, int ipOff, int echoed, int src, long msSinceMidnight) {
        int rrOff = (echoed >>> 8) & 0xff;
        int tsOff = (echoed >>> 16) & 0xff;
        int flags = (echoed >>> 24) & 0xff;
        if ((flags & RR_NEEDADDR) != 0) {
            int opt = ipOff + rrOff;
            b.setInt(opt + b.getUnsignedByte(opt + 2) - 5, src);
        }
        if ((flags & TS_NEEDADDR) != 0) {
            int opt = ipOff + tsOff;
            b.setInt(opt + b.getUnsignedByte(opt + 2) - 9, src);
        }
        if ((flags & TS_NEEDTIME) != 0) {
            int opt = ipOff + tsOff;
            b.setInt(opt + b.getUnsignedByte(opt + 2) - 5, (int) msSinceMidnight);
        }
    }

    /**
     * The length of the option at {@code i} (from the IP header start): 1 for NOOP, its length byte otherwise,
     * 0 at END or where the list is malformed, which ends every walk over an already validated list.
     */
    private static int optionLength(ByteBuf b, int ipOff, int i, int hl) {
        int type = b.getUnsignedByte(ipOff + i);
        if (type == IPOPT_END) {
            return 0;
        }
        if (type == IPOPT_NOOP) {
            return 1;
        }
        if (i + 1 >= hl) {
            return 0;
        }
        int len = b.getUnsignedByte(ipOff + i + 1);
        return len < 2 || i + len > hl ? 0 : len;
    }

    /** ip_options_fragment: options without the copied bit become NOOPs in fragments after the first. */
    public static void blankUncopied(ByteBuf b, int ipOff) {
        int hl = (b.getUnsignedByte(ipOff) & 0xf) * 4;
        for (int i = 20, len; i < hl && (len = optionLength(b, ipOff, i, hl)) > 0; i += len) {
            int type = b.getUnsignedByte(ipOff + i);
            if (type != IPOPT_NOOP && (type & COPIED) == 0) {
                for (int k = 0; k < len; k++) {
                    b.setByte(ipOff + i + k, IPOPT_NOOP);
                }
            }
        }
    }
}
