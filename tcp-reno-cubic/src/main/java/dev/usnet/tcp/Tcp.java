package dev.usnet.tcp;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.L4Protocol;
import dev.usnet.core.ipv6.Ipv6Sysctl;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.cc.CcSwitches;
import dev.usnet.tcp.cc.CongestionControls;
import dev.usnet.tcp.cc.CongestionOps;
import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;

/**
 * TCP of one namespace (tcp_prot and the inet hash tables): demultiplexes segments to connections and
 * listeners, answers segments for nobody with a reset (tcp_v4_send_reset), hands out ephemeral ports, and
 * reads the namespace's TCP knobs. Install once per namespace with {@link #install}.
 *
 * <p>Everything TCP sends goes through a socket's family operations ({@link TcpAfOps}: {@link TcpIpv4Ops},
 * {@link TcpIpv6Ops}); what is family-specific here is each family's entry into TCP, the receive and ICMP-error
 * handlers of protocol 6 (tcp_v4_rcv and tcp_v4_err here, tcp_v6_rcv and tcp_v6_err through
 * {@link TcpV6Protocol}), which read their family's header.
 *
 * <p>Each family has its own tables. IPv4 connections are keyed by (remote address, remote port, local port);
 * IPv6 ones by a hash of the same over 128-bit addresses, chained when two hashes meet, and told apart by the whole
 * 4-tuple. An IPv6 listener on the any address with net.ipv6.bindv6only 0 (Linux's default) also takes IPv4
 * connections to its port, which then run over IPv4 and read their addresses v4-mapped.
 */
public final class Tcp implements L4Protocol, AutoCloseable {
    private final NetStack stack;
    // Shared empty tables until the first connection and the first listener (never changed: those replace them).
    private static final LongObjectHashMap<TcpSock> NO_SOCKS = new LongObjectHashMap<>(1);
    private static final IntObjectHashMap<TcpListener> NO_LISTENERS = new IntObjectHashMap<>(1);
    private LongObjectHashMap<TcpSock> established = NO_SOCKS;
    private IntObjectHashMap<TcpListener> listeners = NO_LISTENERS;
    private LongObjectHashMap<TcpSock> established6 = NO_SOCKS;
    private IntObjectHashMap<TcpListener> listeners6 = NO_LISTENERS;
    // Connections that ended (reset by the peer, say) while their application still holds them: out of the lookup
    // table, but holding what they received until the application's close(), or until the namespace goes. Made by
    // the first.
    private java.util.Set<TcpSock> endedUnread;
    private final TcpSegment seg = new TcpSegment();
    private final TcpOptions opts = new TcpOptions();
    private final Ipv4Packet ip = new Ipv4Packet();
    private final Ipv6Packet ip6 = new Ipv6Packet();
    private final SynCookies synCookies;
    /** TCP over IPv4 (ipv4_specific). */
    private final TcpIpv4Ops ipv4;
    /** TCP over IPv6 (ipv6_specific). */
    private final TcpIpv6Ops ipv6;
    private int nextEphemeral;
    private int currEstab;

    /** "preset": the switch follows usnet.tcp.kernel; anything else overrides that one behaviour. */
    public static final String FOLLOW_PRESET = TcpSysctl.FOLLOW_PRESET;

    private Tcp(NetStack stack) {
        this.stack = stack;
        this.nextEphemeral = 32768 + (int) stack.randomBelow(28232);
        this.synCookies = new SynCookies(stack);
        this.ipv4 = new TcpIpv4Ops(stack);
        this.ipv6 = new TcpIpv6Ops(stack);
    }

    /** The family operations of IPv4 sockets. */
    TcpIpv4Ops ipv4() {
        return ipv4;
    }

    /** The family operations of IPv6 sockets. */
    TcpIpv6Ops ipv6() {
        return ipv6;
    }

    /** This namespace's SYN cookie keys and arithmetic. */
    SynCookies synCookies() {
        return synCookies;
    }

