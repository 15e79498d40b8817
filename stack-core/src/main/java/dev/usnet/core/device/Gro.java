package dev.usnet.core.device;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;

/**
 * Generic receive offload of one device ({@code ethtool -K dev gro on}): napi_gro_receive, inet_gro_receive and
 * tcp_gro_receive for TCP over IPv4 on untagged Ethernet. Consecutive in-order segments of one flow that arrive in
 * one receive backlog run are merged into one GSO packet (gso_size = the first segment's payload, gso_segs =
 * segments) of at most {@link #GRO_MAX_SIZE} bytes of IP datagram before the bridge or the stack sees them; what is
 * held is delivered when a segment does not continue it, and at the end of the run ({@link #flush}, napi_gro_flush).
 *
 * <p>The rules, as Linux's (docs/data-plane.md, "GRO"): a flow is the same Ethernet header, IPv4 addresses and
 * TCP ports. Not GRO'd at all (delivered at once, the flow held stays): non-IPv4, IP options (ihl != 5), a bad
 * IP header checksum, non-TCP, a bad TCP checksum. A segment of a held flow is not merged, and the held packet is
 * delivered first, when: the IP header says fragment (MF or an offset) or its length is not the frame's, TTL,
 * TOS or DF differ, the IP ID does not follow (incrementing; with DF also a fixed ID), it carries CWR, the TCP flag
 * word other than FIN and PSH differs (that word also holds the data offset and the window), the ACK differs,
 * any option word differs (timestamps included: TSval and TSecr must be equal, as tcp_gro_receive compares the
 * options word by word), it is longer than gso_size or carries no payload, its sequence number is not where the
 * held one ends, or the merged datagram would reach 64 KiB. Such a segment is then held itself unless it is
 * shorter than a byte of payload or carries URG, PSH, RST, SYN or FIN (then it is delivered right away). A merged
 * segment shorter than gso_size, or carrying PSH or FIN (which the merged header takes on), delivers the flow.
 * At most {@link #MAX_GRO_SKBS} flows are held; a new one delivers the oldest.
 *
 * <p>TCP over IPv6 (ipv6_gro_receive, tcp6_gro_receive) is merged by the same TCP rules. Its flow is the same
 * Ethernet header, IPv6 addresses, flow label and ports; a segment is not merged when the traffic class or hop
 * limit differ or its payload length is not the frame's; there is no IP ID. Only a TCP header right behind the
 * fixed 40-byte header is GRO'd: a packet with extension headers is delivered at once (<b>differs:</b> Linux
 * walks some of them). The merged packet leaves as tcp6_gro_complete leaves it: payload length rewritten, the TCP
 * checksum field holding the IPv6 pseudo-header sum, CHECKSUM_PARTIAL, gso_type TCPV6.
 *
 * <p>Merging copies: the first merge copies the held frame into a pooled 64 KiB buffer (unless its own has room
 * and is not shared), each later one appends the segment's payload; a segment merged is released at once.
 * <b>Differs:</b> Linux chains the segments' pages as frags (no copy); the copy here costs about the bytes merged
 * (usnet.cpu.copy_ps_per_byte would price it; the CPU model charges GRO nothing beyond the frames' l2_rx_ns).
 * The merged packet leaves as Linux's tcp4_gro_complete leaves it: IP total length and header checksum rewritten,
 * the TCP checksum field holding the pseudo-header sum with CHECKSUM_PARTIAL, so a non-GSO egress segments it
 * (skb_gso_segment) with full checksums and local TCP trusts it.
 *
 * <p>Runs on the namespace thread only. Allocates nothing per packet: the held packets sit in a fixed array.
 */
public final class Gro {
    /** MAX_GRO_SKBS: flows held at once per NAPI context. */
    public static final int MAX_GRO_SKBS = 8;
    /** GRO_MAX_SIZE / gro_max_size: the merged IP datagram stays below 64 KiB. */
    public static final int GRO_MAX_SIZE = 65_536;

