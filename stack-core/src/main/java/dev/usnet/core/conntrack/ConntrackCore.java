package dev.usnet.core.conntrack;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfConntrackModule;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfHookState;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;

/**
 * IPv4 connection tracking of one namespace (nf_conntrack with nf_conntrack_ipv4 and nf_defrag_ipv4): while it has
 * users its functions sit at the hooks — reassembly first (prerouting and output, priority -400: a connection is
 * tracked by whole datagrams), then nf_conntrack_in (prerouting and output, -200), which finds the packet's entry
 * or starts a new one and lets the protocol's tracker judge the packet, and last the confirmation (input and
 * postrouting, after everything else), which puts a new entry in the table once its first packet was let through.
 * A packet gets its entry and how it relates to it ({@link IpConntrackInfo}) with {@link Packet#setNfct}; one
 * the trackers find invalid gets none (rules see {@code ct state invalid}) and is counted with its reason. Nothing
 * is allocated for a packet of a known connection.
 */
public final class ConntrackCore implements NfConntrackModule {
    private final Ipv4 ipv4;
    private final Netns ns;
    private final NfHooks hooks;
    private final ConntrackTable table;
    private final Ipv4Packet ip = new Ipv4Packet();
    private final Ipv4Packet inner = new Ipv4Packet();
    private final ConntrackTuple tuple = new ConntrackTuple();
    private final ConntrackTuple reply = new ConntrackTuple();
    private final TcpConntrack tcp = new TcpConntrack();
    private final NfHookOps defragOps = this::defrag;
    private final NfHookOps inOps = this::conntrackIn;
    private final NfHookOps confirmOps = this::confirm;
    private int users;
    /** Why {@link #track} last returned INVALID. */
    private ConntrackInvalid lastInvalid;
    // Whether tracking ever ran here: its counters are reported for such namespaces only (results, metrics).
    private boolean everActive;

    public ConntrackCore(Ipv4 ipv4) {
        this.ipv4 = ipv4;
        this.ns = ipv4.netns();
        this.hooks = ipv4.netfilter().hooks();
        this.table = new ConntrackTable(ns);
    }

    /**
     * The connection tracking installed in {@code ipv4}'s netfilter, or null (until the namespace holds a typed
     * reference, this is how tools and NAT reach it).
     */
    public static ConntrackCore of(Ipv4 ipv4) {
        return ipv4.netfilter().conntrack() instanceof ConntrackCore c ? c : null;
    }

    public ConntrackTable table() {
        return table;
    }

    public ConntrackStats stats() {
        return table.stats();
    }

    /** Whether tracking runs (someone holds it). */
    public boolean active() {
        return users > 0;
    }

    /** Whether tracking ran at some time in this namespace (it may have stopped since). */
    public boolean everActive() {
        return everActive;
    }

    @Override
    public void get() {
        everActive = true;
        if (users++ == 0) {
            hooks.register(NfHook.PRE_ROUTING, NfIpPriority.CONNTRACK_DEFRAG, defragOps);
            hooks.register(NfHook.LOCAL_OUT, NfIpPriority.CONNTRACK_DEFRAG, defragOps);
            hooks.register(NfHook.PRE_ROUTING, NfIpPriority.CONNTRACK, inOps);
            hooks.register(NfHook.LOCAL_OUT, NfIpPriority.CONNTRACK, inOps);
            hooks.register(NfHook.POST_ROUTING, NfIpPriority.CONNTRACK_CONFIRM, confirmOps);
            hooks.register(NfHook.LOCAL_IN, NfIpPriority.CONNTRACK_CONFIRM, confirmOps);
        }
    }

    @Override
    public void put() {
        if (users == 0) {
            throw new IllegalStateException("connection tracking put more often than get");
        }
        if (--users == 0) {
            hooks.unregister(NfHook.PRE_ROUTING, defragOps);
            hooks.unregister(NfHook.LOCAL_OUT, defragOps);
            hooks.unregister(NfHook.PRE_ROUTING, inOps);
            hooks.unregister(NfHook.LOCAL_OUT, inOps);
            hooks.unregister(NfHook.POST_ROUTING, confirmOps);
            hooks.unregister(NfHook.LOCAL_IN, confirmOps);
        }
    }

