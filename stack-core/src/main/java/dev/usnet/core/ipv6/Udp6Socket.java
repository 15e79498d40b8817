package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;

/**
 * A UDP socket bound on IPv6 in one namespace: a minimal sendto/recvfrom API, and connect. Received datagrams are
 * handed to the receiver on the namespace thread (the payload is valid only during the call).
 *
 * <p>ICMPv6 errors about what it sent reach it as they reach a Linux socket without IPV6_RECVERR (udpv6_err): a
 * connected socket takes a hard error ({@link Icmpv6ErrorConvert#hard}; port unreachable: ECONNREFUSED) as its pending
 * error, which the error listener hears at once and the next {@link #sendTo} reports instead of sending, or
 * {@link #takeError} reads (SO_ERROR); soft errors, and any error to a socket that is not connected, are not
 * reported. A packet too big is hard here too (the socket does path MTU discovery, as by default), and its MTU is
 * kept as {@link #reportedPathMtu}: usnet has no IPv6 path MTU cache yet, so later datagrams still leave at the
 * route's MTU, where Linux would lower the route's path MTU (and fragment at the source to fit).
 */
public final class Udp6Socket implements AutoCloseable {
    /** {@link #sendTo}: the datagram left. */
    public static final int SENT = 0;
    /** {@link #sendTo}: no route to the destination (ENETUNREACH). */
    public static final int NO_ROUTE = 1;
    /** {@link #sendTo}: no usable source address (EADDRNOTAVAIL), as while addresses are tentative. */
    public static final int NO_SOURCE = 2;
    /** {@link #sendTo}: nothing sent, a pending error reported (and cleared) instead; {@link #lastReportedError}. */
    public static final int PENDING_ERROR = 3;
    /** The smallest MTU IPv6 links have (RFC 8200 §5): a packet too big naming less is taken as this. */
    public static final int IPV6_MIN_MTU = 1280;

    /** The socket's receive callback; the source address as two longs. */
    public interface Receiver {
        void datagram(Udp6Socket s, long srcHi, long srcLo, int srcPort, ByteBuf payload, int off, int len);
    }

    /** Hears a pending error as it is set (sk_error_report), on the namespace thread; {@code errno} as Linux's. */
    public interface ErrorListener {
        void error(Udp6Socket s, int errno);
    }

    private final Netns ns;
    private final Ipv6 inet6;
    private final long localHi;
    private final long localLo;
    private final int localPort;
    private volatile Receiver receiver;
    private volatile ErrorListener errorListener;
    private int hopLimit;
    // connect(): the peer; while unconnected, peerPort is 0.
    private long peerHi;
    private long peerLo;
    private int peerPort;
    // sk_err: the pending error, 0 for none; and the last one taken, for the caller of sendTo.
    private volatile int pendingError;
    private int lastReportedError;
    private volatile int reportedPathMtu;
    private volatile long rxDatagrams;
    private volatile long rxBytes;
    private volatile long txDatagrams;