    private static final int ETH = EthernetFrame.HEADER_LEN;
    private static final int ETH_P_IPV6 = 0x86dd;
    private static final int V6 = Ipv6Packet.HEADER_LEN;
    /** The version and flow label bits of the IPv6 header's first word: a different value is another flow. */
    private static final int V6_FLOW_BITS = 0xF00F_FFFF;
    /** The traffic class bits: a different value is the same flow, but not merged. */
    private static final int V6_TCLASS_BITS = 0x0FF0_0000;
    private static final int FLUSH_FLAGS = TcpSegment.URG | TcpSegment.PSH | TcpSegment.RST | TcpSegment.SYN
            | TcpSegment.FIN;
    private static final int ID_INCREMENTING = 0;
    private static final int ID_FIXED = 1;
    private static final int ID_UNDECIDED = 2;

    private final Device dev;
    // Held flows, oldest first, and per flow: segments in it, payload bytes, gso_size, the IP ID mode.
    private final Packet[] held = new Packet[MAX_GRO_SKBS];
    private final int[] count = new int[MAX_GRO_SKBS];
    private final int[] mss = new int[MAX_GRO_SKBS];
    private final int[] idMode = new int[MAX_GRO_SKBS];
    // NAPI_GRO_CB(skb)->age: the jiffy each held flow was first held in.
    private final long[] age = new long[MAX_GRO_SKBS];
    // Whether each held flow is TCP over IPv6.
    private final boolean[] ipv6 = new boolean[MAX_GRO_SKBS];
    private int n;
    // The next device of the namespace with held packets (the run's list of what to flush), or null.
    private Gro nextPending;
    private boolean pending;

    private long groPackets;
    private long groSegments;

    Gro(Device dev) {
        this.dev = dev;
    }

    /** Merged packets GRO delivered (two or more segments each), like a driver's ethtool -S rx_gro_packets. */
    public long groPackets() {
        return groPackets;
    }

    /** Wire segments those merged packets carried; {@code groSegments - groPackets} deliveries were saved. */
    public long groSegments() {
        return groSegments;
    }

    /** Links this device into its namespace's list of GRO to flush at the end of the run. */
    public void setNextPending(Gro next) {
        this.nextPending = next;
    }

    /** Flows held now (0 after every backlog run). */
    public int heldFlows() {
        return n;
    }

    /** The next device with held packets after this one on the namespace's run list. */
    public Gro nextPending() {
        return nextPending;
    }

    /**
     * napi_gro_receive: {@code p}, received and counted by the device, is merged into a held flow, held, or
     * delivered (with whatever it flushes delivered before it).
     */
    void receive(Packet p) {
        ByteBuf b = p.buf();
        int s = p.start();
        int len = p.length();
        if (len >= ETH && b.getUnsignedShort(s + 12) == ETH_P_IPV6) {
            receive6(p);
            return;
        }
        if (len < ETH + Ipv4Packet.MIN_HEADER_LEN + TcpSegment.MIN_HEADER_LEN
                || b.getUnsignedShort(s + 12) != EthernetFrame.ETH_P_IP
                || b.getUnsignedByte(s + ETH) != 0x45
                || b.getUnsignedByte(s + ETH + Ipv4Packet.PROTOCOL) != Ipv4Packet.PROTO_TCP
                || !Checksum.verify(b, s + ETH, Ipv4Packet.MIN_HEADER_LEN)) {
            dev.deliver(p);
            return;
        }
        int ip = s + ETH;
        int tot = b.getUnsignedShort(ip + Ipv4Packet.TOTAL_LEN);
        int tcp = ip + Ipv4Packet.MIN_HEADER_LEN;
        int thlen = (b.getUnsignedByte(tcp + TcpSegment.DATA_OFF) >>> 4) * 4;
        if (tot > len - ETH || thlen < TcpSegment.MIN_HEADER_LEN || Ipv4Packet.MIN_HEADER_LEN + thlen > tot
                || !tcpChecksumOk(p, b, ip, tcp, tot)) {
            dev.deliver(p);
            return;
        }
        int payload = tot - Ipv4Packet.MIN_HEADER_LEN - thlen;
        int flags = b.getUnsignedByte(tcp + TcpSegment.FLAGS);
        int frag = b.getUnsignedShort(ip + Ipv4Packet.FRAG);
        // inet_gro_receive's own flush: a fragment, or a length that is not the frame's (padding).
        boolean ipFlush = (frag & ~Ipv4Packet.FLAG_DF) != 0 || tot != len - ETH;
        int i = find(b, s, ip, tcp);
        if (i >= 0) {
            Packet q = held[i];
            ByteBuf qb = q.buf();
            int qs = q.start();
            int qip = qs + ETH;
            int qtcp = qip + Ipv4Packet.MIN_HEADER_LEN;
            int qtot = qb.getUnsignedShort(qip + Ipv4Packet.TOTAL_LEN);
            int qpayload = qtot - Ipv4Packet.MIN_HEADER_LEN - thlen;
            boolean dontMerge = ipFlush
                    || b.getByte(ip + Ipv4Packet.TTL) != qb.getByte(qip + Ipv4Packet.TTL)
                    || b.getByte(ip + Ipv4Packet.TOS) != qb.getByte(qip + Ipv4Packet.TOS)
                    || ((frag ^ qb.getUnsignedShort(qip + Ipv4Packet.FRAG)) & Ipv4Packet.FLAG_DF) != 0
                    || !idFollows(i, b.getUnsignedShort(ip + Ipv4Packet.ID), qb.getUnsignedShort(qip + Ipv4Packet.ID),
                            (frag & Ipv4Packet.FLAG_DF) != 0)
                    || !tcpContinues(i, b, tcp, qb, qtcp, thlen, flags, payload, qpayload)
                    || qtot + payload >= GRO_MAX_SIZE;
            mergeOrFlush(i, q, p, dontMerge, ipFlush, tcp + thlen, payload, flags);
            return;
        }
        if (ipFlush || payload == 0 || (flags & FLUSH_FLAGS) != 0) {
            dev.deliver(p);
            return;
        }
        hold(p, payload, false);
    }

