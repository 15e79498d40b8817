package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * IPv6 reassembly for local delivery (ipv6_frag_rcv, ip6_frag_queue, ip6_frag_reasm): an atomic fragment (offset
 * 0, no more) is taken as unfragmented (RFC 6946); a first fragment that does not hold the whole header chain gets
 * a parameter problem code 3 (RFC 7112); a non-last fragment whose data are not a multiple of 8, or one ending past
 * 65535, a parameter problem pointing at the field; a fragment overlapping another discards the whole datagram
 * (RFC 5722) while one inside data already held is ignored as a duplicate; {@code net.ipv6.ip6frag_time} after
 * its first fragment an incomplete datagram is dropped, with time exceeded (reassembly) when its first fragment
 * had arrived; above {@code net.ipv6.ip6frag_high_thresh} bytes held no fragment is taken.
 */
public final class Ip6Defrag {
    private static final int FRAG_HDR_LEN = 8;
    private static final int IPV6_MAXPLEN = 65535;
    /** Parameter problem: the first fragment lacks part of the header chain (RFC 7112). */
    private static final int CODE_HDR_INCOMPLETE = 3;
    /** Stand-ins for the kernel's per-queue and per-skb truesize, counted against ip6frag_high_thresh. */
    static final int QUEUE_TRUESIZE = 256;
    static final int FRAG_TRUESIZE_OVERHEAD = 256;

    private record Key(int id, long sh, long sl, long dh, long dl, int iif) {}

    /** One fragment held: its packet (from the fixed header), where its data start, and their range. */
    private record Frag(Packet p, int dataOff, int start, int end) {}

    private static final class Queue {
        final List<Frag> frags = new ArrayList<>();
        int len;
        boolean lastIn;
        boolean firstIn;
        int meat;
        long bytes;
        Frag first;
        // The first fragment's offset (from its fixed header) of the next-header field naming the fragment header.
        int nhoff;
        Timeout timer;
    }

    private final Netns ns;
    private final Ipv6 inet6;
    private final Ipv6Packet ip = new Ipv6Packet();
    private final Map<Key, Queue> queues = new HashMap<>();
    private long memory;
    private boolean atomic;
    private int nextHeaderOffset;