    /** Forgets every entry and stops the collector (the namespace is closing). */
    public void close() {
        table.close();
    }

    /** nf_ct_refresh: the entry lives {@code nanos} from now (from its confirmation while unconfirmed). */
    static void refresh(ConntrackEntry ct, ConntrackTable table, long nanos) {
        if (ct.hasStatus(IpConntrackStatus.FIXED_TIMEOUT)) {
            return;
        }
        ct.timeout = ct.confirmed() ? table.now() + nanos : nanos;
    }

    /** ipv4_conntrack_defrag: a fragment waits for the rest; the whole datagram goes on in its place. */
    private int defrag(Packet p, NfHookState st) {
        if (p.nfct() != null || p.ctinfo() == IpConntrackInfo.UNTRACKED) {
            return NfVerdict.ACCEPT;
        }
        ip.wrap(p.buf(), p.network());
        if (!ip.isFragment()) {
            return NfVerdict.ACCEPT;
        }
        Packet whole = ipv4.ipDefrag().gather(p);
        if (whole == null) {
            return NfVerdict.STOLEN;
        }
        st.replace(whole);
        return NfVerdict.ACCEPT;
    }

    private int invalid(Packet p, ConntrackInvalid why) {
        table.stats().countInvalid(why);
        p.setNfct(null, 0);
        return NfVerdict.ACCEPT;
    }

    /** nf_conntrack_in. */
    private int conntrackIn(Packet p, NfHookState st) {
        if (p.nfct() != null || p.ctinfo() == IpConntrackInfo.UNTRACKED) {
            // Tracked already: a packet looping back through lo keeps the entry output gave it.
            return NfVerdict.ACCEPT;
        }
        ByteBuf b = p.buf();
        ip.wrap(b, p.network());
        if (ip.isFragment()) {
            if (st.hook() == NfHook.LOCAL_OUT) {
                // A local datagram sent as fragments (no reassembly on output): not tracked, as Linux.
                p.setNfct(null, IpConntrackInfo.UNTRACKED);
                return NfVerdict.ACCEPT;
            }
            return invalid(p, ConntrackInvalid.FRAGMENT);
        }
        Knobs knobs = ns.knobs();
        int proto = ip.protocol();
        int l4 = p.network() + ip.headerLength();
        int l4len = ip.totalLength() - ip.headerLength();
        // Only what arrives is checked: what this host built carries a correct or offloaded checksum.
        boolean verify = st.hook() == NfHook.PRE_ROUTING && p.csumState() == ChecksumState.NONE
                && knobs.get(ConntrackSysctl.CHECKSUM) != 0;
        if (proto == Ipv4Packet.PROTO_ICMP) {
            ConntrackInvalid bad = icmpError(p, b, l4, l4len, verify);
            if (bad != null) {
                table.stats().countError(bad);
                p.setNfct(null, 0);
                return NfVerdict.ACCEPT;
            }
            if (p.nfct() != null) {
                return NfVerdict.ACCEPT;
            }
        }
        if (!tupleOf(b, proto, ip.src(), ip.dst(), l4, l4len, tuple)) {
            return invalid(p, ConntrackInvalid.TRUNCATED);
        }
        for (int attempt = 0; ; attempt++) {
            ConntrackTupleHash h = table.find(tuple);
            ns.cpu().conntrackLookedUp();
            ConntrackEntry ct;
            int dir;
            if (h == null) {
                if (!ConntrackTable.invert(tuple, reply)) {
                    return invalid(p, ConntrackInvalid.ICMP_NO_NEW);
                }
                ct = table.allocate(tuple, reply, knobs.get(ConntrackSysctl.ACCT) != 0,
                        knobs.get(ConntrackSysctl.MAX));
                if (ct == null) {
                    // Table full and nothing to evict near the new tuple: "table full, dropping packet".
                    table.stats().drop++;
                    p.setNfct(null, 0);
                    return st.drop(DropReason.NETFILTER_DROP);
                }
                ns.cpu().conntrackCreated();
                dir = ConntrackEntry.ORIGINAL;
            } else {
                ct = h.ct;
                dir = h.dir;
            }
            int ctinfo = dir == ConntrackEntry.REPLY ? IpConntrackInfo.ESTABLISHED_REPLY
                    : ct.hasStatus(IpConntrackStatus.SEEN_REPLY) ? IpConntrackInfo.ESTABLISHED : IpConntrackInfo.NEW;
            int r = track(ct, dir, proto, b, l4, l4len, verify, knobs);
            if (r == TcpConntrack.REPEAT && attempt == 0) {
                continue;
            }
            if (r != TcpConntrack.ACCEPT) {
                return invalid(p, r == TcpConntrack.REPEAT ? ConntrackInvalid.TCP_BAD_TRANSITION : lastInvalid);
            }
            if (ctinfo == IpConntrackInfo.ESTABLISHED_REPLY) {
                ct.setStatusBits(IpConntrackStatus.SEEN_REPLY);
            }
            if (ct.acct) {
                ct.packets[dir]++;
                ct.bytes[dir] += ip.totalLength();
            }
            p.setNfct(ct, ctinfo);
            return NfVerdict.ACCEPT;
        }
    }