    Udp6Socket(Ipv6 inet6, Ipv6Addr local, int localPort) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
        this.localHi = local.hi();
        this.localLo = local.lo();
        this.localPort = localPort;
    }

    public int localPort() {
        return localPort;
    }

    public Ipv6Addr localAddr() {
        return new Ipv6Addr(localHi, localLo);
    }

    public void setReceiver(Receiver r) {
        this.receiver = r;
    }

    /** IPV6_UNICAST_HOPS; 0 means the route's device's {@code hop_limit}. */
    public void setHopLimit(int hopLimit) {
        this.hopLimit = hopLimit;
    }

    public long rxDatagrams() {
        return rxDatagrams;
    }

    public long rxBytes() {
        return rxBytes;
    }

    public long txDatagrams() {
        return txDatagrams;
    }

    /** A datagram to {@code dh}/{@code dl} is this socket's: it is bound to any address or to that one. */
    boolean accepts(long dh, long dl) {
        return (localHi == 0 && localLo == 0) || (localHi == dh && localLo == dl);
    }

    /** A datagram from {@code sh}/{@code sl} port {@code sport} is this socket's: it is not connected, or to that peer. */
    boolean acceptsFrom(long sh, long sl, int sport) {
        return peerPort == 0 || (peerHi == sh && peerLo == sl && peerPort == sport);
    }

    /**
     * connect(): datagrams come only from {@code peer} port {@code port} from now on, {@link #send} goes there, and
     * errors about what the socket sends are reported to it.
     */
    public void connect(Ipv6Addr peer, int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("UDP port " + port + " out of range 1..65535");
        }
        peerHi = peer.hi();
        peerLo = peer.lo();
        peerPort = port;
    }

    public boolean isConnected() {
        return peerPort != 0;
    }

    /** send() on a connected socket: {@link #sendTo} its peer. */
    public int send(Device oif, ByteBuf data, int off, int len) {
        if (peerPort == 0) {
            throw new IllegalStateException("UDP socket on port " + localPort + " is not connected (EDESTADDRREQ)");
        }
        return sendTo(peerHi, peerLo, oif, peerPort, data, off, len);
    }

    public void setErrorListener(ErrorListener l) {
        this.errorListener = l;
    }

    /** SO_ERROR: the pending error (an errno), 0 for none, and clears it. */
    public int takeError() {
        int e = pendingError;
        pendingError = 0;
        return e;
    }

    /** The error the last {@link #sendTo} that returned {@link #PENDING_ERROR} reported. */
    public int lastReportedError() {
        return lastReportedError;
    }

    /**
     * The path MTU the last packet too big about this socket's datagrams named (at least {@link #IPV6_MIN_MTU}, never
     * raised by a later one); 0 while none came.
     */
    public int reportedPathMtu() {
        return reportedPathMtu;
    }

    /** udpv6_err for this socket: an ICMPv6 error of {@code type}/{@code code} about a datagram it sent. */
    void icmpError(int type, int code, long info) {
        boolean hard = Icmpv6ErrorConvert.hard(type, code);
        if (type == Icmpv6Packet.PKT_TOOBIG) {
            int mtu = (int) Math.max(IPV6_MIN_MTU, Math.min(info, Integer.MAX_VALUE));
            int before = reportedPathMtu;
            reportedPathMtu = before == 0 ? mtu : Math.min(before, mtu);
            hard = true;
        }
        if (!hard || peerPort == 0) {
            return;
        }
        int errno = Icmpv6ErrorConvert.errno(type, code);
        pendingError = errno;
        ErrorListener l = errorListener;
        if (l != null) {
            l.error(this, errno);
        }
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    void deliver(long sh, long sl, int srcPort, ByteBuf b, int off, int len) {
        rxDatagrams++;
        rxBytes += len;
        Receiver r = receiver;
        if (r != null) {
            r.datagram(this, sh, sl, srcPort, b, off, len);
        }
    }

    /**
     * sendto: copies {@code len} bytes of {@code data} into a new datagram to {@code dh}/{@code dl} port
     * {@code dstPort}, from the bound address or the one RFC 6724 selection gives; a link-local destination needs
     * {@code oif}. The checksum covers the IPv6 pseudo-header, and a computed zero goes out as 0xffff (RFC 8200
     * §8.1: zero means none, which IPv6 does not allow). Returns {@link #SENT} or why nothing left ({@link
     * #PENDING_ERROR}: an earlier datagram's error is reported first).
     */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public int sendTo(long dh, long dl, Device oif, int dstPort, ByteBuf data, int off, int len) {
        if (pendingError != 0) {
            // sock_alloc_send_skb: a pending error is reported (and cleared) before anything is built.
            lastReportedError = takeError();
            return PENDING_ERROR;
        }
        Route6 rt = inet6.output().routeOutput(dh, dl, oif);
        if (rt == null) {
            ns.mib().inc(Mib.Ip6OutNoRoutes);
            return NO_ROUTE;
        }
        long sh = localHi;
        long sl = localLo;
        if (sh == 0 && sl == 0) {
            Inet6Ifaddr a = inet6.addrconf().selectSource(rt.dev() != null ? rt.dev() : ns.loopback(), dh, dl);
            if (a == null) {
                return NO_SOURCE;
            }
            sh = a.address().hi();
            sl = a.address().lo();
        }
        int ulen = Udp6.HEADER_LEN + len;
        Packet p = Ip6Output.allocate(ulen);
        ByteBuf b = p.buf();
        int t = p.transport();
        b.setShort(t, localPort);
        b.setShort(t + 2, dstPort);
        b.setShort(t + 4, ulen);
        b.setShort(t + 6, 0);
        b.setBytes(t + Udp6.HEADER_LEN, data, off, len);
        long sum = Ipv6Packet.pseudoHeaderSum(sh, sl, dh, dl, ulen, Ipv6Packet.NEXTHDR_UDP);
        int csum = Checksum.finish(Checksum.add(b, t, ulen, sum));
        b.setShort(t + 6, csum == 0 ? 0xffff : csum);
        txDatagrams++;
        ns.mib().inc(Mib.Udp6OutDatagrams);
        int hops = hopLimit > 0 ? hopLimit : inet6.icmp().hopLimit(rt);
        return inet6.output().send(p, rt, sh, sl, dh, dl, Ipv6Packet.NEXTHDR_UDP, 0, 0, hops) ? SENT : NO_ROUTE;
    }

    @Override
    public void close() {
        inet6.udp().unbind(this);
    }
}