    /** ipv6_gro_receive → tcp6_gro_receive for an Ethernet frame carrying IPv6; see the class comment. */
    private void receive6(Packet p) {
        ByteBuf b = p.buf();
        int s = p.start();
        int len = p.length();
        int ip = s + ETH;
        if (len < ETH + V6 + TcpSegment.MIN_HEADER_LEN || (b.getUnsignedByte(ip) >>> 4) != 6
                || b.getUnsignedByte(ip + Ipv6Packet.NEXT_HEADER) != Ipv6Packet.NEXTHDR_TCP) {
            dev.deliver(p);
            return;
        }
        int plen = b.getUnsignedShort(ip + Ipv6Packet.PAYLOAD_LEN);
        int tcp = ip + V6;
        int thlen = (b.getUnsignedByte(tcp + TcpSegment.DATA_OFF) >>> 4) * 4;
        if (V6 + plen > len - ETH || thlen < TcpSegment.MIN_HEADER_LEN || thlen > plen
                || !tcp6ChecksumOk(p, b, ip, tcp, plen)) {
            dev.deliver(p);
            return;
        }
        int payload = plen - thlen;
        int flags = b.getUnsignedByte(tcp + TcpSegment.FLAGS);
        // A payload length that is not the frame's (padding) flushes, as inet_gro_receive's length check.
        boolean ipFlush = V6 + plen != len - ETH;
        int i = find6(b, s, ip, tcp);
        if (i >= 0) {
            Packet q = held[i];
            ByteBuf qb = q.buf();
            int qip = q.start() + ETH;
            int qtcp = qip + V6;
            int qplen = qb.getUnsignedShort(qip + Ipv6Packet.PAYLOAD_LEN);
            boolean dontMerge = ipFlush
                    || ((b.getInt(ip) ^ qb.getInt(qip)) & V6_TCLASS_BITS) != 0
                    || b.getByte(ip + Ipv6Packet.HOP_LIMIT) != qb.getByte(qip + Ipv6Packet.HOP_LIMIT)
                    || !tcpContinues(i, b, tcp, qb, qtcp, thlen, flags, payload, qplen - thlen)
                    || V6 + qplen + payload >= GRO_MAX_SIZE;
            mergeOrFlush(i, q, p, dontMerge, ipFlush, tcp + thlen, payload, flags);
            return;
        }
        if (ipFlush || payload == 0 || (flags & FLUSH_FLAGS) != 0) {
            dev.deliver(p);
            return;
        }
        hold(p, payload, true);
    }

