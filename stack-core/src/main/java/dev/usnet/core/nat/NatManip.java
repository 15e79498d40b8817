package dev.usnet.core.nat;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.buf.CowStats;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;

/**
 * The packet half of NAT (nf_nat_ipv4_manip_pkt with tcp_, udp_ and icmp_manip_pkt): rewrites the source or the
 * destination of an IPv4 packet in place, its address and, for TCP and UDP, its port, for an ICMP query its
 * identifier. Every checksum the change touches is updated incrementally (RFC 1624), never summed anew, so the
 * result is bit for bit what Linux writes:
 * <ul>
 * <li>the IP header checksum, for the address;</li>
 * <li>the TCP checksum, for the address (pseudo header) and the port; the UDP checksum the same way, except that a
 * datagram sent without one (checksum 0) keeps 0, and an update that comes out 0 is written as 0xffff (RFC 768:
 * 0 means "none");</li>
 * <li>for a packet whose transport checksum is left to the device ({@link ChecksumState#PARTIAL}: local output,
 * GSO), the field holds the uncomplemented pseudo-header sum, so only the address part is added to it; the port
 * lies in the data the device sums later and needs nothing;</li>
 * <li>the ICMP checksum for an echo, timestamp, information or address-mask query's identifier (ICMP has no
 * pseudo header). An ICMP error's rest-of-header is not an identifier and is left alone.</li>
 * </ul>
 * A protocol without ports has only its address rewritten. The headers are made private first
 * ({@link Packet#makeWritable}, the head copy skb_ensure_writable makes of a cloned packet); nothing is allocated
 * for an unshared packet.
 *
 * <p>Linux NATs only reassembled datagrams (conntrack defragments at priority -400). A fragment that does reach
 * this class is treated as Linux's IPv6 NAT treats one: a fragment other than the first carries no transport
 * header, so only its address is rewritten; the first fragment is rewritten whole (its transport checksum covers
 * the whole datagram, and the update is the same difference).
 */
public final class NatManip {
    /** The TCP bytes conntrack guarantees (the ports and the sequence number), all an ICMP error must quote. */
    private static final int TCP_GUARANTEED = 8;

    private final CowStats cow;

    /** {@code cow}: the namespace's copy-on-write counters ({@code Netns.cow()}), or null not to count. */
    public NatManip(CowStats cow) {
        this.cow = cow;
    }

    /**
     * Rewrites the packet whose IPv4 header starts at {@link Packet#network()}: the source when {@code source}
     * (postrouting, input) else the destination (prerouting, output), to {@code addr} and {@code port}. For ICMP,
     * {@code port} is the query identifier (conntrack keeps it as the tuple's source id in both directions, so a
     * destination manip passes that too). Returns false when the transport header is cut short: the caller drops
     * the packet ({@code NAT_REWRITE_FAILED}).
     */
    public boolean manip(Packet p, boolean source, int addr, int port) {
        ByteBuf b = p.buf();
        int ip = p.network();
        int end = datagramEnd(b, ip);
        int l4 = ip + ((b.getUnsignedByte(ip + Ipv4Packet.VER_IHL) & 0x0f) << 2);
        if (l4 > end) {
            return false;
        }
        int need = l4 + transportBytesToEdit(b.getUnsignedByte(ip + Ipv4Packet.PROTOCOL), l4, end);
        makeWritable(p, Math.min(need, end));
        return manipAt(p, 0, p.network() + (end - ip), source, addr, port);
    }

