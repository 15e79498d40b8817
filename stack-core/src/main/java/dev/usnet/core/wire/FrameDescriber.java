package dev.usnet.core.wire;

import io.netty.buffer.ByteBuf;

/** One-line, tcpdump-like descriptions of Ethernet frames for diffs, logs and the CLI. */
public final class FrameDescriber {
    private FrameDescriber() {}

    public static String describe(ByteBuf b, int off, int len) {
        StringBuilder sb = new StringBuilder();
        if (len < EthernetFrame.HEADER_LEN) {
            return "runt frame, " + len + " bytes";
        }
        sb.append(MacAddr.format(MacAddr.get(b, off + 6))).append(" > ").append(MacAddr.format(MacAddr.get(b, off)));
        int type = b.getUnsignedShort(off + 12);
        int p = off + 14;
        if ((type == EthernetFrame.ETH_P_8021Q || type == EthernetFrame.ETH_P_8021AD) && len >= 18) {
            sb.append(", vlan ").append(b.getUnsignedShort(p) & 0xfff);
            type = b.getUnsignedShort(p + 2);
            p += 4;
        }
        int rest = off + len - p;
        if (type < EthernetFrame.ETH_P_802_3_MIN) {
            return sb.append(", 802.3 length ").append(type).append(", ").append(len).append(" bytes").toString();
        }
        switch (type) {
            case EthernetFrame.ETH_P_ARP -> {
                if (rest < ArpPacket.LEN) {
                    return sb.append(", ARP truncated").toString();
                }
                int op = b.getUnsignedShort(p + ArpPacket.OP);
                String spa = Ipv4Addr.format(b.getInt(p + ArpPacket.SPA));
                String tpa = Ipv4Addr.format(b.getInt(p + ArpPacket.TPA));
                if (op == ArpPacket.OP_REQUEST) {
                    sb.append(", ARP who-has ").append(tpa).append(" tell ").append(spa);
                } else {
                    sb.append(", ARP reply ").append(spa).append(" is-at ")
                            .append(MacAddr.format(MacAddr.get(b, p + ArpPacket.SHA)));
                }
            }
            case EthernetFrame.ETH_P_IP -> describeIp(sb, b, p, rest);
            case EthernetFrame.ETH_P_IPV6 -> describeIpv6(sb, b, p, rest);
            default -> sb.append(String.format(", ethertype 0x%04x", type));
        }
        return sb.append(", length ").append(len).toString();
    }

    private static void describeIp(StringBuilder sb, ByteBuf b, int p, int rest) {
        if (rest < 20) {
            sb.append(", IPv4 truncated");
            return;
        }
        Ipv4Packet ip = new Ipv4Packet().wrap(b, p);
        int hl = ip.headerLength();
        sb.append(", IPv4 ").append(Ipv4Addr.format(ip.src())).append(" > ").append(Ipv4Addr.format(ip.dst()));
        sb.append(" tos 0x").append(Integer.toHexString(ip.tos())).append(" ttl ").append(ip.ttl())
                .append(" id ").append(ip.id());
        if (ip.dontFragment()) {
            sb.append(" DF");
        }
        if (ip.isFragment()) {
            sb.append(" frag ").append(ip.fragOffset()).append(ip.moreFragments() ? "+" : "");
        }
        if (hl > 20) {
            sb.append(" options ").append(hl - 20).append("B");
        }
        sb.append(" len ").append(ip.totalLength());
        int l4 = p + hl;
        int l4len = Math.min(rest, ip.totalLength()) - hl;
        if (ip.fragOffset() != 0 || l4len < 4) {
            sb.append(" proto ").append(ip.protocol());
            return;
        }
        switch (ip.protocol()) {
            case Ipv4Packet.PROTO_ICMP -> sb.append(": ICMP type ").append(b.getUnsignedByte(l4))
                    .append(" code ").append(b.getUnsignedByte(l4 + 1));
            case Ipv4Packet.PROTO_UDP -> sb.append(": UDP ").append(b.getUnsignedShort(l4)).append(" > ")
                    .append(b.getUnsignedShort(l4 + 2));
            case Ipv4Packet.PROTO_TCP -> {
                sb.append(": TCP ").append(b.getUnsignedShort(l4)).append(" > ").append(b.getUnsignedShort(l4 + 2));
                if (l4len >= 14) {
                    int f = b.getUnsignedByte(l4 + 13);
                    sb.append(" [").append((f & 2) != 0 ? "S" : "").append((f & 1) != 0 ? "F" : "")
                            .append((f & 4) != 0 ? "R" : "").append((f & 8) != 0 ? "P" : "")
                            .append((f & 16) != 0 ? "." : "").append("]");
                }
            }
            default -> sb.append(" proto ").append(ip.protocol());
        }
    }

    private static void describeIpv6(StringBuilder sb, ByteBuf b, int p, int rest) {
        if (rest < Ipv6Packet.HEADER_LEN) {
            sb.append(", IPv6 truncated");
            return;
        }
        Ipv6Packet ip = new Ipv6Packet().wrap(b, p);
        sb.append(", IPv6 ").append(ip.src()).append(" > ").append(ip.dst());
        if (ip.trafficClass() != 0) {
            sb.append(" tc 0x").append(Integer.toHexString(ip.trafficClass()));
        }
        if (ip.flowLabel() != 0) {
            sb.append(" flow 0x").append(Integer.toHexString(ip.flowLabel()));
        }
        sb.append(" hlim ").append(ip.hopLimit()).append(" plen ").append(ip.payloadLength());
        int l4 = p + Ipv6Packet.HEADER_LEN;
        int l4len = Math.min(rest - Ipv6Packet.HEADER_LEN, ip.payloadLength());
        int nh = ip.nextHeader();
        if (l4len < 4) {
            sb.append(" next ").append(nh);
            return;
        }
        switch (nh) {
            case Ipv6Packet.NEXTHDR_ICMPV6 -> {
                int type = b.getUnsignedByte(l4);
                sb.append(": ICMPv6 type ").append(type).append(" code ").append(b.getUnsignedByte(l4 + 1));
                if ((type == Icmpv6Packet.NEIGHBOUR_SOLICITATION || type == Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT)
                        && l4len >= 24) {
                    sb.append(type == Icmpv6Packet.NEIGHBOUR_SOLICITATION ? " who-has " : " tgt is ")
                            .append(Ipv6Addr.read(b, l4 + 8));
                }
            }
            case Ipv6Packet.NEXTHDR_UDP -> sb.append(": UDP ").append(b.getUnsignedShort(l4)).append(" > ")
                    .append(b.getUnsignedShort(l4 + 2));
            case Ipv6Packet.NEXTHDR_TCP -> sb.append(": TCP ").append(b.getUnsignedShort(l4)).append(" > ")
                    .append(b.getUnsignedShort(l4 + 2));
            default -> sb.append(" next ").append(nh);
        }
    }
}
