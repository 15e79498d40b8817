package dev.usnet.core.nat;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.conntrack.ConntrackEntry;
import dev.usnet.core.conntrack.ConntrackTable;
import dev.usnet.core.conntrack.ConntrackTuple;
import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfHookState;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatModule;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.route.Route;
import dev.usnet.core.stats.CpuAccount;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.Ipv4Packet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * NAT for IPv4 in one namespace (nf_nat_core with nf_nat_proto's IPv4 hooks). While a {@code type nat} chain exists
 * NAT sits at four hooks: destination NAT at prerouting and output (priority -100), source NAT at postrouting and
 * input (100). A connection's first packet runs the chains of that hook; a NAT statement binds the connection
 * ({@link #setup}: a new REPLY tuple, so the answers come back to the translated address), and when no chain did,
 * the null binding still moves a source port that would clash (nf_nat_alloc_null_binding). Every packet of a bound
 * connection is then rewritten at each hook where its direction has that kind of NAT (nf_nat_packet), and ICMP
 * errors about it get their quoted header translated too (nf_nat_icmp_reply_translation). Connection tracking runs
 * while NAT has chains (nf_ct_netns_get).
 */
public final class NatCore implements NfNatModule {
    private static final int NAT_MASK = IpConntrackStatus.SRC_NAT | IpConntrackStatus.DST_NAT;

    private final Ipv4 inet;
    private final ConntrackCore conntrack;
    private final ConntrackTable table;
    private final NfHooks hooks;
    private final CpuAccount cpu;
    private final NatManip manip;
    private final NatIcmpError icmpError;
    private final NatPortAllocator ports;
    private final Masquerade masquerade;
    private final NatStats stats = new NatStats();
    private final Ipv4Packet ip = new Ipv4Packet();
    private final ConntrackTuple current = new ConntrackTuple();
    private final ConntrackTuple candidate = new ConntrackTuple();
    private final ConntrackTuple newReply = new ConntrackTuple();
    // The chains of each hook, in priority order (nf_hook_entries of the NAT type, per hook).
    private final ChainEntry[][] chains = new ChainEntry[NfHook.values().length][];
    private final NfHookOps[] natOps = new NfHookOps[NfHook.values().length];
    private int chainCount;
    // nf_nat_bysource: source-NATed connections by original source (protocol, address, port), for a new connection
    // from the same socket to keep its mapping (find_appropriate_src).
    private final Map<Long, List<ConntrackEntry>> bySource = new HashMap<>();
    private final TupleInUse inUse;
    private final NatSourceMapping sourceMapping;

    private record ChainEntry(int priority, NfHookOps chain) {}

    public NatCore(Ipv4 inet, ConntrackCore conntrack) {
        this.inet = inet;
        this.conntrack = conntrack;
        this.table = conntrack.table();
        this.hooks = inet.netfilter().hooks();
        this.cpu = inet.netns().cpu();
        this.manip = new NatManip(inet.netns().cow());
        this.icmpError = new NatIcmpError(manip);
        this.ports = NatPortAllocator.forNamespace(inet.netns());
        this.masquerade = new Masquerade(inet);
        for (int i = 0; i < chains.length; i++) {
            chains[i] = new ChainEntry[0];
        }
        for (NfHook h : NfHook.values()) {
            natOps[h.ordinal()] = (p, st) -> natHook(p, st);
        }
        this.inUse = (proto, src, srcPort, dst, dstPort) -> {
            if (proto == Ipv4Packet.PROTO_ICMP) {
                candidate.setIcmp(src, dst, srcPort, current.icmpType(), current.icmpCode());
            } else {
                candidate.set(proto, src, dst, srcPort, dstPort);
            }
            return table.tupleTaken(candidate, settingUp);
        };
        this.sourceMapping = this::findBySource;
        table.setDestroyListener(this::forget);
        inet.devinet().addListener(this::addressRemoved);
    }

    /** The connection whose binding {@link #setup} is choosing (the one the in-use question ignores). */
    private ConntrackEntry settingUp;

    /** The NAT installed in {@code inet}'s netfilter, or null. */
    public static NatCore of(Ipv4 inet) {
        return inet.netfilter().nat() instanceof NatCore n ? n : null;
    }

    @Override
    public void registerChain(NfHook hook, int priority, NfHookOps chain) {
        ChainEntry[] old = chains[hook.ordinal()];
        int at = old.length;
        for (int i = 0; i < old.length; i++) {
            if (old[i].priority > priority) {
                at = i;
                break;
            }
        }
        ChainEntry[] t = new ChainEntry[old.length + 1];
        System.arraycopy(old, 0, t, 0, at);
        t[at] = new ChainEntry(priority, chain);
        System.arraycopy(old, at, t, at + 1, old.length - at);
        chains[hook.ordinal()] = t;
        if (chainCount++ == 0) {
            // nf_nat_register_fn: the first NAT chain brings NAT to all four hooks, and connection tracking with it.
            conntrack.get();
            hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, natOps[NfHook.PRE_ROUTING.ordinal()]);
            hooks.register(NfHook.LOCAL_OUT, NfIpPriority.NAT_DST, natOps[NfHook.LOCAL_OUT.ordinal()]);
            hooks.register(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC, natOps[NfHook.POST_ROUTING.ordinal()]);
            hooks.register(NfHook.LOCAL_IN, NfIpPriority.NAT_SRC, natOps[NfHook.LOCAL_IN.ordinal()]);
        }
    }

    @Override
    public void unregisterChain(NfHook hook, NfHookOps chain) {
        ChainEntry[] old = chains[hook.ordinal()];
        for (int i = 0; i < old.length; i++) {
            if (old[i].chain == chain) {
                ChainEntry[] t = new ChainEntry[old.length - 1];
                System.arraycopy(old, 0, t, 0, i);
                System.arraycopy(old, i + 1, t, i, old.length - i - 1);
                chains[hook.ordinal()] = t;
                if (--chainCount == 0) {
                    for (NfHook h : List.of(NfHook.PRE_ROUTING, NfHook.LOCAL_OUT, NfHook.POST_ROUTING, NfHook.LOCAL_IN)) {
                        hooks.unregister(h, natOps[h.ordinal()]);
                    }
                    conntrack.put();
                }
                return;
            }
        }
    }

    /** Whether {@code hook} rewrites sources (postrouting, input) rather than destinations (HOOK2MANIP). */
    private static boolean sourceHook(NfHook hook) {
        return hook == NfHook.POST_ROUTING || hook == NfHook.LOCAL_IN;
    }

    private static int doneBit(boolean source) {
        return source ? IpConntrackStatus.SRC_NAT_DONE : IpConntrackStatus.DST_NAT_DONE;
    }

    /** nf_nat_inet_fn at one of the four hooks. */
    private int natHook(Packet p, NfHookState st) {
        if (!(p.nfct() instanceof ConntrackEntry ct)) {
            return NfVerdict.ACCEPT;
        }
        int ctinfo = p.ctinfo();
        boolean source = sourceHook(st.hook());
        boolean reply = IpConntrackInfo.direction(ctinfo) == 1;
        switch (ctinfo) {
            case IpConntrackInfo.RELATED, IpConntrackInfo.RELATED_REPLY -> {
                ip.wrap(p.buf(), p.network());
                if (ip.protocol() == Ipv4Packet.PROTO_ICMP) {
                    ConntrackTuple other = ct.tuple(reply ? ConntrackEntry.ORIGINAL : ConntrackEntry.REPLY);
                    if (!icmpError.translate(p, source, ct.status(), reply, other.src(), otherSrcPort(other),
                            other.dst(), otherDstPort(other))) {
                        return st.drop(DropReason.NAT_REWRITE_FAILED);
                    }
                    if (ct.hasStatus(source != reply ? IpConntrackStatus.SRC_NAT : IpConntrackStatus.DST_NAT)) {
                        stats.icmpErrorTranslated();
                    }
                    return NfVerdict.ACCEPT;
                }
                int v = bindNew(p, st, ct, source);
                if (v != NfVerdict.ACCEPT) {
                    return v;
                }
            }
            case IpConntrackInfo.NEW -> {
                int v = bindNew(p, st, ct, source);
                if (v != NfVerdict.ACCEPT) {
                    return v;
                }
            }
            default -> { }
        }
        return natPacket(p, st, ct, source, reply);
    }

    /** A connection's first packet at this hook: the chains bind it, or the null binding does. */
    private int bindNew(Packet p, NfHookState st, ConntrackEntry ct, boolean source) {
        if (ct.hasStatus(doneBit(source))) {
            return NfVerdict.ACCEPT;
        }
        for (ChainEntry e : chains[st.hook().ordinal()]) {
            int v = e.chain.hook(p, st);
            if (v != NfVerdict.ACCEPT) {
                return v;
            }
            if (ct.hasStatus(doneBit(source))) {
                return NfVerdict.ACCEPT;
            }
        }
        // nf_nat_alloc_null_binding: the address stays, the port moves only on a clash.
        ConntrackTuple reply = ct.tuple(ConntrackEntry.REPLY);
        int addr = source ? reply.dst() : reply.src();
        return bind(p, st, ct, new NfNatRange(NfNatRange.MAP_IPS, addr, addr, 0, 0), source, true);
    }

    /** nf_nat_packet: the rewrite this hook owes a packet of a bound connection, when its direction has this kind. */
    private int natPacket(Packet p, NfHookState st, ConntrackEntry ct, boolean source, boolean reply) {
        int statusBit = source ? IpConntrackStatus.SRC_NAT : IpConntrackStatus.DST_NAT;
        if (reply) {
            statusBit ^= NAT_MASK;
        }
        if (!ct.hasStatus(statusBit)) {
            return NfVerdict.ACCEPT;
        }
        ConntrackTuple other = ct.tuple(reply ? ConntrackEntry.ORIGINAL : ConntrackEntry.REPLY);
        if (!manip.natPacket(p, source, ct.status(), reply, other.src(), otherSrcPort(other), other.dst(),
                otherDstPort(other))) {
            return st.drop(DropReason.NAT_REWRITE_FAILED);
        }
        cpu.natRewrote();
        stats.rewrote();
        return NfVerdict.ACCEPT;
    }

    private static int otherSrcPort(ConntrackTuple t) {
        return t.protonum() == Ipv4Packet.PROTO_ICMP ? t.icmpId() : t.srcPort();
    }

    private static int otherDstPort(ConntrackTuple t) {
        return t.protonum() == Ipv4Packet.PROTO_ICMP ? 0 : t.dstPort();
    }

    @Override
    public int setup(Packet p, NfNatRange range, boolean source) {
        if (!(p.nfct() instanceof ConntrackEntry ct)) {
            return NfVerdict.ACCEPT;
        }
        return bind(p, null, ct, range, source, false);
    }

    /**
     * nf_nat_setup_info: the connection as it looks now (the inverse of its REPLY tuple, which earlier NAT may have
     * changed) gets a unique tuple in {@code range}; when that differs the REPLY tuple becomes its inverse and the
     * connection has that kind of NAT. Either way this kind is done for the connection. {@code nullBinding}: no NAT
     * statement asked for it (only the counters tell the two apart).
     */
    private int bind(Packet p, NfHookState st, ConntrackEntry ct, NfNatRange range, boolean source,
                     boolean nullBinding) {
        if (ct.hasStatus(doneBit(source))) {
            return NfVerdict.ACCEPT;
        }
        ConntrackTable.invert(ct.tuple(ConntrackEntry.REPLY), current);
        int proto = current.protonum();
        boolean icmp = proto == Ipv4Packet.PROTO_ICMP;
        int srcPort = icmp ? current.icmpId() : current.srcPort();
        int dstPort = icmp ? (current.icmpType() << 8 | current.icmpCode()) : current.dstPort();
        settingUp = ct;
        long chosen;
        try {
            chosen = ports.uniqueTuple(proto, current.src(), srcPort, current.dst(), dstPort, range, source, inUse,
                    sourceMapping);
        } finally {
            settingUp = null;
        }
        if (chosen == NatPortAllocator.NO_TUPLE) {
            stats.noFreeTuple();
            return st != null ? st.drop(DropReason.NAT_NO_FREE_TUPLE) : NfVerdict.DROP;
        }
        int addr = NatPortAllocator.addr(chosen);
        int port = NatPortAllocator.port(chosen);
        candidate.copyFrom(current);
        if (source) {
            candidate.setSrc(addr);
            if (icmp || current.hasPorts()) {
                candidate.setSrcPort(port);
            }
        } else {
            candidate.setDst(addr);
            if (icmp) {
                candidate.setSrcPort(port);
            } else if (current.hasPorts()) {
                candidate.setDstPort(port);
            }
        }
        if (!candidate.equals(current)) {
            ConntrackTable.invert(candidate, newReply);
            table.alterReply(ct, newReply);
            ct.setStatusBits(source ? IpConntrackStatus.SRC_NAT : IpConntrackStatus.DST_NAT);
            stats.bound(source, nullBinding);
        }
        if (source) {
            remember(ct);
        }
        ct.setStatusBits(doneBit(source));
        return NfVerdict.ACCEPT;
    }

    @Override
    public int masquerade(Packet p, NfNatRange range, Device out) {
        if (!(p.nfct() instanceof ConntrackEntry ct)) {
            return NfVerdict.ACCEPT;
        }
        if (Masquerade.leavesAlone(ct.tuple(ConntrackEntry.ORIGINAL).src())) {
            return NfVerdict.ACCEPT;
        }
        ip.wrap(p.buf(), p.network());
        int dst = ip.dst();
        Route rt = inet.routes().lookup(dst);
        int nextHop = rt != null ? rt.nextHop(dst) : dst;
        int src = masquerade.source(out, nextHop);
        if (src == 0) {
            inet.netns().drops().count(DropReason.NAT_MASQUERADE_NO_ADDRESS);
            return NfVerdict.DROP;
        }
        // nat->masq_index: the device it was masqueraded out of, whose going down forgets the connection.
        ct.setNatData(out);
        return bind(p, null, ct, Masquerade.range(range, src), true, false);
    }

    private static long sourceKey(int proto, int addr, int port) {
        return ((long) proto << 48) | ((addr & 0xffff_ffffL) << 16) | (port & 0xffff);
    }

    private void remember(ConntrackEntry ct) {
        ConntrackTuple o = ct.tuple(ConntrackEntry.ORIGINAL);
        long key = sourceKey(o.protonum(), o.src(), o.protonum() == Ipv4Packet.PROTO_ICMP ? o.icmpId() : o.srcPort());
        bySource.computeIfAbsent(key, k -> new ArrayList<>(1)).add(ct);
    }

    private void forget(ConntrackEntry ct) {
        if (!ct.hasStatus(IpConntrackStatus.SRC_NAT_DONE)) {
            return;
        }
        ConntrackTuple o = ct.tuple(ConntrackEntry.ORIGINAL);
        long key = sourceKey(o.protonum(), o.src(), o.protonum() == Ipv4Packet.PROTO_ICMP ? o.icmpId() : o.srcPort());
        List<ConntrackEntry> l = bySource.get(key);
        if (l != null && l.remove(ct) && l.isEmpty()) {
            bySource.remove(key);
        }
    }

    /** find_appropriate_src: the mapped source of a live connection from the same original source, within range. */
    private long findBySource(int proto, int src, int srcPort, NfNatRange range) {
        List<ConntrackEntry> l = bySource.get(sourceKey(proto, src, srcPort));
        if (l == null) {
            return NatPortAllocator.NO_TUPLE;
        }
        for (ConntrackEntry ct : l) {
            ConntrackTuple r = ct.tuple(ConntrackEntry.REPLY);
            int port = proto == Ipv4Packet.PROTO_ICMP ? r.icmpId() : r.dstPort();
            if (NatPortAllocator.inRange(proto, r.dst(), port, range)) {
                return NatPortAllocator.pack(r.dst(), port);
            }
        }
        return NatPortAllocator.NO_TUPLE;
    }

    /** NAT's counters in this namespace. */
    public NatStats stats() {
        return stats;
    }

    /**
     * masq_device_event: {@code dev} went down, so the connections masqueraded out of it are forgotten (their address
     * may be gone, and a new connection should take whatever address the device comes back with). Returns how many.
     */
    public int deviceDown(Device dev) {
        if (table.count() == 0) {
            return 0;
        }
        return table.deleteIf(ct -> ct.natData() == dev);
    }

    /**
     * masq_inet_event: an address left {@code dev}, so the connections masqueraded out of it to that address are
     * forgotten (their answers could no longer arrive). Returns how many.
     */
    public int addressRemoved(Device dev, int address) {
        if (table.count() == 0) {
            return 0;
        }
        return table.deleteIf(ct -> ct.natData() == dev && ct.tuple(ConntrackEntry.REPLY).dst() == address);
    }

    /** Connections with a source mapping remembered (for tests and listings). */
    public int sourceMappings() {
        int n = 0;
        for (List<ConntrackEntry> l : bySource.values()) {
            n += l.size();
        }
        return n;
    }
}