    /** The protocol's tracker over one packet: ACCEPT, INVALID (with {@link #lastInvalid}) or REPEAT. */
    private int track(ConntrackEntry ct, int dir, int proto, ByteBuf b, int l4, int l4len, boolean verify,
                      Knobs knobs) {
        switch (proto) {
            case Ipv4Packet.PROTO_TCP -> {
                ConntrackInvalid bad = tcp.parse(b, l4, l4len);
                if (bad == null && verify && !transportChecksumOk(b, l4, l4len, proto)) {
                    bad = ConntrackInvalid.BAD_CHECKSUM;
                }
                if (bad == null && !ct.confirmed() && ct.tcp == null && !tcp.newConnection(ct, knobs)) {
                    bad = tcp.why;
                }
                if (bad != null) {
                    lastInvalid = bad;
                    return TcpConntrack.INVALID;
                }
                int r = tcp.packet(ct, dir, table, knobs);
                lastInvalid = tcp.why;
                return r;
            }
            case Ipv4Packet.PROTO_UDP -> {
                int ulen = b.getUnsignedShort(l4 + 4);
                if (ulen > l4len || ulen < 8) {
                    lastInvalid = ConntrackInvalid.UDP_BAD_LENGTH;
                    return TcpConntrack.INVALID;
                }
                if (verify && b.getUnsignedShort(l4 + 6) != 0 && !transportChecksumOk(b, l4, ulen, proto)) {
                    lastInvalid = ConntrackInvalid.BAD_CHECKSUM;
                    return TcpConntrack.INVALID;
                }
                UdpConntrack.packet(ct, table, knobs);
                return TcpConntrack.ACCEPT;
            }
            case Ipv4Packet.PROTO_ICMP -> {
                if (!ct.confirmed() && !IcmpConntrack.startsConnection(ct.tuple(ConntrackEntry.ORIGINAL).icmpType())) {
                    lastInvalid = ConntrackInvalid.ICMP_NO_NEW;
                    return TcpConntrack.INVALID;
                }
                refresh(ct, table, knobs.get(ConntrackSysctl.ICMP_TIMEOUT) * 1_000_000_000L);
                return TcpConntrack.ACCEPT;
            }
            default -> {
                refresh(ct, table, knobs.get(ConntrackSysctl.GENERIC_TIMEOUT) * 1_000_000_000L);
                return TcpConntrack.ACCEPT;
            }
        }
    }

    private boolean transportChecksumOk(ByteBuf b, int l4, int len, int proto) {
        return Checksum.finish(Checksum.add(b, l4, len, Checksum.pseudoHeader(ip.src(), ip.dst(), proto, len))) == 0;
    }