    /**
     * Installs TCP in {@code stack} unless it is there already; returns it. TCP lives where IPv4 finds it, in the
     * family's protocol table under protocol 6 (inet_protos), so that table is also where it is looked up; its
     * IPv6 entry goes into IPv6's table under next header 6 (inet6_protos).
     */
    public static synchronized Tcp install(NetStack stack) {
        Tcp t = installedIn(stack);
        if (t != null) {
            return t;
        }
        t = new Tcp(stack);
        stack.ipInput().registerProtocol(Ipv4Packet.PROTO_TCP, t);
        stack.ipv6().input().registerProtocol(Ipv6Packet.NEXTHDR_TCP, new TcpV6Protocol(t));
        return t;
    }

    /** The TCP of {@code stack}, installing it on first use. */
    public static Tcp of(NetStack stack) {
        Tcp t = installedIn(stack);
        return t != null ? t : install(stack);
    }

    /** The TCP installed in {@code stack}, or null: none is (nothing there has used TCP yet). */
    public static Tcp installedIn(NetStack stack) {
        return stack.ipInput().protocol(Ipv4Packet.PROTO_TCP) instanceof Tcp t ? t : null;
    }

    public NetStack stack() {
        return stack;
    }

    // ------------------------------------------------------------------------------------------------------
    // Sockets

    /**
     * connect(): an active open to {@code dst}:{@code dstPort} from an ephemeral port. Throws
     * IllegalStateException when there is no route (ENETUNREACH). Call on the namespace thread.
     */
    public TcpSock connect(int dst, int dstPort, TcpSock.Callbacks cb) {
        return connect(0, 0, dst, dstPort, cb);
    }

    /** connect() after bind(): {@code src} 0 picks the route's source address, {@code srcPort} 0 an ephemeral one. */
    public TcpSock connect(int src, int srcPort, int dst, int dstPort, TcpSock.Callbacks cb) {
        return connect(src, srcPort, dst, dstPort, cb, null);
    }

    /**
     * As {@link #connect(int, int, int, int, TcpSock.Callbacks)}, with {@code beforeSyn} applied to the socket
     * before its SYN goes out: socket options that shape the handshake (SO_RCVBUF and the window scale it
     * implies, TCP_CONGESTION, TCP_NODELAY) belong there, as setsockopt before connect() in Linux.
     */
    public TcpSock connect(int src, int srcPort, int dst, int dstPort, TcpSock.Callbacks cb,
            java.util.function.Consumer<TcpSock> beforeSyn) {
        if (dstPort < 1 || dstPort > 65535) {
            throw new IllegalArgumentException("TCP port " + dstPort + " out of range 1..65535");
        }
        Route rt = ipv4.routeConnect(dst);
        if (rt == null) {
            throw new IllegalStateException("connect to " + Ipv4Addr.format(dst) + ": network unreachable in namespace "
                    + stack.name() + " (ENETUNREACH)");
        }
        int s = src != 0 ? src : ipv4.sourceFor(rt, dst);
        int port = srcPort != 0 ? srcPort : ephemeralPort(s, dst, dstPort);
        if (established.containsKey(key(dst, dstPort, port))) {
            throw new IllegalStateException("TCP " + Ipv4Addr.format(s) + ":" + port + " -> " + Ipv4Addr.format(dst)
                    + ":" + dstPort + " already exists (EADDRNOTAVAIL)");
        }
        TcpSock sk = newSock(ipv4);
        sk.setCallbacks(cb);
        sk.setAddresses(s, port, dst, dstPort);
        hash(sk);
        if (beforeSyn != null) {
            beforeSyn.accept(sk);
        }
        sk.connect(rt);
        return sk;
    }

    /** connect() of an IPv6 socket to {@code dst}:{@code dstPort} from an ephemeral port. */
    public TcpSock connect(Ipv6Addr dst, int dstPort, TcpSock.Callbacks cb) {
        return connect(Ipv6Addr.ANY, 0, dst, dstPort, cb, null);
    }

