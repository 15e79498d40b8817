package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * IPv4 reassembly for local delivery (ip_defrag): queues keyed by (src, dst, id, protocol), ipfrag_time
 * timeout with ICMP "fragment reassembly time exceeded" when the first fragment was seen, overlapping
 * fragments discard the whole datagram while exact duplicates are ignored (as Linux since 4.19), and a
 * memory ceiling (ipfrag_high_thresh): as in Linux since 4.17, while the memory held is above it every fragment
 * is refused (IpReasmFails) and only timeouts free it; nothing is evicted early. Memory counts each queue and
 * each fragment's truesize, as the kernel's frag_mem_limit does.
 */
public final class IpDefrag {
    private record Key(int src, int dst, int id, int proto) {}

    private static final class Queue {
        final TreeMap<Integer, Packet> frags = new TreeMap<>();
        int totalLen = -1;
        int bytes;
        Packet first;
        Timeout timer;
    }

    /** Stand-in for sizeof(struct ipq), which Linux counts against ipfrag_high_thresh for every queue. */
    static final int QUEUE_TRUESIZE = 256;
    /** Stand-in for the kernel's per-skb truesize overhead beyond the frame's bytes. */
    static final int FRAG_TRUESIZE_OVERHEAD = 256;

    private final Netns ns;
    private final Ipv4 inet;
    private final Ipv4Packet ip = new Ipv4Packet();
    private final Map<Key, Queue> queues = new HashMap<>();
    private long memory;

    public IpDefrag(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
    }

    /** Adds a fragment; returns the whole datagram once complete, else null. Owns {@code p}. */
    public Packet gather(Packet p) {
        ns.mib().inc(Mib.IpReasmReqds);
        ip.wrap(p.buf(), p.network());
        Key k = new Key(ip.src(), ip.dst(), ip.id(), ip.protocol());
        int off = ip.fragOffset();
        int len = ip.totalLength() - ip.headerLength();
        int end = off + len;
        boolean last = !ip.moreFragments();
        if (end > 65535 || (!last && (len & 7) != 0) || len == 0 && !last) {
            ns.mib().inc(Mib.IpReasmFails);
            ns.drop(p, DropReason.IP_REASM_OVERLAP);
            return null;
        }
        // inet_frag_find: above the ceiling no fragment is taken, not even for a queue that exists.
        long high = ns.knobs().get(Ipv4Sysctl.IPFRAG_HIGH_THRESH);
        if (high == 0 || memory > high) {
            ns.mib().inc(Mib.IpReasmFails);
            ns.drop(p, DropReason.IP_REASM_LIMIT);
            return null;
        }
        Queue q = queues.get(k);
        if (q == null) {
            q = new Queue();
            queues.put(k, q);
            memory += QUEUE_TRUESIZE;
            Queue qq = q;
            q.timer = ns.schedule(() -> expire(k, qq), ns.knobs().get(Ipv4Sysctl.IPFRAG_TIME) * 1_000_000_000L);
        }
        if (last) {
            if (q.totalLen >= 0 && q.totalLen != end || (!q.frags.isEmpty() && q.frags.lastEntry().getValue() != null
                    && endOf(q.frags.lastEntry().getValue()) > end)) {
                discard(k, q, p);
                return null;
            }
            q.totalLen = end;
        } else if (q.totalLen >= 0 && end > q.totalLen) {
            discard(k, q, p);
            return null;
        }
        // Overlap check against neighbours; an exact duplicate is dropped alone.
        var floor = q.frags.floorEntry(off);
        if (floor != null && floor.getKey() == off && endOf(floor.getValue()) == end) {
            ns.drop(p, DropReason.IP_REASM_OVERLAP);
            return null;
        }
        if (floor != null && endOf(floor.getValue()) > off) {
            discard(k, q, p);
            return null;
        }
        var ceil = q.frags.ceilingEntry(off);
        if (ceil != null && ceil.getKey() < end) {
            discard(k, q, p);
            return null;
        }
        q.frags.put(off, p);
        q.bytes += p.length() + FRAG_TRUESIZE_OVERHEAD;
        memory += p.length() + FRAG_TRUESIZE_OVERHEAD;
        if (off == 0) {
            q.first = p;
        }
        if (q.totalLen < 0 || q.first == null) {
            return null;
        }
        int covered = 0;
        for (var e : q.frags.entrySet()) {
            if (e.getKey() != covered) {
                return null;
            }
            covered = endOf(e.getValue());
        }
        if (covered != q.totalLen) {
            return null;
        }
        return assemble(k, q);
    }

