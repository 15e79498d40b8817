package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import io.netty.buffer.ByteBuf;

/**
 * The options of hop-by-hop and destination options headers (ip6_parse_tlv): Pad1 and PadN (at most 7 bytes of
 * padding in a row, PadN all zeros), the router alert kept, at most 8 other options, and an unknown option handled
 * as the top two bits of its type say (RFC 8200 §4.2): skip, discard, discard with a parameter problem, or discard
 * with a parameter problem unless the destination is multicast.
 */
public final class Ip6ExtHeaders {
    private static final int TLV_PAD1 = 0;
    private static final int TLV_PADN = 1;
    private static final int TLV_ROUTER_ALERT = 5;
    private static final int MAX_PAD = 7;
    /** net.ipv6.max_hbh_opts_number and max_dst_opts_number: 8 by default. */
    private static final int MAX_OPTS = 8;

    private final Netns ns;
    private final Ipv6 inet6;

    Ip6ExtHeaders(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /**
     * Walks the options of the header at {@code off}. Returns false when the packet was dropped (and answered where
     * RFC 8200 says so); the caller counts the header error.
     */
    public boolean parseTlv(Packet p, int off, boolean hopByHop) {
        ByteBuf b = p.buf();
        int end = p.start() + p.length();
        int net = p.network();
        if (off + 2 > end) {
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return false;
        }
        int len = (b.getUnsignedByte(off + 1) + 1) << 3;
        if (off + len > end) {
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return false;
        }
        int o = off + 2;
        len -= 2;
        int pad = 0;
        int count = 0;
        while (len > 0) {
            int type = b.getUnsignedByte(o);
            if (type == TLV_PAD1) {
                if (++pad > MAX_PAD) {
                    break;
                }
                o++;
                len--;
                continue;
            }
            if (len < 2) {
                break;
            }
            int optLen = b.getUnsignedByte(o + 1) + 2;
            if (optLen > len) {
                break;
            }
            if (type == TLV_PADN) {
                pad += optLen;
                if (pad > MAX_PAD || !zeros(b, o + 2, optLen - 2)) {
                    break;
                }
            } else {
                if (++count > MAX_OPTS) {
                    break;
                }
                if (hopByHop && type == TLV_ROUTER_ALERT) {
                    if (optLen != 4) {
                        break;
                    }
                } else if (!unknownOption(p, type, o - net)) {
                    return false;
                }
                pad = 0;
            }
            o += optLen;
            len -= optLen;
        }
        if (len == 0) {
            return true;
        }
        ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
        return false;
    }

    /** ip6_tlvopt_unknown: true to skip the option; otherwise the packet is dropped here. */
    private boolean unknownOption(Packet p, int type, int pointer) {
        switch (type >>> 6) {
            case 0 -> {
                return true;
            }
            case 3 -> {
                if (!Ipv6Addr.isMulticast(p.buf().getLong(p.network() + 24))) {
                    inet6.icmp().paramProb(p, Icmpv6Packet.CODE_UNK_OPTION, pointer);
                }
            }
            case 2 -> inet6.icmp().paramProb(p, Icmpv6Packet.CODE_UNK_OPTION, pointer);
            default -> { }
        }
        ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
        return false;
    }

    private static boolean zeros(ByteBuf b, int off, int len) {
        for (int i = 0; i < len; i++) {
            if (b.getByte(off + i) != 0) {
                return false;
            }
        }
        return true;
    }
}
