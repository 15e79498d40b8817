package dev.usnet.tcp;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.ipv6.Inet6Ifaddr;
import dev.usnet.core.ipv6.Ip6Output;
import dev.usnet.core.ipv6.Ipv6;
import dev.usnet.core.ipv6.Ipv6Sysctl;
import dev.usnet.core.route.Dst;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;

/**
 * TCP over IPv6 (ipv6_specific): IPv6's 40-byte header, its routes ({@code Fib6}) and path MTU cache, source
 * addresses by RFC 6724 selection, the pseudo-header of source, destination, upper-layer length and next header 6,
 * and {@link Ip6Output} as the way out with the route's device's net.ipv6.conf.*.hop_limit. One per namespace's
 * {@link Tcp}.
 *
 * <p>Differs from Linux: the flow label is 0 (Linux labels a TCP socket's packets from a random per-socket hash
 * under net.ipv6.auto_flowlabels), and a connection to a link-local address is not supported (it needs the scope
 * id a socket address carries).
 */
final class TcpIpv6Ops implements TcpAfOps {
    /** IPV6_MAXPLEN: the largest payload without a jumbogram; the advertised MSS never exceeds it. */
    private static final int IPV6_MAXPLEN = 65_535;
    /** net.ipv6.route.min_adv_mss: the smallest MSS announced (the IPv6 minimum MTU less both headers). */
    private static final int MIN_ADV_MSS = Ipv6Packet.MIN_MTU - Ipv6Packet.HEADER_LEN - TcpSegment.MIN_HEADER_LEN;

    private final NetStack stack;
    private final Ipv6 inet6;
    private final Ip6Output ip;

    TcpIpv6Ops(NetStack stack) {
        this.stack = stack;
        this.inet6 = stack.ipv6();
        this.ip = inet6.output();
    }

    @Override
    public int defaultPeerMss() {
        // tcp_v6_connect and tcp_request_sock_ipv6_ops: IPV6_MIN_MTU less both headers, not IPv4's 536.
        return MIN_ADV_MSS;
    }

    @Override
    public int netHeaderLen() {
        return Ipv6Packet.HEADER_LEN;
    }

    @Override
    public int gsoType() {
        return Packet.GSO_TCPV6;
    }

    @Override
    public Packet allocate(int tcpLen) {
        return Ip6Output.allocate(tcpLen);
    }

    /** The route a connection to {@code dh}/{@code dl} takes (ip6_dst_lookup_flow), or null: unreachable. */
    Route6 routeConnect(long dh, long dl) {
        return ip.routeOutput(dh, dl, null);
    }

    /**
     * The source address a connection over {@code rt} to {@code dh}/{@code dl} gets when not bound to one (RFC 6724
     * selection on the route's device; a destination of our own is its own source), or null: no usable one
     * (EADDRNOTAVAIL), as while the addresses are still tentative.
     */
    Ipv6Addr sourceFor(Route6 rt, Ipv6Addr dst) {
        if (rt.type() == RouteType.LOCAL) {
            return dst;
        }
        Inet6Ifaddr a = inet6.addrconf().selectSource(rt.dev(), dst.hi(), dst.lo());
        return a == null ? null : a.address();
    }

    @Override
    public Route6 routeReply(Packet in) {
        ByteBuf b = in.buf();
        int n = in.network();
        return ip.routeOutput(b.getLong(n + Ipv6Packet.SRC), b.getLong(n + Ipv6Packet.SRC + 8), in.dev());
    }

    @Override
    public void initChild(TcpSock child, Packet in, int lport, int rport) {
        ByteBuf b = in.buf();
        int n = in.network();
        child.setAddresses6(b.getLong(n + Ipv6Packet.DST), b.getLong(n + Ipv6Packet.DST + 8), lport,
                b.getLong(n + Ipv6Packet.SRC), b.getLong(n + Ipv6Packet.SRC + 8), rport);
    }

    @Override
    public int pathMtu(TcpSock sk) {
        return ip.pathMtu((Route6) sk.route, sk.raddrHi, sk.raddrLo);
    }

    @Override
    public int updatePmtu(TcpSock sk, int reportedMtu) {
        return ip.updatePmtu((Route6) sk.route, sk.raddrHi, sk.raddrLo, reportedMtu);
    }

    /** ipv6_default_advmss: the device's MTU less both headers, at least min_adv_mss, at most IPV6_MAXPLEN. */
    @Override
    public int advMss(Dst rt) {
        int mss = Math.max(rt.dev().mtu(), Ipv6Packet.MIN_MTU) - Ipv6Packet.HEADER_LEN - TcpSegment.MIN_HEADER_LEN;
        return Math.min(Math.max(mss, MIN_ADV_MSS), IPV6_MAXPLEN);
    }

