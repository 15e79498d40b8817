package dev.usnet.tcp;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.IpOutput;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.route.Dst;
import dev.usnet.core.route.Route;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;

/**
 * TCP over IPv4 (ipv4_specific): IPv4's 20-byte header, its routes and path MTU cache, the pseudo-header of
 * source, destination, protocol 6 and length, and {@link IpOutput} as the way out with net.ipv4.ip_default_ttl
 * and DF set. One per namespace's {@link Tcp}.
 */
final class TcpIpv4Ops implements TcpAfOps {
    /** IP_MAX_MTU: the largest IPv4 datagram; the advertised MSS never exceeds what it carries. */
    private static final int IP_MAX_MTU = 65_535;

    private final NetStack stack;
    private final IpOutput ip;

    TcpIpv4Ops(NetStack stack) {
        this.stack = stack;
        this.ip = stack.ipOutput();
    }

    /** TCP_MSS_DEFAULT: RFC 9293's 536 for a peer that announced no MSS. */
    private static final int TCP_MSS_DEFAULT = 536;

    @Override
    public int defaultPeerMss() {
        return TCP_MSS_DEFAULT;
    }

    @Override
    public int netHeaderLen() {
        return Ipv4Packet.MIN_HEADER_LEN;
    }

    @Override
    public int gsoType() {
        return Packet.GSO_TCPV4;
    }

    @Override
    public Packet allocate(int tcpLen) {
        return IpOutput.allocate(tcpLen);
    }

    /** The route a connection to {@code daddr} takes (ip_route_connect), or null: unreachable (ENETUNREACH). */
    Route routeConnect(int daddr) {
        return ip.routeOutput(daddr);
    }

    /** The source address a connection over {@code rt} to {@code daddr} gets when not bound to one. */
    int sourceFor(Route rt, int daddr) {
        return ip.sourceFor(rt, daddr);
    }

    @Override
    public Route routeReply(Packet in) {
        return ip.routeOutput(srcOf(in));
    }

    @Override
    public void initChild(TcpSock child, Packet in, int lport, int rport) {
        child.setAddresses(dstOf(in), lport, srcOf(in), rport);
    }

    @Override
    public int pathMtu(TcpSock sk) {
        return ip.pathMtu((Route) sk.route, sk.raddr);
    }

    @Override
    public int updatePmtu(TcpSock sk, int reportedMtu) {
        return ip.updatePmtu((Route) sk.route, sk.raddr, reportedMtu);
    }

    @Override
    public int advMss(Dst rt) {
        return Math.min(mtuToMss(rt.dev().mtu()), mtuToMss(IP_MAX_MTU));
    }

    @Override
    public void sendCheck(TcpSock sk, Packet p) {
        ByteBuf b = p.buf();
        int t = p.transport();
        int l4len = p.start() + p.length() - t;
        long ph = Checksum.pseudoHeader(sk.laddr, sk.raddr, Ipv4Packet.PROTO_TCP, l4len);
        if (sk.route.dev().txChecksumOffload()) {
            // CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum; the device completes it.
            b.setShort(t + TcpSegment.CHECKSUM, ~Checksum.finish(ph) & 0xffff);
            p.setChecksum(ChecksumState.PARTIAL, t, TcpSegment.CHECKSUM);
        } else {
            b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, l4len, ph)));
            p.setChecksum(ChecksumState.NONE, 0, 0);
            // The software checksum a device without tx-checksumming costs the sender (Linux: csum_partial,
            // or csum_partial_copy_generic folded into the copy from user space): charged by the CPU model.
            stack.cpu().checksummed(l4len);
        }
    }

    @Override
    public void queueXmit(TcpSock sk, Packet p) {
        ip.sendLocal(p, (Route) sk.route, sk.laddr, sk.raddr, Ipv4Packet.PROTO_TCP, 0, defaultTtl(), true);
    }

    @Override
    public void sendReset(TcpSock sk, long seq, long ack, int flags) {
        Route rt = sk.route != null ? (Route) sk.route : ip.routeOutput(sk.raddr);
        sendBare(rt, sk.laddr, sk.lport, sk.raddr, sk.rport, seq, ack, flags);
    }

    @Override
    public void sendReset(Packet in, TcpSegment seg, long seq, long ack, int flags) {
        int raddr = srcOf(in);
        sendBare(ip.routeOutput(raddr), dstOf(in), seg.dstPort(), raddr, seg.srcPort(), seq, ack, flags);
    }

    /** A header-only reset, checksummed in software (it never meets a device's offload decision). */
    private void sendBare(Route rt, int laddr, int lport, int raddr, int rport, long seq, long ack, int flags) {
        if (rt == null) {
            return;
        }
        Packet p = IpOutput.allocate(TcpSegment.MIN_HEADER_LEN);
        ByteBuf b = p.buf();
        int t = p.transport();
        TcpSegment.writeHeader(b, t, lport, rport, seq, ack, TcpSegment.MIN_HEADER_LEN, flags, 0);
        long ph = Checksum.pseudoHeader(laddr, raddr, Ipv4Packet.PROTO_TCP, TcpSegment.MIN_HEADER_LEN);
        b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, TcpSegment.MIN_HEADER_LEN, ph)));
        stack.mib().inc(Mib.TcpOutRsts);
        stack.mib().inc(Mib.TcpOutSegs);
        ip.sendLocal(p, rt, laddr, raddr, Ipv4Packet.PROTO_TCP, 0, defaultTtl(), true);
    }

    @Override
    public void sendSynAck(Packet syn, Dst rt, Packet synAck) {
        int laddr = dstOf(syn);
        int raddr = srcOf(syn);
        ByteBuf b = synAck.buf();
        int t = synAck.transport();
        int hl = synAck.start() + synAck.length() - t;
        long ph = Checksum.pseudoHeader(laddr, raddr, Ipv4Packet.PROTO_TCP, hl);
        b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, hl, ph)));
        stack.mib().inc(Mib.TcpOutSegs);
        ip.sendLocal(synAck, (Route) rt, laddr, raddr, Ipv4Packet.PROTO_TCP, 0, defaultTtl(), true);
    }

    private int defaultTtl() {
        return (int) stack.knobs().get(Ipv4Sysctl.DEFAULT_TTL);
    }

    private static int srcOf(Packet in) {
        return in.buf().getInt(in.network() + Ipv4Packet.SRC);
    }

    private static int dstOf(Packet in) {
        return in.buf().getInt(in.network() + Ipv4Packet.DST);
    }
}