    /**
     * tcp_gro_receive's checks, the same over both IP versions: no CWR, the flag word but FIN and PSH (data
     * offset and window too) and the ACK equal, the options equal word by word, a payload of 1 to gso_size bytes
     * starting where the held one ends.
     */
    private boolean tcpContinues(int i, ByteBuf b, int tcp, ByteBuf qb, int qtcp, int thlen, int flags, int payload,
                                 int qpayload) {
        return (flags & TcpSegment.CWR) == 0
                && ((b.getInt(tcp + TcpSegment.DATA_OFF) ^ qb.getInt(qtcp + TcpSegment.DATA_OFF))
                        & ~((TcpSegment.FIN | TcpSegment.PSH) << 16)) == 0
                && b.getInt(tcp + TcpSegment.ACK) == qb.getInt(qtcp + TcpSegment.ACK)
                && sameOptions(b, tcp, qb, qtcp, thlen)
                && payload - 1 < mss[i] && payload != 0
                && b.getInt(tcp + TcpSegment.SEQ) == qb.getInt(qtcp + TcpSegment.SEQ) + qpayload;
    }

    /**
     * A segment of held flow {@code i}: merged (then the flow is delivered if the segment is short or carries a
     * flush flag), or, with {@code dontMerge}, the flow delivered and the segment held or delivered itself.
     */
    private void mergeOrFlush(int i, Packet q, Packet p, boolean dontMerge, boolean ipFlush, int payloadOff,
                              int payload, int flags) {
        if (dontMerge) {
            boolean v6 = ipv6[i];
            deliverFlow(i);
            if (ipFlush || payload == 0 || (flags & FLUSH_FLAGS) != 0) {
                dev.deliver(p);
            } else {
                hold(p, payload, v6);
            }
            return;
        }
        merge(i, q, p, payloadOff, payload, flags);
        if (payload < mss[i] || (flags & FLUSH_FLAGS) != 0) {
            deliverFlow(i);
        }
    }

    /**
     * napi_gro_flush: the held flows are delivered, oldest first; with {@code onlyBefore} >= 0 only those first
     * held in an earlier jiffy than it (flush_old). Returns whether flows are still held.
     */
    public boolean flush(long onlyBefore) {
        int i = 0;
        while (i < n) {
            if (onlyBefore >= 0 && age[i] >= onlyBefore) {
                i++;
            } else {
                deliverFlow(i);
            }
        }
        if (n == 0) {
            pending = false;
            nextPending = null;
            return false;
        }
        return true;
    }

    /** The held flow {@code p} belongs to (same Ethernet header, addresses, ports), or -1. */
    private int find(ByteBuf b, int s, int ip, int tcp) {
        for (int i = 0; i < n; i++) {
            if (ipv6[i]) {
                continue;
            }
            ByteBuf qb = held[i].buf();
            int qs = held[i].start();
            int qip = qs + ETH;
            if (qb.getLong(qs) == b.getLong(s) && qb.getInt(qs + 8) == b.getInt(s + 8)
                    && qb.getShort(qs + 12) == b.getShort(s + 12)
                    && qb.getInt(qip + Ipv4Packet.SRC) == b.getInt(ip + Ipv4Packet.SRC)
                    && qb.getInt(qip + Ipv4Packet.DST) == b.getInt(ip + Ipv4Packet.DST)
                    && qb.getInt(qip + Ipv4Packet.MIN_HEADER_LEN) == b.getInt(tcp)) {
                return i;
            }
        }
        return -1;
    }