    /**
     * connect() of an IPv6 socket (tcp_v6_connect), after bind() to {@code src} (ANY: the address source selection
     * gives for the route) and {@code srcPort} (0: ephemeral), with {@code beforeSyn} as in the IPv4 form. A
     * v4-mapped destination (::ffff:a.b.c.d) makes an IPv4 connection, as Linux's does, whose addresses read
     * v4-mapped. Throws IllegalStateException when there is no route (ENETUNREACH) or no usable source address
     * (EADDRNOTAVAIL, as while the addresses are tentative). Call on the namespace thread.
     */
    public TcpSock connect(Ipv6Addr src, int srcPort, Ipv6Addr dst, int dstPort, TcpSock.Callbacks cb,
            java.util.function.Consumer<TcpSock> beforeSyn) {
        if (dstPort < 1 || dstPort > 65535) {
            throw new IllegalArgumentException("TCP port " + dstPort + " out of range 1..65535");
        }
        if (Ipv6Addr.isV4Mapped(dst.hi(), dst.lo())) {
            if (!src.isUnspecified() && !Ipv6Addr.isV4Mapped(src.hi(), src.lo())) {
                throw new IllegalArgumentException("connect from IPv6 address " + src + " to v4-mapped " + dst
                        + ": the families differ (EAFNOSUPPORT)");
            }
            java.util.function.Consumer<TcpSock> mark = sk -> {
                sk.v4Mapped = true;
                if (beforeSyn != null) {
                    beforeSyn.accept(sk);
                }
            };
            return connect((int) src.lo(), srcPort, (int) dst.lo(), dstPort, cb, mark);
        }
        if (dst.isUnspecified() || dst.isMulticast()) {
            throw new IllegalArgumentException("TCP cannot connect to " + dst + " (ENETUNREACH)");
        }
        Route6 rt = ipv6.routeConnect(dst.hi(), dst.lo());
        if (rt == null) {
            throw new IllegalStateException("connect to " + dst + ": network unreachable in namespace " + stack.name()
                    + " (ENETUNREACH)");
        }
        Ipv6Addr s = src.isUnspecified() ? ipv6.sourceFor(rt, dst) : src;
        if (s == null) {
            throw new IllegalStateException("connect to " + dst + ": no usable source address in namespace "
                    + stack.name() + " (EADDRNOTAVAIL)");
        }
        int port = srcPort != 0 ? srcPort : ephemeralPort6(s, dst, dstPort);
        if (lookup6(dst.hi(), dst.lo(), dstPort, port, s.hi(), s.lo()) != null) {
            throw new IllegalStateException("TCP [" + s + "]:" + port + " -> [" + dst + "]:" + dstPort
                    + " already exists (EADDRNOTAVAIL)");
        }
        TcpSock sk = newSock(ipv6);
        sk.setCallbacks(cb);
        sk.setAddresses6(s.hi(), s.lo(), port, dst.hi(), dst.lo(), dstPort);
        hash(sk);
        if (beforeSyn != null) {
            beforeSyn.accept(sk);
        }
        sk.connect(rt);
        return sk;
    }