    /**
     * nf_nat_packet: the rewrite a packet of a bound connection gets at a NAT hook. {@code source} is the hook's
     * kind (postrouting, input: source; prerouting, output: destination), {@code status} the connection's
     * {@link IpConntrackStatus} bits, {@code reply} whether the packet travels the reply direction, and the
     * {@code other*} values the connection's tuple of the other direction (ct->tuplehash[!dir]; for ICMP its id
     * as {@code otherSrcPort}). The packet is made to look like the inverse of that tuple, on the hook's side
     * only, and only when the connection has that kind of NAT for this direction (SRC_NAT or DST_NAT, swapped in
     * the reply direction). Returns false when the packet must be dropped ({@code NAT_REWRITE_FAILED}).
     */
    public boolean natPacket(Packet p, boolean source, int status, boolean reply,
                             int otherSrc, int otherSrcPort, int otherDst, int otherDstPort) {
        int statusBit = source ? IpConntrackStatus.SRC_NAT : IpConntrackStatus.DST_NAT;
        if (reply) {
            statusBit ^= IpConntrackStatus.SRC_NAT | IpConntrackStatus.DST_NAT;
        }
        if ((status & statusBit) == 0) {
            return true;
        }
        boolean icmp = p.buf().getUnsignedByte(p.network() + Ipv4Packet.PROTOCOL) == Ipv4Packet.PROTO_ICMP;
        // The inverse of the other direction's tuple: its destination is our source, its source our destination;
        // an ICMP id stays the tuple's source id when inverted.
        if (source) {
            return manip(p, true, otherDst, icmp ? otherSrcPort : otherDstPort);
        }
        return manip(p, false, otherSrc, otherSrcPort);
    }

    /**
     * The rewrite proper, of the IPv4 header {@code ipDelta} bytes after {@link Packet#network()} (0 for the
     * packet's own header, more for the header an ICMP error quotes) and its transport header, which ends at
     * {@code end} at the latest. The bytes must already be writable.
     */
    boolean manipAt(Packet p, int ipDelta, int end, boolean source, int addr, int port) {
        ByteBuf b = p.buf();
        int ip = p.network() + ipDelta;
        int l4 = ip + ((b.getUnsignedByte(ip + Ipv4Packet.VER_IHL) & 0x0f) << 2);
        int addrOff = ip + (source ? Ipv4Packet.SRC : Ipv4Packet.DST);
        int oldAddr = b.getInt(addrOff);
        boolean partial = p.csumState() == ChecksumState.PARTIAL;
        boolean firstFragment = (b.getUnsignedShort(ip + Ipv4Packet.FRAG) & Ipv4Packet.OFFSET_MASK) == 0;
        if (firstFragment) {
            int proto = b.getUnsignedByte(ip + Ipv4Packet.PROTOCOL);
            switch (proto) {
                case Ipv4Packet.PROTO_TCP -> {
                    if (end - l4 < TCP_GUARANTEED) {
                        return false;
                    }
                    int portOff = l4 + (source ? TcpSegment.SRC_PORT : TcpSegment.DST_PORT);
                    int oldPort = b.getUnsignedShort(portOff);
                    b.setShort(portOff, port);
                    // Inside an ICMP error the quote may stop before the checksum: then only the ports change
                    // (the quoted segment's checksum is not checked by anyone).
                    if (end - l4 >= TcpSegment.MIN_HEADER_LEN) {
                        int check = l4 + TcpSegment.CHECKSUM;
                        replaceAddress(b, check, oldAddr, addr, partial);
                        replacePort(b, check, oldPort, port, partial);
                    }
                }
                case Ipv4Packet.PROTO_UDP -> {
                    if (end - l4 < UdpDatagram.HEADER_LEN) {
                        return false;
                    }
                    int portOff = l4 + (source ? UdpDatagram.SRC_PORT : UdpDatagram.DST_PORT);
                    int oldPort = b.getUnsignedShort(portOff);
                    int check = l4 + UdpDatagram.CHECKSUM;
                    if (b.getUnsignedShort(check) != 0 || partial) {
                        replaceAddress(b, check, oldAddr, addr, partial);
                        replacePort(b, check, oldPort, port, partial);
                        if (b.getUnsignedShort(check) == 0) {
                            b.setShort(check, 0xffff);
                        }
                    }
                    b.setShort(portOff, port);
                }
                case Ipv4Packet.PROTO_ICMP -> {
                    if (end - l4 < IcmpPacket.HEADER_LEN) {
                        return false;
                    }
                    if (isQuery(b.getUnsignedByte(l4 + IcmpPacket.TYPE))) {
                        int idOff = l4 + IcmpPacket.REST;
                        int check = l4 + IcmpPacket.CHECKSUM;
                        b.setShort(check, Checksum.update16(b.getUnsignedShort(check), b.getUnsignedShort(idOff), port));
                        b.setShort(idOff, port);
                    }
                }
                default -> {
                    // No ports: the address alone, as Linux passes an unknown protocol unmodified.
                }
            }
        }
        int ipCheck = ip + Ipv4Packet.CHECKSUM;
        b.setShort(ipCheck, Checksum.update32(b.getUnsignedShort(ipCheck), oldAddr, addr));
        b.setInt(addrOff, addr);
        return true;
    }

