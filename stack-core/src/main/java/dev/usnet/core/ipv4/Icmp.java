package dev.usnet.core.ipv4;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.netns.NetCoreSysctl;
import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;

/**
 * ICMP (RFC 792) as Linux does it: echo replies from the address that was pinged, errors (TOS 0xc0,
 * TTL ip_default_ttl, quoting the offending datagram up to 576 bytes in all) never about ICMP errors,
 * non-first fragments, broadcasts or multicasts, rate limited per icmp_ratelimit/icmp_ratemask and
 * icmp_msgs_per_sec; plus ping sockets for the stack's own echo requests.
 */
public final class Icmp {
    /** Receives echo replies for one identifier (a ping socket). */
    public interface PingListener {
        /** Called on the namespace thread; {@code data} is valid only during the call. */
        void echoReply(int from, int seq, ByteBuf data, int dataOff, int dataLen);
    }

    /** Receives ICMP errors about datagrams this namespace sent (the socket error queue). */
    public interface ErrorListener {
        void icmpError(int type, int code, int reporter, ByteBuf quoted, int quotedOff, int quotedLen);
    }

    private static final int MAX_ERROR_LEN = 576;
    /** The highest destination-unreachable code Linux knows (NR_ICMP_UNREACH: 15, precedence cutoff). */
    private static final int NR_ICMP_UNREACH = 15;

    private final Netns ns;
    private final Ipv4 inet;
    private final IcmpPacket icmp = new IcmpPacket();
    private final Ipv4Packet ip = new Ipv4Packet();
    private final Ipv4Packet inner = new Ipv4Packet();
    private final InetPeers peers = new InetPeers();
    // Made by the first ping socket (guarded by this).
    private IntObjectHashMap<PingListener> pings;
    private final byte[] echoedOptions = new byte[40];
    private volatile ErrorListener errorListener;

    public Icmp(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
    }

    public synchronized void openPing(int id, PingListener l) {
        if (pings == null) {
            pings = new IntObjectHashMap<>(4);
        }
        pings.put(spread(id), l);
    }

    public synchronized void closePing(int id) {
        if (pings != null) {
            pings.remove(spread(id));
        }
    }

    public void setErrorListener(ErrorListener l) {
        this.errorListener = l;
    }

    /** icmp_rcv. Owns {@code p}. */
    public void rcv(Packet p) {
        ip.wrap(p.buf(), p.network());
        int off = p.transport();
        int len = ip.totalLength() - ip.headerLength();
        ns.mib().inc(Mib.IcmpInMsgs);
        DropReason bad = icmp.check(p.buf(), off, len);
        if (bad != null) {
            ns.mib().inc(Mib.IcmpInErrors);
            if (bad == DropReason.ICMP_CSUM) {
                ns.mib().inc(Mib.IcmpInCsumErrors);
            }
            ns.drop(p, bad);
            return;
        }
        int type = icmp.type();
        boolean bcast = p.pktType() != Packet.PACKET_HOST || !inet.devinet().isLocal(ip.dst());
        switch (type) {
            case IcmpPacket.ECHO -> {
                ns.mib().inc(Mib.IcmpInEchos);
                if (ns.knobs().get(IcmpSysctl.ECHO_IGNORE_ALL) == 0
                        && !(bcast && ns.knobs().get(IcmpSysctl.ECHO_IGNORE_BROADCASTS) != 0)) {
                    echoReply(p, off, len, bcast);
                }
            }
            case IcmpPacket.ECHO_REPLY -> {
                ns.mib().inc(Mib.IcmpInEchoReps);
                PingListener l;
                synchronized (this) {
                    l = pings == null ? null : pings.get(spread(icmp.echoId()));
                }
                if (l != null) {
                    l.echoReply(ip.src(), icmp.echoSeq(), p.buf(), off + IcmpPacket.HEADER_LEN, len - IcmpPacket.HEADER_LEN);
                }
            }
            case IcmpPacket.DEST_UNREACH, IcmpPacket.TIME_EXCEEDED, IcmpPacket.PARAMETER_PROB, IcmpPacket.REDIRECT,
                 IcmpPacket.SOURCE_QUENCH -> {
                ns.mib().inc(type == IcmpPacket.DEST_UNREACH ? Mib.IcmpInDestUnreachs
                        : type == IcmpPacket.TIME_EXCEEDED ? Mib.IcmpInTimeExcds
                        : type == IcmpPacket.REDIRECT ? Mib.IcmpInRedirects : Mib.IcmpInErrors);
                ErrorListener el = errorListener;
                if (el != null && len >= IcmpPacket.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN) {
                    el.icmpError(type, icmp.code(), ip.src(), p.buf(), off + IcmpPacket.HEADER_LEN, len - IcmpPacket.HEADER_LEN);
                }
                if (bcast) {
                    // icmp_rcv: an error sent to a broadcast or multicast address is nobody's to hear.
                    ns.mib().inc(Mib.IcmpInErrors);
                } else {
                    deliverError(p, off, len, type);
                }
            }
            default -> { }
        }
        p.release();
    }