    public Ip6Defrag(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /** Whether the last {@link #rcv} returned its own packet as an atomic fragment. */
    boolean wasAtomic() {
        return atomic;
    }

    /** In the datagram the last {@link #rcv} completed: the absolute offset of the next-header field to resume at. */
    int nextHeaderOffset() {
        return nextHeaderOffset;
    }

    /** Memory held for reassembly as ip6frag_high_thresh counts it (/proc/net/sockstat6's FRAG6 memory). */
    public long memory() {
        return memory;
    }

    /** Datagrams waiting for fragments. */
    public int pending() {
        return queues.size();
    }

    /**
     * The fragment header of {@code p} is at {@code off}, named by the next-header field at {@code nhoff}. Returns
     * {@code p} itself for an atomic fragment, the whole datagram (network() its fixed header, transport() the
     * header after the removed fragment header) when this fragment completed it, else null. Owns {@code p}.
     */
    public Packet rcv(Packet p, int off, int nhoff) {
        atomic = false;
        ByteBuf b = p.buf();
        int net = p.network();
        int end = p.start() + p.length();
        if (off + FRAG_HDR_LEN > end) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            inet6.icmp().paramProb(p, Icmpv6Packet.CODE_HDR_FIELD, off - net);
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return null;
        }
        int field = b.getUnsignedShort(off + 2);
        if ((field & 0xfff9) == 0) {
            ns.mib().inc(Mib.Ip6ReasmOKs);
            atomic = true;
            return p;
        }
        ns.mib().inc(Mib.Ip6ReasmReqds);
        ip.wrap(b, net);
        if (ip.payloadLength() == 0) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            inet6.icmp().paramProb(p, Icmpv6Packet.CODE_HDR_FIELD, off - net);
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return null;
        }
        int offset = field & 0xfff8;
        boolean more = (field & 1) != 0;
        if (offset == 0 && chainTruncated(b, off, end)) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            inet6.icmp().paramProb(p, CODE_HDR_INCOMPLETE, 0);
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return null;
        }
        int fragEnd = offset + (end - (off + FRAG_HDR_LEN));
        if (fragEnd > IPV6_MAXPLEN) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            inet6.icmp().paramProb(p, Icmpv6Packet.CODE_HDR_FIELD, off + 2 - net);
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return null;
        }
        if (more && (fragEnd & 7) != 0) {
            ns.mib().inc(Mib.Ip6InHdrErrors);
            inet6.icmp().paramProb(p, Icmpv6Packet.CODE_HDR_FIELD, Ipv6Packet.PAYLOAD_LEN);
            ns.drop(p, DropReason.IPV6_BAD_EXTHDR);
            return null;
        }
        long high = ns.knobs().get(Ipv6Sysctl.IP6FRAG_HIGH_THRESH);
        if (high == 0 || memory > high) {
            ns.mib().inc(Mib.Ip6ReasmFails);
            ns.drop(p, DropReason.IP6_REASM_LIMIT);
            return null;
        }
        long dh = ip.dstHi();
        int iif = Ipv6Addr.isMulticast(dh) || Ipv6Addr.isLinkLocalUnicast(dh) ? p.dev().ifindex() : 0;
        Key k = new Key(b.getInt(off + 4), ip.srcHi(), ip.srcLo(), dh, ip.dstLo(), iif);
        Queue q = queues.get(k);
        if (q == null) {
            q = new Queue();
            queues.put(k, q);
            memory += QUEUE_TRUESIZE;
            q.bytes += QUEUE_TRUESIZE;
            Queue qq = q;
            q.timer = ns.schedule(() -> expire(k, qq), ns.knobs().get(Ipv6Sysctl.IP6FRAG_TIME) * 1_000_000_000L);
        }
        if (!more) {
            if (fragEnd < q.len || (q.lastIn && fragEnd != q.len)) {
                return discard(k, q, p, DropReason.IP6_REASM_OVERLAP);
            }
            q.lastIn = true;
            q.len = fragEnd;
        } else if (fragEnd > q.len) {
            if (q.lastIn) {
                return discard(k, q, p, DropReason.IP6_REASM_OVERLAP);
            }
            q.len = fragEnd;
        }
        if (fragEnd == offset) {
            return discard(k, q, p, DropReason.IP6_REASM_OVERLAP);
        }
        // inet_frag_queue_insert: inside data already held is a duplicate, any other overlap poisons the datagram.
        for (Frag f : q.frags) {
            if (fragEnd <= f.start || offset >= f.end) {
                continue;
            }
            if (offset >= runStart(q, f) && fragEnd <= runEnd(q, f)) {
                ns.drop(p, DropReason.IP6_REASM_OVERLAP);
                return null;
            }
            return discard(k, q, p, DropReason.IP6_REASM_OVERLAP);
        }
        Frag f = new Frag(p, off + FRAG_HDR_LEN, offset, fragEnd);
        q.frags.add(f);
        q.meat += fragEnd - offset;
        long truesize = p.length() + FRAG_TRUESIZE_OVERHEAD;
        q.bytes += truesize;
        memory += truesize;
        if (offset == 0) {
            q.firstIn = true;
            q.first = f;
            q.nhoff = nhoff - net;
        }
        if (q.firstIn && q.lastIn && q.meat == q.len) {
            return reassemble(k, q);
        }
        return null;
    }

    /** The start of the run of contiguous fragments {@code f} belongs to. */
    private static int runStart(Queue q, Frag f) {
        int s = f.start;
        boolean moved = true;
        while (moved) {
            moved = false;
            for (Frag g : q.frags) {
                if (g.end == s) {
                    s = g.start;
                    moved = true;
                }
            }
        }
        return s;
    }

    private static int runEnd(Queue q, Frag f) {
        int e = f.end;
        boolean moved = true;
        while (moved) {
            moved = false;
            for (Frag g : q.frags) {
                if (g.start == e) {
                    e = g.end;
                    moved = true;
                }
            }
        }
        return e;
    }

    /**
     * ipv6frag_thdr_truncated: whether the first fragment ends before the upper-layer header its chain leads to
     * (its first 20 bytes for TCP, 8 for UDP and ICMPv6, one for anything else).
     */
    private static boolean chainTruncated(ByteBuf b, int fragOff, int end) {
        int nh = b.getUnsignedByte(fragOff);
        int off = fragOff + FRAG_HDR_LEN;
        while (nh == Ipv6Packet.NEXTHDR_HOP || nh == Ipv6Packet.NEXTHDR_ROUTING || nh == Ipv6Packet.NEXTHDR_DEST
                || nh == Ipv6Packet.NEXTHDR_AUTH) {
            if (off + 2 > end) {
                return true;
            }
            int len = nh == Ipv6Packet.NEXTHDR_AUTH ? (b.getUnsignedByte(off + 1) + 2) << 2
                    : (b.getUnsignedByte(off + 1) + 1) << 3;
            nh = b.getUnsignedByte(off);
            off += len;
        }
        if (nh == Ipv6Packet.NEXTHDR_NONE) {
            return false;
        }
        int need = switch (nh) {
            case Ipv6Packet.NEXTHDR_TCP -> 20;
            case Ipv6Packet.NEXTHDR_UDP, Ipv6Packet.NEXTHDR_ICMPV6 -> 8;
            default -> 1;
        };
        return off + need > end;
    }

    private Packet discard(Key k, Queue q, Packet p, DropReason why) {
        kill(k, q);
        ns.mib().inc(Mib.Ip6ReasmFails);
        ns.drop(p, why);
        return null;
    }

    /** Removes the queue and frees what it held. */
    private void kill(Key k, Queue q) {
        if (queues.remove(k) != q) {
            return;
        }
        if (q.timer != null) {
            q.timer.cancel();
        }
        memory -= q.bytes;
        for (Frag f : q.frags) {
            f.p.release();
        }
        q.frags.clear();
    }

    /**
     * ip6_frag_reasm: the first fragment's headers before its fragment header, the next-header field that named the
     * fragment header now naming what it named, the payload length of the whole, then every fragment's data.
     */
    private Packet reassemble(Key k, Queue q) {
        Frag first = q.first;
        Packet fp = first.p;
        ByteBuf fb = fp.buf();
        int fnet = fp.network();
        int unfrag = first.dataOff - FRAG_HDR_LEN - fnet;
        int payload = unfrag - Ipv6Packet.HEADER_LEN + q.len;
        if (payload > IPV6_MAXPLEN) {
            kill(k, q);
            ns.mib().inc(Mib.Ip6ReasmFails);
            return null;
        }
        int l2 = fnet - fp.start();
        Packet r = Packet.allocate(Buffers.HEADROOM, l2 + unfrag + q.len);
        ByteBuf rb = r.buf();
        int s = r.start();
        rb.writerIndex(s + l2 + unfrag + q.len);
        rb.setBytes(s, fb, fp.start(), l2 + unfrag);
        int rnet = s + l2;
        int fragNext = fb.getUnsignedByte(first.dataOff - FRAG_HDR_LEN);
        rb.setByte(rnet + q.nhoff, fragNext);
        rb.setShort(rnet + Ipv6Packet.PAYLOAD_LEN, payload);
        for (Frag f : q.frags) {
            rb.setBytes(rnet + unfrag + f.start, f.p.buf(), f.dataOff, f.end - f.start);
        }
        r.setNetwork(rnet);
        r.setTransport(rnet + unfrag);
        r.setDev(fp.dev());
        r.setPktType(fp.pktType());
        r.setRxTimeNanos(fp.rxTimeNanos());
        nextHeaderOffset = rnet + q.nhoff;
        kill(k, q);
        ns.mib().inc(Mib.Ip6ReasmOKs);
        return r;
    }

    /** ip6_frag_expire: the datagram is given up; its sender hears of it when its first fragment had come. */
    private void expire(Key k, Queue q) {
        if (queues.get(k) != q) {
            return;
        }
        q.timer = null;
        ns.mib().inc(Mib.Ip6ReasmFails);
        ns.mib().inc(Mib.Ip6ReasmTimeout);
        if (q.firstIn && q.first != null) {
            inet6.icmp().send(q.first.p, Icmpv6Packet.TIME_EXCEED, Icmpv6Packet.CODE_EXC_FRAGTIME, 0);
        }
        for (Frag f : q.frags) {
            ns.drop(f.p, DropReason.IP6_REASM_TIMEOUT);
        }
        q.frags.clear();
        queues.remove(k);
        memory -= q.bytes;
    }

    /** The namespace closes: every queue is freed. */
    void close() {
        for (var e : new ArrayList<>(queues.entrySet())) {
            kill(e.getKey(), e.getValue());
        }
    }
}