    /** ICMP types whose rest-of-header starts with an identifier NAT maps (icmp_manip_pkt's list). */
    static boolean isQuery(int type) {
        return switch (type) {
            case IcmpPacket.ECHO, IcmpPacket.ECHO_REPLY, IcmpPacket.TIMESTAMP, IcmpPacket.TIMESTAMP_REPLY,
                    15, 16, 17, 18 -> true; // information request/reply, address mask request/reply
            default -> false;
        };
    }

    /** One past the datagram's last byte: its total length, or the frame's end when that is shorter. */
    static int datagramEnd(ByteBuf b, int ip) {
        return Math.min(ip + b.getUnsignedShort(ip + Ipv4Packet.TOTAL_LEN), b.writerIndex());
    }

    /** How many transport bytes a rewrite edits (at most): the checksum must be private too. */
    static int transportBytesToEdit(int proto, int l4, int end) {
        return switch (proto) {
            case Ipv4Packet.PROTO_TCP -> end - l4 >= TcpSegment.MIN_HEADER_LEN ? TcpSegment.MIN_HEADER_LEN : TCP_GUARANTEED;
            case Ipv4Packet.PROTO_UDP -> UdpDatagram.HEADER_LEN;
            case Ipv4Packet.PROTO_ICMP -> IcmpPacket.HEADER_LEN;
            default -> 0;
        };
    }

    /** skb_ensure_writable: the frame up to {@code upTo} (an absolute index) private to this packet. */
    void makeWritable(Packet p, int upTo) {
        p.makeWritable(upTo - p.start(), CowPolicy.HEAD_COPY, cow);
    }

    /**
     * inet_proto_csum_replace4 with the pseudo-header flag: a transport checksum after an address it covers
     * through the pseudo header changes. A complete checksum takes the RFC 1624 update; a partial one holds the
     * uncomplemented pseudo-header sum, which takes the difference added directly.
     */
    private static void replaceAddress(ByteBuf b, int check, int oldAddr, int newAddr, boolean partial) {
        int c = b.getUnsignedShort(check);
        if (partial) {
            long sum = c + (~oldAddr >>> 16 & 0xffff) + (~oldAddr & 0xffff)
                    + (newAddr >>> 16 & 0xffff) + (newAddr & 0xffff);
            b.setShort(check, ~Checksum.finish(sum) & 0xffff);
        } else {
            b.setShort(check, Checksum.update32(c, oldAddr, newAddr));
        }
    }

    /**
     * inet_proto_csum_replace2 without the pseudo-header flag: a port inside the summed data. A partial checksum
     * is completed over the data later, new port included, so it is left alone.
     */
    private static void replacePort(ByteBuf b, int check, int oldPort, int newPort, boolean partial) {
        if (!partial) {
            b.setShort(check, Checksum.update16(b.getUnsignedShort(check), oldPort, newPort));
        }
    }
}
