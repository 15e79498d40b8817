package dev.usnet.tcp;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.L4Protocol;
import dev.usnet.core.route.Route;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
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
 * <p>Everything TCP sends goes through a socket's family operations ({@link TcpAfOps}); what stays IPv4-specific
 * here is IPv4's entry into TCP, the receive and ICMP-error handlers of protocol 6 (tcp_v4_rcv, tcp_v4_err),
 * which read the IPv4 header.
 */
public final class Tcp implements L4Protocol, AutoCloseable {
    private final NetStack stack;
    // Shared empty tables until the first connection and the first listener (never changed: those replace them).
    private static final LongObjectHashMap<TcpSock> NO_SOCKS = new LongObjectHashMap<>(1);
    private static final IntObjectHashMap<TcpListener> NO_LISTENERS = new IntObjectHashMap<>(1);
    private LongObjectHashMap<TcpSock> established = NO_SOCKS;
    private IntObjectHashMap<TcpListener> listeners = NO_LISTENERS;
    // Connections that ended (reset by the peer, say) while their application still holds them: out of the lookup
    // table, but holding what they received until the application's close(), or until the namespace goes. Made by
    // the first.
    private java.util.Set<TcpSock> endedUnread;
    private final TcpSegment seg = new TcpSegment();
    private final TcpOptions opts = new TcpOptions();
    private final Ipv4Packet ip = new Ipv4Packet();
    private final SynCookies synCookies;
    /** TCP over IPv4 (ipv4_specific): what every socket of this namespace runs over. */
    private final TcpAfOps ipv4;
    private int nextEphemeral;
    private int currEstab;

    /** "preset": the switch follows usnet.tcp.kernel; anything else overrides that one behaviour. */
    public static final String FOLLOW_PRESET = TcpSysctl.FOLLOW_PRESET;

    private Tcp(NetStack stack) {
        this.stack = stack;
        this.nextEphemeral = 32768 + (int) stack.randomBelow(28232);
        this.synCookies = new SynCookies(stack);
        this.ipv4 = new TcpIpv4Ops(stack);
    }

    /** The family operations of IPv4 sockets. */
    TcpAfOps ipv4() {
        return ipv4;
    }

    /** This namespace's SYN cookie keys and arithmetic. */
    SynCookies synCookies() {
        return synCookies;
    }

    /**
     * Installs TCP in {@code stack} unless it is there already; returns it. TCP lives where IPv4 finds it, in the
     * family's protocol table under protocol 6 (inet_protos), so that table is also where it is looked up.
     */
    public static synchronized Tcp install(NetStack stack) {
        Tcp t = installedIn(stack);
        if (t != null) {
            return t;
        }
        t = new Tcp(stack);
        stack.ipInput().registerProtocol(Ipv4Packet.PROTO_TCP, t);
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
        TcpSock sk = newSock();
        sk.setCallbacks(cb);
        sk.setAddresses(s, port, dst, dstPort);
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
        if (listeners.containsKey(spread(port))) {
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

    void unlisten(TcpListener l) {
        if (listeners.get(spread(l.port())) == l) {
            listeners.remove(spread(l.port()));
        }
    }

    TcpSock newSock() {
        // tcp_init_sock: sockets start at tcp_wmem/tcp_rmem default and autotune from there; with
        // usnet.tcp.buffers=max, at the maximum (where autotuning ends up for a bulk flow), never growing.
        var knobs = stack.knobs();
        boolean max = knobs.get(TcpSysctl.BUFFERS) == TcpSysctl.BufferMode.MAX;
        TcpSysctl.TcpMem w = knobs.get(TcpSysctl.WMEM);
        TcpSysctl.TcpMem r = knobs.get(TcpSysctl.RMEM);
        return new TcpSock(this, (int) (max ? w.max() : w.def()), (int) (max ? r.max() : r.def()));
    }

    /** Every connection (not listeners), for {@code ss}. */
    public List<TcpSock> sockets() {
        List<TcpSock> l = new ArrayList<>(established.values());
        l.sort((a, b) -> Integer.compare(a.lport, b.lport));
        return l;
    }

    public List<TcpListener> listeners() {
        return new ArrayList<>(listeners.values());
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

    static long key(int raddr, int rport, int lport) {
        return spread((long) raddr << 32 | (long) rport << 16 | lport);
    }

    void hash(TcpSock s) {
        s.key = key(s.raddr, s.rport, s.lport);
        if (established == NO_SOCKS) {
            established = new LongObjectHashMap<>();
        }
        established.put(s.key, s);
    }

    void unhash(TcpSock s) {
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
                    l.rcvSyn(p, src, dst, seg, opts, true);
                    return;
                }
            }
            s.rcv(p, seg, opts);
            return;
        }
        TcpListener l = listenerFor(dst, seg.dstPort());
        if (l != null) {
            l.rcv(p, src, dst, seg, opts);
            return;
        }
        if ((flags & TcpSegment.RST) == 0) {
            replyReset(p, seg, l4len);
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

    private TcpListener listenerFor(int dst, int port) {
        TcpListener l = listeners.get(spread(port));
        if (l != null && (l.addr() == 0 || l.addr() == dst)) {
            return l;
        }
        return null;
    }

    /**
     * tcp_v4_send_reset for a segment nobody wants ({@code in}, parsed in {@code s}): RST with its ACK as our
     * sequence, or RST|ACK covering it.
     */
    void replyReset(Packet in, TcpSegment s, int l4len) {
        int flags = s.flags();
        if ((flags & TcpSegment.ACK_FLAG) != 0) {
            ipv4.sendReset(in, s, s.ack(), 0, TcpSegment.RST);
        } else {
            long len = l4len - s.headerLength() + ((flags & TcpSegment.SYN) != 0 ? 1 : 0)
                    + ((flags & TcpSegment.FIN) != 0 ? 1 : 0);
            ipv4.sendReset(in, s, 0, Seq.add(s.seq(), len), TcpSegment.RST | TcpSegment.ACK_FLAG);
        }
    }

    /** Aborts every connection and listener (the namespace is going away). */
    @Override
    public void close() {
        for (TcpSock s : new ArrayList<>(established.values())) {
            s.destroy();
        }
        if (endedUnread != null) {
            for (TcpSock s : new ArrayList<>(endedUnread)) {
                s.destroy();
            }
            endedUnread = null;
        }
        for (TcpListener l : new ArrayList<>(listeners.values())) {
            l.close();
        }
    }
}