    private int endOf(Packet f) {
        Ipv4Packet h = new Ipv4Packet().wrap(f.buf(), f.network());
        return h.fragOffset() + h.totalLength() - h.headerLength();
    }

    private Packet assemble(Key k, Queue q) {
        remove(k, q);
        Packet first = q.first;
        Ipv4Packet fh = new Ipv4Packet().wrap(first.buf(), first.network());
        int hlen = fh.headerLength();
        int l2 = first.network() - first.start();
        Packet whole = Packet.allocate(Buffers.HEADROOM, l2 + hlen + q.totalLen);
        ByteBuf b = whole.buf();
        int s = whole.start();
        b.writerIndex(s + l2 + hlen + q.totalLen);
        b.setBytes(s, first.buf(), first.start(), l2 + hlen);
        for (Packet f : q.frags.values()) {
            Ipv4Packet h = new Ipv4Packet().wrap(f.buf(), f.network());
            b.setBytes(s + l2 + hlen + h.fragOffset(), f.buf(), f.network() + h.headerLength(), h.totalLength() - h.headerLength());
        }
        whole.setNetwork(s + l2);
        whole.setTransport(s + l2 + hlen);
        whole.setDev(first.dev());
        whole.setPktType(first.pktType());
        whole.setRxTimeNanos(first.rxTimeNanos());
        Ipv4Packet wh = new Ipv4Packet().wrap(b, s + l2);
        wh.setTotalLength(hlen + q.totalLen);
        wh.setFragField(fh.fragField() & Ipv4Packet.FLAG_DF);
        wh.fillChecksum();
        for (Packet f : q.frags.values()) {
            f.release();
        }
        ns.mib().inc(Mib.IpReasmOKs);
        return whole;
    }

    /** An overlap or an inconsistent length: the whole datagram goes (ip_frag_queue's discard_qp). */
    private void discard(Key k, Queue q, Packet p) {
        remove(k, q);
        ns.mib().inc(Mib.IpExtReasmOverlaps);
        for (Packet f : q.frags.values()) {
            ns.drop(f, DropReason.IP_REASM_OVERLAP);
        }
        ns.drop(p, DropReason.IP_REASM_OVERLAP);
    }

    private void remove(Key k, Queue q) {
        queues.remove(k);
        memory -= q.bytes + QUEUE_TRUESIZE;
        if (q.timer != null) {
            q.timer.cancel();
        }
    }

    private void expire(Key k, Queue q) {
        if (queues.get(k) != q) {
            return;
        }
        remove(k, q);
        ns.mib().inc(Mib.IpReasmTimeout);
        ns.mib().inc(Mib.IpReasmFails);
        if (q.first != null) {
            inet.icmp().send(q.first, IcmpPacket.TIME_EXCEEDED, IcmpPacket.CODE_EXC_FRAGTIME, 0);
        }
        for (Packet f : q.frags.values()) {
            ns.drop(f, DropReason.IP_REASM_TIMEOUT);
        }
    }

    /** Memory held for reassembly as ipfrag_high_thresh counts it (/proc/net/sockstat's FRAG memory). */
    public long memory() {
        return memory;
    }

    /** Datagrams waiting for fragments. */
    public int pending() {
        return queues.size();
    }

    public void close() {
        for (Queue q : new ArrayList<>(queues.values())) {
            if (q.timer != null) {
                q.timer.cancel();
            }
            List<Packet> l = new ArrayList<>(q.frags.values());
            for (Packet f : l) {
                f.release();
            }
        }
        queues.clear();
        memory = 0;
    }
}