    /**
     * The tuple of a datagram's transport part at {@code l4} (nf_ct_get_tuple): ports for TCP and UDP (the first
     * four bytes), identifier, type and code for ICMP, nothing more for other protocols. False when too short.
     */
    static boolean tupleOf(ByteBuf b, int proto, int src, int dst, int l4, int l4len, ConntrackTuple out) {
        switch (proto) {
            case Ipv4Packet.PROTO_TCP, Ipv4Packet.PROTO_UDP, 136, 132, 33 -> {
                if (l4len < 4) {
                    return false;
                }
                out.set(proto, src, dst, b.getUnsignedShort(l4), b.getUnsignedShort(l4 + 2));
            }
            case Ipv4Packet.PROTO_ICMP -> {
                if (l4len < 8) {
                    return false;
                }
                out.setIcmp(src, dst, b.getUnsignedShort(l4 + 4), b.getUnsignedByte(l4), b.getUnsignedByte(l4 + 1));
            }
            default -> out.set(proto, src, dst, 0, 0);
        }
        return true;
    }

    /**
     * nf_conntrack_icmpv4_error: checks an ICMP message and, for an error, attaches it as RELATED (RELATED_REPLY
     * when it travels the answer's way) to the connection of the datagram it quotes — found by the inverse of the
     * quoted tuple, since the quote is of a packet going the other way. Returns why the message is unusable, or
     * null: then an error has its entry set, and a query goes on to be tracked as its own connection.
     */
    private ConntrackInvalid icmpError(Packet p, ByteBuf b, int l4, int l4len, boolean verify) {
        if (l4len < 8) {
            return ConntrackInvalid.TRUNCATED;
        }
        if (verify && Checksum.finish(Checksum.add(b, l4, l4len, 0)) != 0) {
            return ConntrackInvalid.BAD_CHECKSUM;
        }
        int type = b.getUnsignedByte(l4);
        if (type > IcmpConntrack.MAX_TYPE) {
            return ConntrackInvalid.ICMP_BAD_TYPE;
        }
        if (!IcmpConntrack.isError(type)) {
            return null;
        }
        int q = l4 + 8;
        int qlen = l4len - 8;
        if (qlen < Ipv4Packet.MIN_HEADER_LEN) {
            return ConntrackInvalid.TRUNCATED;
        }
        inner.wrap(b, q);
        int ihl = inner.headerLength();
        if (ihl < Ipv4Packet.MIN_HEADER_LEN || ihl > qlen || inner.fragOffset() != 0) {
            return ConntrackInvalid.ICMP_ERROR_UNMATCHED;
        }
        // Only the first eight bytes of the quoted transport header are sure to be there.
        if (!tupleOf(b, inner.protocol(), inner.src(), inner.dst(), q + ihl, Math.min(8, qlen - ihl), tuple)
                || !ConntrackTable.invert(tuple, reply)) {
            return ConntrackInvalid.ICMP_ERROR_UNMATCHED;
        }
        ConntrackTupleHash h = table.find(reply);
        if (h == null) {
            return ConntrackInvalid.ICMP_ERROR_UNMATCHED;
        }
        int ctinfo = IpConntrackInfo.RELATED + (h.dir == ConntrackEntry.REPLY ? IpConntrackInfo.IS_REPLY : 0);
        p.setNfct(h.ct, ctinfo);
        return null;
    }

    /** nf_confirm: the first packet of a new connection made it through; its entry enters the table. */
    private int confirm(Packet p, NfHookState st) {
        Object o = p.nfct();
        if (!(o instanceof ConntrackEntry ct) || ct.confirmed()
                || IpConntrackInfo.direction(p.ctinfo()) != ConntrackEntry.ORIGINAL) {
            return NfVerdict.ACCEPT;
        }
        ConntrackEntry in = table.confirm(ct);
        if (in == null) {
            p.setNfct(null, 0);
            return st.drop(DropReason.NETFILTER_DROP);
        }
        if (in != ct) {
            p.setNfct(in, p.ctinfo());
        }
        return NfVerdict.ACCEPT;
    }
}