    /**
     * icmp_unreach, icmp_redirect and icmp_socket_deliver: an error quoting a datagram this namespace sent goes to
     * the transport that sent it, with the type's {@code info} (next-hop MTU, parameter pointer, gateway). Source
     * quench is deprecated (RFC 6633) and, as in Linux, heard by nobody; a destination-unreachable code above 15
     * is unknown and ignored. A quote too short to hold the quoted IP header and 8 bytes of its transport header
     * is an error (IcmpInErrors).
     */
    private void deliverError(Packet p, int off, int len, int type) {
        int code = icmp.code();
        ByteBuf b = p.buf();
        int rest = b.getInt(off + IcmpPacket.REST);
        int info;
        switch (type) {
            case IcmpPacket.DEST_UNREACH -> {
                if (code > NR_ICMP_UNREACH) {
                    return;
                }
                info = code == IcmpPacket.CODE_FRAG_NEEDED ? rest & 0xffff : 0;
            }
            case IcmpPacket.PARAMETER_PROB -> info = rest >>> 24;
            case IcmpPacket.REDIRECT -> info = rest;
            case IcmpPacket.TIME_EXCEEDED -> info = 0;
            default -> {
                return;
            }
        }
        int q = off + IcmpPacket.HEADER_LEN;
        int qlen = len - IcmpPacket.HEADER_LEN;
        if (qlen < Ipv4Packet.MIN_HEADER_LEN) {
            ns.mib().inc(Mib.IcmpInErrors);
            return;
        }
        int ihl = (b.getUnsignedByte(q) & 0x0f) * 4;
        if (ihl < Ipv4Packet.MIN_HEADER_LEN || qlen < ihl + 8) {
            ns.mib().inc(Mib.IcmpInErrors);
            return;
        }
        L4Protocol l4 = inet.ipInput().protocol(b.getUnsignedByte(q + Ipv4Packet.PROTOCOL));
        if (l4 != null) {
            l4.err(type, code, info, b, q, qlen);
        }
    }

    private void echoReply(Packet req, int off, int len, boolean bcast) {
        int dst = ip.src();
        int src = bcast ? inet.devinet().selectSource(req.dev(), dst) : ip.dst();
        Route rt = inet.ipOutput().routeOutput(dst);
        if (rt == null) {
            ns.mib().inc(Mib.IpOutNoRoutes);
            return;
        }
        int echoed = echoOptions(req);
        int optLen = echoed & 0xff;
        Packet r = IpOutput.allocate(optLen, len);
        ByteBuf b = r.buf();
        int t = r.transport();
        if (optLen > 0) {
            b.setBytes(r.network() + Ipv4Packet.MIN_HEADER_LEN, echoedOptions, 0, optLen);
            IpOptions.build(b, r.network(), echoed, src, ns.msSinceMidnight());
        }
        b.setBytes(t, req.buf(), off, len);
        b.setByte(t + IcmpPacket.TYPE, IcmpPacket.ECHO_REPLY);
        b.setByte(t + IcmpPacket.CODE, 0);
        b.setShort(t + IcmpPacket.CHECKSUM, 0);
        b.setShort(t + IcmpPacket.CHECKSUM, Checksum.compute(b, t, len));
        ns.mib().inc(Mib.IcmpOutMsgs);
        ns.mib().inc(Mib.IcmpOutEchoReps);
        inet.ipOutput().sendLocal(r, rt, src, dst, Ipv4Packet.PROTO_ICMP, ip.tos(), (int) ns.knobs().get(Ipv4Sysctl.DEFAULT_TTL), false);
    }