    /** The held IPv6 flow {@code p} belongs to (same Ethernet header, version and flow label, addresses, ports), or -1. */
    private int find6(ByteBuf b, int s, int ip, int tcp) {
        for (int i = 0; i < n; i++) {
            if (!ipv6[i]) {
                continue;
            }
            ByteBuf qb = held[i].buf();
            int qs = held[i].start();
            int qip = qs + ETH;
            if (qb.getLong(qs) == b.getLong(s) && qb.getInt(qs + 8) == b.getInt(s + 8)
                    && qb.getShort(qs + 12) == b.getShort(s + 12)
                    && ((qb.getInt(qip) ^ b.getInt(ip)) & V6_FLOW_BITS) == 0
                    && qb.getLong(qip + Ipv6Packet.SRC) == b.getLong(ip + Ipv6Packet.SRC)
                    && qb.getLong(qip + Ipv6Packet.SRC + 8) == b.getLong(ip + Ipv6Packet.SRC + 8)
                    && qb.getLong(qip + Ipv6Packet.DST) == b.getLong(ip + Ipv6Packet.DST)
                    && qb.getLong(qip + Ipv6Packet.DST + 8) == b.getLong(ip + Ipv6Packet.DST + 8)
                    && qb.getInt(qip + V6) == b.getInt(tcp)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The IP ID check of inet_gro_receive: without DF the ID must be the held one's plus the segments held; with
     * DF the flow may instead keep one fixed ID, decided by the second segment.
     */
    private boolean idFollows(int i, int id, int firstId, boolean df) {
        boolean incrementing = id == ((firstId + count[i]) & 0xffff);
        if (!df) {
            return incrementing;
        }
        return switch (idMode[i]) {
            case ID_INCREMENTING -> incrementing;
            case ID_FIXED -> id == firstId;
            default -> incrementing || id == firstId;
        };
    }

    private static boolean sameOptions(ByteBuf b, int tcp, ByteBuf qb, int qtcp, int thlen) {
        for (int o = TcpSegment.MIN_HEADER_LEN; o < thlen; o += 4) {
            if (b.getInt(tcp + o) != qb.getInt(qtcp + o)) {
                return false;
            }
        }
        return true;
    }

    /**
     * tcp4_gro_receive's skb_gro_checksum_validate: a checksum the sender left partial or that was verified is
     * trusted; otherwise it is computed here (Linux then marks it CHECKSUM_UNNECESSARY, so TCP does not again).
     */
    private boolean tcpChecksumOk(Packet p, ByteBuf b, int ip, int tcp, int tot) {
        if (p.csumState() != ChecksumState.NONE) {
            return true;
        }
        int l4len = tot - Ipv4Packet.MIN_HEADER_LEN;
        long ph = Checksum.pseudoHeader(b.getInt(ip + Ipv4Packet.SRC), b.getInt(ip + Ipv4Packet.DST),
                Ipv4Packet.PROTO_TCP, l4len);
        if (Checksum.finish(Checksum.add(b, tcp, l4len, ph)) != 0) {
            return false;
        }
        p.setChecksum(ChecksumState.UNNECESSARY, 0, 0);
        return true;
    }

    /** tcp6_gro_receive's checksum validation: as {@link #tcpChecksumOk}, over the IPv6 pseudo-header. */
    private boolean tcp6ChecksumOk(Packet p, ByteBuf b, int ip, int tcp, int plen) {
        if (p.csumState() != ChecksumState.NONE) {
            return true;
        }
        long ph = Ipv6Packet.pseudoHeaderSum(b, ip, plen, Ipv6Packet.NEXTHDR_TCP);
        if (Checksum.finish(Checksum.add(b, tcp, plen, ph)) != 0) {
            return false;
        }
        p.setChecksum(ChecksumState.UNNECESSARY, 0, 0);
        return true;
    }

    private void hold(Packet p, int payload, boolean v6) {
        if (n == MAX_GRO_SKBS) {
            // gro_flush_oldest: the oldest flow makes room.
            deliverFlow(0);
        }
        held[n] = p;
        count[n] = 1;
        mss[n] = payload;
        idMode[n] = ID_UNDECIDED;
        ipv6[n] = v6;
        age[n] = dev.stack().jiffies();
        n++;
        if (!pending) {
            pending = true;
            dev.stack().groPending(this);
        }
    }

    /** skb_gro_receive: appends {@code p}'s payload to held flow {@code i} and frees {@code p}. */
    private void merge(int i, Packet q, Packet p, int payloadOff, int payload, int flags) {
        ByteBuf b = p.buf();
        boolean v6 = ipv6[i];
        if (count[i] == 1) {
            // The second segment: room for the whole merged packet, and (IPv4) the IP ID mode the flow keeps.
            q.ensureTailroom(GRO_MAX_SIZE + ETH - q.length());
            if (!v6) {
                int firstId = q.buf().getUnsignedShort(q.start() + ETH + Ipv4Packet.ID);
                idMode[i] = b.getUnsignedShort(p.start() + ETH + Ipv4Packet.ID) == firstId ? ID_FIXED
                        : ID_INCREMENTING;
            }
        }
        ByteBuf qb = q.buf();
        int qip = q.start() + ETH;
        qb.writeBytes(b, payloadOff, payload);
        int lenField = v6 ? Ipv6Packet.PAYLOAD_LEN : Ipv4Packet.TOTAL_LEN;
        qb.setShort(qip + lenField, qb.getUnsignedShort(qip + lenField) + payload);
        int qflags = qip + (v6 ? V6 : Ipv4Packet.MIN_HEADER_LEN) + TcpSegment.FLAGS;
        qb.setByte(qflags, qb.getUnsignedByte(qflags) | (flags & (TcpSegment.FIN | TcpSegment.PSH)));
        count[i]++;
        p.release();
    }

    private void remove(int i) {
        n--;
        System.arraycopy(held, i + 1, held, i, n - i);
        System.arraycopy(count, i + 1, count, i, n - i);
        System.arraycopy(mss, i + 1, mss, i, n - i);
        System.arraycopy(idMode, i + 1, idMode, i, n - i);
        System.arraycopy(age, i + 1, age, i, n - i);
        System.arraycopy(ipv6, i + 1, ipv6, i, n - i);
        held[n] = null;
    }

    /** Frees what is held without delivering it: the namespace is closing (between two backlog runs). */
    public void purge() {
        while (n > 0) {
            Packet q = held[0];
            remove(0);
            q.release();
        }
        pending = false;
        nextPending = null;
    }

    /** Takes held flow {@code i} out of the array and delivers it. */
    private void deliverFlow(int i) {
        Packet q = held[i];
        int segs = count[i];
        int size = mss[i];
        boolean v6 = ipv6[i];
        remove(i);
        finish(q, segs, size, v6);
    }

    /**
     * napi_gro_complete → inet_gro_complete / ipv6_gro_complete → tcp4/tcp6_gro_complete, then netif_receive_skb:
     * a merged flow leaves as a GSO packet whose TCP checksum field holds its pseudo-header sum (CHECKSUM_PARTIAL);
     * over IPv4 the grown header's checksum is refreshed too (IPv6 has none).
     */
    private void finish(Packet q, int segs, int gsoSize, boolean v6) {
        if (segs > 1) {
            ByteBuf qb = q.buf();
            int ip = q.start() + ETH;
            int tcp;
            long ph;
            if (v6) {
                tcp = ip + V6;
                int plen = qb.getUnsignedShort(ip + Ipv6Packet.PAYLOAD_LEN);
                ph = Ipv6Packet.pseudoHeaderSum(qb, ip, plen, Ipv6Packet.NEXTHDR_TCP);
            } else {
                tcp = ip + Ipv4Packet.MIN_HEADER_LEN;
                int tot = qb.getUnsignedShort(ip + Ipv4Packet.TOTAL_LEN);
                qb.setShort(ip + Ipv4Packet.CHECKSUM, 0);
                qb.setShort(ip + Ipv4Packet.CHECKSUM, Checksum.compute(qb, ip, Ipv4Packet.MIN_HEADER_LEN));
                ph = Checksum.pseudoHeader(qb.getInt(ip + Ipv4Packet.SRC), qb.getInt(ip + Ipv4Packet.DST),
                        Ipv4Packet.PROTO_TCP, tot - Ipv4Packet.MIN_HEADER_LEN);
            }
            qb.setShort(tcp + TcpSegment.CHECKSUM, ~Checksum.finish(ph) & 0xffff);
            q.setChecksum(ChecksumState.PARTIAL, tcp, TcpSegment.CHECKSUM);
            q.setGso(v6 ? Packet.GSO_TCPV6 : Packet.GSO_TCPV4, gsoSize);
            q.setGsoSegs(segs);
            groPackets++;
            groSegments += segs;
        }
        if (dev.stack() == null) {
            // The device left its namespace while the flow was held across runs.
            q.release();
            return;
        }
        dev.deliver(q);
    }
}