    /** tcp_v6_send_check (__tcp_v6_send_check): as IPv4's, over the IPv6 pseudo-header. */
    @Override
    public void sendCheck(TcpSock sk, Packet p) {
        ByteBuf b = p.buf();
        int t = p.transport();
        int l4len = p.start() + p.length() - t;
        long ph = Ipv6Packet.pseudoHeaderSum(sk.laddrHi, sk.laddrLo, sk.raddrHi, sk.raddrLo, l4len,
                Ipv6Packet.NEXTHDR_TCP);
        if (sk.route.dev().txChecksumOffload()) {
            b.setShort(t + TcpSegment.CHECKSUM, ~Checksum.finish(ph) & 0xffff);
            p.setChecksum(ChecksumState.PARTIAL, t, TcpSegment.CHECKSUM);
        } else {
            b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, l4len, ph)));
            p.setChecksum(ChecksumState.NONE, 0, 0);
            stack.cpu().checksummed(l4len);
        }
    }

    /** inet6_csk_xmit: ip6_xmit along the connection's route, traffic class 0. */
    @Override
    public void queueXmit(TcpSock sk, Packet p) {
        Route6 rt = (Route6) sk.route;
        ip.send(p, rt, sk.laddrHi, sk.laddrLo, sk.raddrHi, sk.raddrLo, Ipv6Packet.NEXTHDR_TCP, 0, 0, hopLimit(rt));
    }

    @Override
    public void sendReset(TcpSock sk, long seq, long ack, int flags) {
        Route6 rt = sk.route != null ? (Route6) sk.route : ip.routeOutput(sk.raddrHi, sk.raddrLo, null);
        sendBare(rt, sk.laddrHi, sk.laddrLo, sk.lport, sk.raddrHi, sk.raddrLo, sk.rport, seq, ack, flags);
    }

    /** tcp_v6_send_reset without a socket: from the segment's destination back to its source. */
    @Override
    public void sendReset(Packet in, TcpSegment seg, long seq, long ack, int flags) {
        ByteBuf b = in.buf();
        int n = in.network();
        long sh = b.getLong(n + Ipv6Packet.SRC);
        long sl = b.getLong(n + Ipv6Packet.SRC + 8);
        sendBare(ip.routeOutput(sh, sl, in.dev()), b.getLong(n + Ipv6Packet.DST), b.getLong(n + Ipv6Packet.DST + 8),
                seg.dstPort(), sh, sl, seg.srcPort(), seq, ack, flags);
    }

    /** tcp_v6_send_response for a reset: a header-only segment, checksummed in software. */
    private void sendBare(Route6 rt, long lh, long ll, int lport, long rh, long rl, int rport, long seq, long ack,
                          int flags) {
        if (rt == null) {
            return;
        }
        Packet p = Ip6Output.allocate(TcpSegment.MIN_HEADER_LEN);
        ByteBuf b = p.buf();
        int t = p.transport();
        TcpSegment.writeHeader(b, t, lport, rport, seq, ack, TcpSegment.MIN_HEADER_LEN, flags, 0);
        long ph = Ipv6Packet.pseudoHeaderSum(lh, ll, rh, rl, TcpSegment.MIN_HEADER_LEN, Ipv6Packet.NEXTHDR_TCP);
        b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, TcpSegment.MIN_HEADER_LEN, ph)));
        stack.mib().inc(Mib.TcpOutRsts);
        stack.mib().inc(Mib.TcpOutSegs);
        ip.send(p, rt, lh, ll, rh, rl, Ipv6Packet.NEXTHDR_TCP, 0, 0, hopLimit(rt));
    }

    /** tcp_v6_send_synack for a request that keeps no socket (a SYN cookie's): from the SYN's destination. */
    @Override
    public void sendSynAck(Packet syn, Dst dst, Packet synAck) {
        Route6 rt = (Route6) dst;
        ByteBuf in = syn.buf();
        int n = syn.network();
        long lh = in.getLong(n + Ipv6Packet.DST);
        long ll = in.getLong(n + Ipv6Packet.DST + 8);
        long rh = in.getLong(n + Ipv6Packet.SRC);
        long rl = in.getLong(n + Ipv6Packet.SRC + 8);
        ByteBuf b = synAck.buf();
        int t = synAck.transport();
        int hl = synAck.start() + synAck.length() - t;
        long ph = Ipv6Packet.pseudoHeaderSum(lh, ll, rh, rl, hl, Ipv6Packet.NEXTHDR_TCP);
        b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, hl, ph)));
        stack.mib().inc(Mib.TcpOutSegs);
        ip.send(synAck, rt, lh, ll, rh, rl, Ipv6Packet.NEXTHDR_TCP, 0, 0, hopLimit(rt));
    }

    /** ip6_dst_hoplimit: the route's device's net.ipv6.conf.DEV.hop_limit. */
    private int hopLimit(Route6 rt) {
        Device d = rt.type() == RouteType.LOCAL || rt.dev() == null ? stack.loopback() : rt.dev();
        return (int) stack.conf(d).get(Ipv6Sysctl.HOP_LIMIT);
    }
}