    /**
     * listen(): accepts connections to {@code port} on {@code addr} (0 = any local address) with an accept
     * queue of {@code backlog} (capped by net.core.somaxconn, as Linux does).
     */
    public TcpListener listen(int addr, int port, int backlog, TcpListener.Acceptor acceptor) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("TCP port " + port + " out of range 1..65535");
        }
        TcpListener dual = listeners6.get(spread(port));
        if (listeners.containsKey(spread(port)) || dual != null && dual.acceptsIpv4()) {
            throw new IllegalStateException("TCP port " + port + " already has a listener in namespace " + stack.name()
                    + " (EADDRINUSE)");
        }
        int cap = (int) Math.min(backlog, stack.knobs().get(TcpSysctl.SOMAXCONN));
        TcpListener l = new TcpListener(this, addr, port, Math.max(cap, 0), acceptor);
        if (listeners == NO_LISTENERS) {
            listeners = new IntObjectHashMap<>(4);
        }
        listeners.put(spread(port), l);
        return l;
    }

    /**
     * listen() of an IPv6 socket on {@code addr} ({@link Ipv6Addr#ANY}: every local address) and {@code port}.
     * On the any address with net.ipv6.bindv6only 0 (IPV6_V6ONLY off, Linux's default) it takes IPv4 connections
     * to the port too, so it conflicts with an IPv4 listener there (EADDRINUSE); with bindv6only 1 the two coexist.
     */
    public TcpListener listen(Ipv6Addr addr, int port, int backlog, TcpListener.Acceptor acceptor) {
        return listen(addr, port, backlog, stack.knobs().get(Ipv6Sysctl.BINDV6ONLY) != 0, acceptor);
    }

    /** As {@link #listen(Ipv6Addr, int, int, TcpListener.Acceptor)} with IPV6_V6ONLY set to {@code v6only}. */
    public TcpListener listen(Ipv6Addr addr, int port, int backlog, boolean v6only, TcpListener.Acceptor acceptor) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("TCP port " + port + " out of range 1..65535");
        }
        if (Ipv6Addr.isV4Mapped(addr.hi(), addr.lo()) || addr.isMulticast()) {
            throw new IllegalArgumentException("TCP cannot listen on " + addr
                    + " over IPv6 (a v4-mapped address listens over IPv4: give the IPv4 address)");
        }
        boolean takesIpv4 = !v6only && addr.isUnspecified();
        if (listeners6.containsKey(spread(port)) || takesIpv4 && listeners.containsKey(spread(port))) {
            throw new IllegalStateException("TCP port " + port + " already has a listener in namespace " + stack.name()
                    + " (EADDRINUSE)");
        }
        int cap = (int) Math.min(backlog, stack.knobs().get(TcpSysctl.SOMAXCONN));
        TcpListener l = new TcpListener(this, addr, v6only, port, Math.max(cap, 0), acceptor);
        if (listeners6 == NO_LISTENERS) {
            listeners6 = new IntObjectHashMap<>(4);
        }
        listeners6.put(spread(port), l);
        return l;
    }

    void unlisten(TcpListener l) {
        IntObjectHashMap<TcpListener> table = l.ipv6() ? listeners6 : listeners;
        if (table.get(spread(l.port())) == l) {
            table.remove(spread(l.port()));
        }
    }

    TcpSock newSock(TcpAfOps af) {
        // tcp_init_sock: sockets start at tcp_wmem/tcp_rmem default and autotune from there; with
        // usnet.tcp.buffers=max, at the maximum (where autotuning ends up for a bulk flow), never growing.
        var knobs = stack.knobs();
        boolean max = knobs.get(TcpSysctl.BUFFERS) == TcpSysctl.BufferMode.MAX;
        TcpSysctl.TcpMem w = knobs.get(TcpSysctl.WMEM);
        TcpSysctl.TcpMem r = knobs.get(TcpSysctl.RMEM);
        return new TcpSock(this, af, (int) (max ? w.max() : w.def()), (int) (max ? r.max() : r.def()));
    }

    /** Every connection (not listeners) of both families, for {@code ss}: IPv4's first, each by local port. */
    public List<TcpSock> sockets() {
        List<TcpSock> l = new ArrayList<>(established.values());
        l.sort((a, b) -> Integer.compare(a.lport, b.lport));
        List<TcpSock> v6 = allIpv6();
        v6.sort((a, b) -> Integer.compare(a.lport, b.lport));
        l.addAll(v6);
        return l;
    }

    private List<TcpSock> allIpv6() {
        List<TcpSock> l = new ArrayList<>();
        for (TcpSock head : established6.values()) {
            for (TcpSock s = head; s != null; s = s.hashNext) {
                l.add(s);
            }
        }
        return l;
    }

    /** Every listener of both families. */
    public List<TcpListener> listeners() {
        List<TcpListener> l = new ArrayList<>(listeners.values());
        l.addAll(listeners6.values());
        return l;
    }

    /** Connections in ESTABLISHED or CLOSE-WAIT (TcpCurrEstab). */
    public int currEstab() {
        return currEstab;
    }

    void currEstab(int delta) {
        currEstab += delta;
    }

    private int ephemeralPort(int src, int dst, int dstPort) {
        for (int i = 0; i < 28232; i++) {
            int p = nextEphemeral;
            nextEphemeral = nextEphemeral >= 60999 ? 32768 : nextEphemeral + 1;
            if (!established.containsKey(key(dst, dstPort, p)) && !listeners.containsKey(spread(p))) {
                return p;
            }
        }
        throw new IllegalStateException("no free ephemeral port 32768-60999 to " + Ipv4Addr.format(dst) + ":" + dstPort
                + " (EADDRNOTAVAIL)");
    }

    private int ephemeralPort6(Ipv6Addr src, Ipv6Addr dst, int dstPort) {
        for (int i = 0; i < 28232; i++) {
            int p = nextEphemeral;
            nextEphemeral = nextEphemeral >= 60999 ? 32768 : nextEphemeral + 1;
            if (lookup6(dst.hi(), dst.lo(), dstPort, p, src.hi(), src.lo()) == null
                    && !listeners6.containsKey(spread(p)) && !listeners.containsKey(spread(p))) {
                return p;
            }
        }
        throw new IllegalStateException("no free ephemeral port 32768-60999 to [" + dst + "]:" + dstPort
                + " (EADDRNOTAVAIL)");
    }

    static long key(int raddr, int rport, int lport) {
        return spread((long) raddr << 32 | (long) rport << 16 | lport);
    }

    /**
     * The IPv6 table's key of (remote address, remote port, local port): the 160 bits mixed into 64. Different
     * connections may share one; the table chains them ({@link TcpSock#hashNext}).
     */
    static long key6(long raddrHi, long raddrLo, int rport, int lport) {
        return spread(raddrHi * 0x9e37_79b9_7f4a_7c15L ^ Long.rotateLeft(raddrLo, 21) ^ ((long) rport << 16 | lport));
    }

    /** The IPv6 connection with this 4-tuple, or null. Allocates nothing. */
    TcpSock lookup6(long rh, long rl, int rport, int lport, long lh, long ll) {
        for (TcpSock s = established6.get(key6(rh, rl, rport, lport)); s != null; s = s.hashNext) {
            if (s.matches6(rh, rl, rport, lport, lh, ll)) {
                return s;
            }
        }
        return null;
    }

    void hash(TcpSock s) {
        if (s.af == ipv6) {
            s.key = key6(s.raddrHi, s.raddrLo, s.rport, s.lport);
            if (established6 == NO_SOCKS) {
                established6 = new LongObjectHashMap<>();
            }
            s.hashNext = established6.get(s.key);
            established6.put(s.key, s);
            return;
        }
        s.key = key(s.raddr, s.rport, s.lport);
        if (established == NO_SOCKS) {
            established = new LongObjectHashMap<>();
        }
        established.put(s.key, s);
    }

    void unhash(TcpSock s) {
        if (s.af == ipv6) {
            TcpSock head = established6.get(s.key);
            if (head == s) {
                if (s.hashNext != null) {
                    established6.put(s.key, s.hashNext);
                } else {
                    established6.remove(s.key);
                }
            } else {
                for (TcpSock p = head; p != null; p = p.hashNext) {
                    if (p.hashNext == s) {
                        p.hashNext = s.hashNext;
                        break;
                    }
                }
            }
            s.hashNext = null;
            return;
        }
        if (established.get(s.key) == s) {
            established.remove(s.key);
        }
    }

    /** {@code s} ended while its application holds it: its buffers go with its close() or with {@link #close}. */
    void holdUnread(TcpSock s, boolean holds) {
        if (holds) {
            if (endedUnread == null) {
                endedUnread = new java.util.HashSet<>();
            }
            endedUnread.add(s);
        } else if (endedUnread != null) {
            endedUnread.remove(s);
        }
    }

    // ------------------------------------------------------------------------------------------------------
    // Per-namespace settings

    /** The congestion-avoidance switches new connections get: usnet.tcp.kernel plus per-switch overrides. */
    public CcSwitches ccSwitches() {
        var knobs = stack.knobs();
        CcSwitches sw = knobs.get(TcpSysctl.KERNEL).switches();
        for (int i = 0; i < CcSwitches.KEYS.size(); i++) {
            String v = knobs.get(TcpSysctl.SWITCHES.get(i));
            if (!v.equals(FOLLOW_PRESET)) {
                sw = sw.withOverride(CcSwitches.KEYS.get(i), v);
            }
        }
        return sw;
    }

    CongestionOps newCongestionOps(String name) {
        return CongestionControls.create(name != null ? name : stack.knobs().get(TcpSysctl.CONGESTION_CONTROL));
    }

    long initCwnd() {
        return stack.knobs().get(TcpSysctl.INIT_CWND);
    }

    /** net.ipv4.tcp_slow_start_after_idle. */
    boolean slowStartAfterIdle() {
        return stack.knobs().get(TcpSysctl.SLOW_START_AFTER_IDLE) != 0;
    }

    /** The RTO floor (Linux's TCP_RTO_MIN, 200 ms; a per-route rto_min in Linux, usnet.tcp.rto_min_ms here). */
    long rtoMinNanos() {
        return stack.knobs().get(TcpSysctl.RTO_MIN_MS) * 1_000_000L;
    }

    // ------------------------------------------------------------------------------------------------------
    // Input

    /** tcp_v4_rcv. Owns {@code p}. */
    @Override
    public void rcv(Packet p) {
        ByteBuf b = p.buf();
        ip.wrap(b, p.network());
        int src = ip.src();
        int dst = ip.dst();
        int l4len = ip.totalLength() - ip.headerLength();
        // A coalesced (GSO) segment counts as the segments it carries, as tcp_v4_rcv counts gso_segs.
        stack.mib().add(Mib.TcpInSegs, p.gsoSize() > 0 ? Math.max(1, (l4len - TcpSegment.MIN_HEADER_LEN + p.gsoSize() - 1) / p.gsoSize()) : 1);
        if (p.pktType() != Packet.PACKET_HOST) {
            stack.drop(p, DropReason.TCP_NOT_HOST);
            return;
        }
        if (seg.check(b, p.transport(), l4len) != null) {
            stack.mib().inc(Mib.TcpInErrs);
            stack.drop(p, DropReason.TCP_MALFORMED);
            return;
        }
        if (p.csumState() == ChecksumState.NONE && !seg.checksumValid(src, dst)) {
            stack.mib().inc(Mib.TcpInErrs);
            stack.mib().inc(Mib.TcpInCsumErrors);
            stack.drop(p, DropReason.TCP_CSUM);
            return;
        }
        // Trim link-layer padding so the frame ends where the segment does.
        p.trim(p.transport() + l4len - p.start());
        int flags = seg.flags();
        opts.parse(b, p.transport(), seg.headerLength(), (flags & TcpSegment.SYN) != 0);
        TcpSock s = established.get(key(src, seg.srcPort(), seg.dstPort()));
        if (s != null && s.laddr == dst) {
            if (s.state == TcpState.TIME_WAIT && (flags & TcpSegment.SYN) != 0 && (flags & TcpSegment.ACK_FLAG) == 0) {
                TcpListener l = listenerFor(dst, seg.dstPort());
                if (l != null && Seq.after(seg.seq(), s.rcvNxtForTimeWait())) {
                    // A new incarnation with a higher sequence number may reuse a TIME-WAIT pair (RFC 1122).
                    s.finish(TcpError.NONE);
                    l.rcvSyn(ipv4, p, src, dst, seg, opts, true);
                    return;
                }
            }
            s.rcv(p, seg, opts);
            return;
        }
        TcpListener l = listenerFor(dst, seg.dstPort());
        if (l != null) {
            l.rcv(ipv4, p, src, dst, seg, opts);
            return;
        }
        if ((flags & TcpSegment.RST) == 0) {
            replyReset(ipv4, p, seg, l4len);
        }
        stack.drop(p, DropReason.TCP_NO_SOCKET);
    }

    /**
     * tcp_v6_rcv: as {@link #rcv} over IPv6. The checksum covers the IPv6 pseudo-header; {@code p.transport()} is
     * the TCP header after any extension headers. Owns {@code p}.
     */
    void rcv6(Packet p) {
        ByteBuf b = p.buf();
        int net = p.network();
        ip6.wrap(b, net);
        int t = p.transport();
        int l4len = net + Ipv6Packet.HEADER_LEN + ip6.payloadLength() - t;
        stack.mib().add(Mib.TcpInSegs, p.gsoSize() > 0 ? Math.max(1, (l4len - TcpSegment.MIN_HEADER_LEN + p.gsoSize() - 1) / p.gsoSize()) : 1);
        if (p.pktType() != Packet.PACKET_HOST) {
            stack.drop(p, DropReason.TCP_NOT_HOST);
            return;
        }
        if (l4len < 0 || seg.check(b, t, l4len) != null) {
            stack.mib().inc(Mib.TcpInErrs);
            stack.drop(p, DropReason.TCP_MALFORMED);
            return;
        }
        if (p.csumState() == ChecksumState.NONE && dev.usnet.core.wire.Checksum.finish(dev.usnet.core.wire.Checksum.add(
                b, t, l4len, Ipv6Packet.pseudoHeaderSum(b, net, l4len, Ipv6Packet.NEXTHDR_TCP))) != 0) {
            stack.mib().inc(Mib.TcpInErrs);
            stack.mib().inc(Mib.TcpInCsumErrors);
            stack.drop(p, DropReason.TCP_CSUM);
            return;
        }
        p.trim(t + l4len - p.start());
        long sh = ip6.srcHi();
        long sl = ip6.srcLo();
        long dh = ip6.dstHi();
        long dl = ip6.dstLo();
        int flags = seg.flags();
        opts.parse(b, t, seg.headerLength(), (flags & TcpSegment.SYN) != 0);
        TcpSock s = lookup6(sh, sl, seg.srcPort(), seg.dstPort(), dh, dl);
        if (s != null) {
            if (s.state == TcpState.TIME_WAIT && (flags & TcpSegment.SYN) != 0 && (flags & TcpSegment.ACK_FLAG) == 0) {
                TcpListener l = listenerFor6(dh, dl, seg.dstPort());
                if (l != null && Seq.after(seg.seq(), s.rcvNxtForTimeWait())) {
                    s.finish(TcpError.NONE);
                    l.rcvSyn(ipv6, p, synCookies.fold6(sh, sl), synCookies.fold6(dh, dl), seg, opts, true);
                    return;
                }
            }
            s.rcv(p, seg, opts);
            return;
        }
        TcpListener l = listenerFor6(dh, dl, seg.dstPort());
        if (l != null) {
            // The cookie and timestamp-offset hashes take 32-bit addresses: IPv6's folded by a keyed hash.
            l.rcv(ipv6, p, synCookies.fold6(sh, sl), synCookies.fold6(dh, dl), seg, opts);
            return;
        }
        if ((flags & TcpSegment.RST) == 0) {
            replyReset(ipv6, p, seg, l4len);
        }
        stack.drop(p, DropReason.TCP_NO_SOCKET);
    }

    /**
     * tcp_v4_err: an ICMP error quoting a segment this namespace sent goes to the connection with that 4-tuple
     * ({@link TcpErr}); one for no connection is counted (IcmpInErrors), as Linux does. Listeners never hear
     * errors: a SYN-ACK's is the SYN-RECV child's.
     */
    @Override
    public void err(int type, int code, int info, ByteBuf quoted, int off, int len) {
        int ihl = (quoted.getUnsignedByte(off) & 0x0f) * 4;
        int src = quoted.getInt(off + Ipv4Packet.SRC);
        int dst = quoted.getInt(off + Ipv4Packet.DST);
        int t = off + ihl;
        int sport = quoted.getUnsignedShort(t);
        int dport = quoted.getUnsignedShort(t + 2);
        long seq = quoted.getUnsignedInt(t + 4);
        TcpSock s = established.get(key(dst, dport, sport));
        if (s == null || s.laddr != src) {
            stack.mib().inc(Mib.IcmpInErrors);
            return;
        }
        s.icmpErr.icmpError(type, code, info, seq);
    }

    /**
     * tcp_v6_err: as {@link #err} for an ICMPv6 error quoting an IPv6 segment of ours ({@code transportOff} is its
     * TCP header); one for no connection is counted (Icmp6InErrors).
     */
    void err6(int type, int code, long info, ByteBuf quoted, int off, int transportOff, int len) {
        if (transportOff + 8 > off + len) {
            return;
        }
        long sh = quoted.getLong(off + Ipv6Packet.SRC);
        long sl = quoted.getLong(off + Ipv6Packet.SRC + 8);
        long dh = quoted.getLong(off + Ipv6Packet.DST);
        long dl = quoted.getLong(off + Ipv6Packet.DST + 8);
        int sport = quoted.getUnsignedShort(transportOff);
        int dport = quoted.getUnsignedShort(transportOff + 2);
        long seq = quoted.getUnsignedInt(transportOff + 4);
        TcpSock s = lookup6(dh, dl, dport, sport, sh, sl);
        if (s == null) {
            stack.mib().inc(Mib.Icmp6InErrors);
            return;
        }
        s.icmpErr.icmpv6Error(type, code, info, seq);
    }

    private TcpListener listenerFor(int dst, int port) {
        TcpListener l = listeners.get(spread(port));
        if (l != null && (l.addr() == 0 || l.addr() == dst)) {
            return l;
        }
        // An IPv6 listener on the any address without IPV6_V6ONLY takes IPv4 too (the v4-mapped addresses).
        l = listeners6.get(spread(port));
        return l != null && l.acceptsIpv4() ? l : null;
    }

    private TcpListener listenerFor6(long dh, long dl, int port) {
        TcpListener l = listeners6.get(spread(port));
        return l != null && l.accepts6(dh, dl) ? l : null;
    }

    /**
     * tcp_v4_send_reset for a segment nobody wants ({@code in}, parsed in {@code s}): RST with its ACK as our
     * sequence, or RST|ACK covering it.
     */
    void replyReset(TcpAfOps af, Packet in, TcpSegment s, int l4len) {
        int flags = s.flags();
        if ((flags & TcpSegment.ACK_FLAG) != 0) {
            af.sendReset(in, s, s.ack(), 0, TcpSegment.RST);
        } else {
            long len = l4len - s.headerLength() + ((flags & TcpSegment.SYN) != 0 ? 1 : 0)
                    + ((flags & TcpSegment.FIN) != 0 ? 1 : 0);
            af.sendReset(in, s, 0, Seq.add(s.seq(), len), TcpSegment.RST | TcpSegment.ACK_FLAG);
        }
    }

    /** Aborts every connection and listener (the namespace is going away). */
    @Override
    public void close() {
        for (TcpSock s : new ArrayList<>(established.values())) {
            s.destroy();
        }
        for (TcpSock s : allIpv6()) {
            s.destroy();
        }
        if (endedUnread != null) {
            for (TcpSock s : new ArrayList<>(endedUnread)) {
                s.destroy();
            }
            endedUnread = null;
        }
        for (TcpListener l : listeners()) {
            l.close();
        }
    }
}