    /** Sends an echo request from this namespace (a ping socket's sendto). Returns false without a route. */
    public boolean sendEcho(int dst, int id, int seq, ByteBuf payload, int payloadOff, int payloadLen, int ttl) {
        Route rt = inet.ipOutput().routeOutput(dst);
        if (rt == null) {
            ns.mib().inc(Mib.IpOutNoRoutes);
            return false;
        }
        Packet r = IpOutput.allocate(IcmpPacket.HEADER_LEN + payloadLen);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + IcmpPacket.TYPE, IcmpPacket.ECHO);
        b.setByte(t + IcmpPacket.CODE, 0);
        b.setShort(t + IcmpPacket.CHECKSUM, 0);
        b.setShort(t + IcmpPacket.REST, id);
        b.setShort(t + IcmpPacket.REST + 2, seq);
        if (payloadLen > 0) {
            b.setBytes(t + IcmpPacket.HEADER_LEN, payload, payloadOff, payloadLen);
        }
        b.setShort(t + IcmpPacket.CHECKSUM, Checksum.compute(b, t, IcmpPacket.HEADER_LEN + payloadLen));
        ns.mib().inc(Mib.IcmpOutMsgs);
        ns.mib().inc(Mib.IcmpOutEchos);
        return inet.ipOutput().sendLocal(r, rt, inet.ipOutput().sourceFor(rt, dst), dst, Ipv4Packet.PROTO_ICMP, 0,
                ttl > 0 ? ttl : (int) ns.knobs().get(Ipv4Sysctl.DEFAULT_TTL), false);
    }

    /** ipv4_link_failure for a packet that waited on a neighbour that never answered. */
    public void sendHostUnreachableForQueued(Packet p) {
        send(p, IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_HOST_UNREACH, 0);
    }

    /** ip_rt_send_redirect: a host redirect to {@code gateway}, rate limited per destination. */
    public void sendRedirect(Packet p, int gateway) {
        ip.wrap(p.buf(), p.network());
        if (!peers.redirectAllow(ip.src(), ns.jiffies(), (int) ns.knobs().get(NetCoreSysctl.HZ))) {
            return;
        }
        send(p, IcmpPacket.REDIRECT, IcmpPacket.CODE_REDIR_HOST, gateway);
    }

    /**
     * ip_error: a routing failure (no route, unreachable or prohibit route) answered with destination
     * unreachable {@code code}, at most one per second per source with bursts of five, from the same peer
     * state the ICMP limits use.
     */
    public void sendRouteError(Packet p, int code) {
        ip.wrap(p.buf(), p.network());
        if (!peers.ipErrorAllow(ip.src(), ns.jiffies(), (int) ns.knobs().get(NetCoreSysctl.HZ))) {
            return;
        }
        send(p, IcmpPacket.DEST_UNREACH, code, 0);
    }

    /**
     * __icmp_send: an ICMP error about {@code offending} (not consumed; the caller still owns it). {@code info}
     * is the 32-bit field after the checksum (next-hop MTU, gateway, or pointer << 24).
     */
    public void send(Packet offending, int type, int code, int info) {
        ByteBuf ob = offending.buf();
        int ipOff = offending.network();
        inner.wrap(ob, ipOff);
        int osrc = inner.src();
        int odst = inner.dst();
        if (offending.pktType() != Packet.PACKET_HOST && offending.pktType() != Packet.PACKET_OUTGOING
                && !(offending.dev() instanceof Loopback)) {
            return;
        }
        if (Ipv4Addr.isMulticast(odst) || inet.devinet().isBroadcast(odst)) {
            return;
        }
        if ((inner.fragField() & Ipv4Packet.OFFSET_MASK) != 0) {
            return;
        }
        if (Ipv4Addr.isZeroNet(osrc) || Ipv4Addr.isMulticast(osrc) || Ipv4Addr.isLimitedBroadcast(osrc)) {
            return;
        }
        if (IcmpPacket.isError(type) && inner.protocol() == Ipv4Packet.PROTO_ICMP) {
            int innerLen = inner.totalLength() - inner.headerLength();
            if (innerLen < 1) {
                return;
            }
            int innerType = ob.getUnsignedByte(ipOff + inner.headerLength());
            if (!IcmpPacket.isKnown(innerType) || IcmpPacket.isError(innerType)) {
                return;
            }
        }
        Route rt = inet.ipOutput().routeOutput(osrc);
        if (rt == null) {
            ns.mib().inc(Mib.IcmpOutErrors);
            return;
        }
        if (!rateAllows(type, code, osrc, rt)) {
            return;
        }
        int saddr = inet.devinet().isLocal(odst) ? odst : inet.ipOutput().sourceFor(rt, osrc);
        int tos = IcmpPacket.isError(type) ? ((inner.tos() & 0x1e) | 0xc0) : inner.tos();
        int echoed = echoOptions(offending);
        int optLen = echoed & 0xff;
        int room = Math.min(MAX_ERROR_LEN, rt.dev().mtu()) - Ipv4Packet.MIN_HEADER_LEN - optLen - IcmpPacket.HEADER_LEN;
        int avail = offending.start() + offending.length() - ipOff;
        int quote = Math.min(avail, room);
        Packet e = IpOutput.allocate(optLen, IcmpPacket.HEADER_LEN + quote);
        ByteBuf b = e.buf();
        int t = e.transport();
        if (optLen > 0) {
            b.setBytes(e.network() + Ipv4Packet.MIN_HEADER_LEN, echoedOptions, 0, optLen);
            IpOptions.build(b, e.network(), echoed, saddr, ns.msSinceMidnight());
        }
        b.setByte(t + IcmpPacket.TYPE, type);
        b.setByte(t + IcmpPacket.CODE, code);
        b.setShort(t + IcmpPacket.CHECKSUM, 0);
        b.setInt(t + IcmpPacket.REST, info);
        b.setBytes(t + IcmpPacket.HEADER_LEN, ob, ipOff, quote);
        b.setShort(t + IcmpPacket.CHECKSUM, Checksum.compute(b, t, IcmpPacket.HEADER_LEN + quote));
        ns.mib().inc(Mib.IcmpOutMsgs);
        switch (type) {
            case IcmpPacket.DEST_UNREACH -> ns.mib().inc(Mib.IcmpOutDestUnreachs);
            case IcmpPacket.TIME_EXCEEDED -> ns.mib().inc(Mib.IcmpOutTimeExcds);
            case IcmpPacket.REDIRECT -> ns.mib().inc(Mib.IcmpOutRedirects);
            default -> { }
        }
        e.setPktType(Packet.PACKET_OUTGOING);
        if (IcmpPacket.isError(type) && offending.nfct() != null) {
            // nf_ct_attach (icmp_glue_bits): the error belongs to the offending packet's connection, RELATED and
            // travelling against it (RELATED_REPLY about an original-direction packet). Connection tracking leaves it
            // so, and NAT translates it as an error about that connection (a redirect about a connection NAT has not
            // finished binding, or has NATed, goes nowhere).
            e.setNfct(offending.nfct(), IpConntrackInfo.direction(offending.ctinfo()) == 0
                    ? IpConntrackInfo.RELATED_REPLY : IpConntrackInfo.RELATED);
        }
        inet.ipOutput().sendLocal(e, rt, saddr, osrc, Ipv4Packet.PROTO_ICMP, tos, (int) ns.knobs().get(Ipv4Sysctl.DEFAULT_TTL), false);
    }

    /** ip_options_echo of the packet's compiled options into {@link #echoedOptions}; see IpOptions.echo. */
    private int echoOptions(Packet p) {
        if (p.optRr() == 0 && p.optTs() == 0) {
            return 0;
        }
        return IpOptions.echo(p, p.buf(), p.network(), echoedOptions, inet.devinet()::isLocal);
    }

    /** icmpv4_xrlim_allow + icmp_global_allow. */
    private boolean rateAllows(int type, int code, int dst, Route rt) {
        if (type > 18) {
            return true;
        }
        if (type == IcmpPacket.DEST_UNREACH && code == IcmpPacket.CODE_FRAG_NEEDED) {
            return true;
        }
        if (rt.dev() instanceof Loopback) {
            return true;
        }
        if (((1 << type) & ns.knobs().get(IcmpSysctl.RATEMASK)) == 0) {
            return true;
        }
        int hz = (int) ns.knobs().get(NetCoreSysctl.HZ);
        if (!peers.globalAllow(ns.jiffies(), hz, (int) ns.knobs().get(IcmpSysctl.MSGS_PER_SEC), (int) ns.knobs().get(IcmpSysctl.MSGS_BURST))) {
            ns.mib().inc(Mib.IcmpOutRateLimitGlobal);
            return false;
        }
        long timeoutJ = ns.knobs().get(IcmpSysctl.RATELIMIT) * hz / 1000;
        if (!peers.xrlimAllow(dst, ns.jiffies(), hz, timeoutJ)) {
            ns.mib().inc(Mib.IcmpOutRateLimitHost);
            return false;
        }
        peers.globalConsume();
        return true;
    }
}
