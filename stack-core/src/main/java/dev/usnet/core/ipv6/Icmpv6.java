package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;

/**
 * ICMPv6 (RFC 4443) as Linux's icmpv6_rcv and icmp6_send: echo replies from the address that was asked (or, for a
 * multicast echo, the one source selection gives), errors quoting the offending packet as far as the reply stays
 * within 1280 bytes, never about an ICMPv6 error, a multicast destination (except packet too big and an
 * unrecognised option) or a source that is not unicast, rate limited per destination by
 * {@code net.ipv6.icmp.ratelimit} (scaled by the route's prefix length). Neighbour discovery messages go to
 * {@link Ndisc}, errors about our datagrams to the transport that sent them. Ping sockets (Linux's ping6 datagram
 * sockets) send the stack's own echo requests and hear the replies by identifier.
 */
public final class Icmpv6 implements Inet6Protocol {
    /** {@link #sendEcho}: the request left. */
    public static final int ECHO_SENT = 0;
    /** {@link #sendEcho}: no route to the destination (ENETUNREACH). */
    public static final int ECHO_NO_ROUTE = 1;
    /**
     * {@link #sendEcho}: no usable source address (EADDRNOTAVAIL), as while the device's addresses are still
     * tentative (duplicate address detection).
     */
    public static final int ECHO_NO_SOURCE = 2;

    /** Receives echo replies for one identifier (an ICMPv6 ping socket). */
    public interface PingListener {
        /**
         * Called on the namespace thread with the replier's address as two longs and the hop limit the reply
         * arrived with; {@code data} is valid only during the call.
         */
        void echoReply(long fromHi, long fromLo, int seq, int hopLimit, ByteBuf data, int dataOff, int dataLen);
    }

    /** An error and what it quotes stay within the minimum MTU. */
    private static final int MAX_QUOTED_REPLY = Ipv6Packet.MIN_MTU;

    private final Netns ns;
    private final Ipv6 inet6;
    private final Icmpv6Packet icmp = new Icmpv6Packet();
    private final Ipv6Packet ip = new Ipv6Packet();
    private final Ipv6Packet inner = new Ipv6Packet();
    private final Inet6Peers peers = new Inet6Peers();
    // Made by the first ping socket (guarded by this).
    private IntObjectHashMap<PingListener> pings;

    public Icmpv6(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /** icmpv6_rcv. Owns {@code p}. */
    @Override
    public void rcv(Packet p) {
        ByteBuf b = p.buf();
        int off = p.transport();
        int len = p.start() + p.length() - off;
        ns.mib().inc(Mib.Icmp6InMsgs);
        DropReason bad = icmp.check(b, p.network(), off, len);
        if (bad != null) {
            ns.mib().inc(Mib.Icmp6InErrors);
            if (bad == DropReason.ICMP_CSUM) {
                ns.mib().inc(Mib.Icmp6InCsumErrors);
            }
            ns.drop(p, bad);
            return;
        }
        int type = icmp.type();
        switch (type) {
            case Icmpv6Packet.ECHO_REQUEST -> {
                ns.mib().inc(Mib.Icmp6InEchos);
                if (ns.knobs().get(Ipv6Sysctl.ICMP_ECHO_IGNORE_ALL) == 0) {
                    echoReply(p, off, len);
                }
                p.release();
            }
            case Icmpv6Packet.ECHO_REPLY -> {
                ns.mib().inc(Mib.Icmp6InEchoReplies);
                PingListener l;
                synchronized (this) {
                    l = pings == null ? null : pings.get(icmp.echoId());
                }
                if (l != null) {
                    ip.wrap(b, p.network());
                    l.echoReply(ip.srcHi(), ip.srcLo(), icmp.echoSeq(), ip.hopLimit(), b,
                            off + Icmpv6Packet.HEADER_LEN, len - Icmpv6Packet.HEADER_LEN);
                }
                p.release();
            }
            case Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.PKT_TOOBIG, Icmpv6Packet.TIME_EXCEED,
                 Icmpv6Packet.PARAMPROB -> {
                ns.mib().inc(switch (type) {
                    case Icmpv6Packet.DEST_UNREACH -> Mib.Icmp6InDestUnreachs;
                    case Icmpv6Packet.PKT_TOOBIG -> Mib.Icmp6InPktTooBigs;
                    case Icmpv6Packet.TIME_EXCEED -> Mib.Icmp6InTimeExcds;
                    default -> Mib.Icmp6InParmProblems;
                });
                deliverError(p, off, len, type);
                p.release();
            }
            case Icmpv6Packet.ROUTER_SOLICITATION, Icmpv6Packet.ROUTER_ADVERTISEMENT,
                 Icmpv6Packet.NEIGHBOUR_SOLICITATION, Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT,
                 Icmpv6Packet.REDIRECT -> inet6.ndisc().rcv(p, off, len, type);
            case Icmpv6Packet.MLD_QUERY, Icmpv6Packet.MLD_REPORT -> inet6.mld().rcv(p, off, len, type);
            default -> p.release();
        }
    }

    /** Opens a ping socket: echo replies with identifier {@code id} go to {@code l}. */
    public synchronized void openPing(int id, PingListener l) {
        if (pings == null) {
            pings = new IntObjectHashMap<>(4);
        }
        pings.put(id & 0xffff, l);
    }

    public synchronized void closePing(int id) {
        if (pings != null) {
            pings.remove(id & 0xffff);
        }
    }

    /**
     * A ping socket's sendto: an echo request to {@code dh}/{@code dl} from the address RFC 6724 selection gives
     * for the route's device. A link-local destination needs {@code oif} (the scope id); {@code hopLimit} 0 means
     * the device's {@code hop_limit}. Returns {@link #ECHO_SENT}, or why nothing left: {@link #ECHO_NO_ROUTE},
     * {@link #ECHO_NO_SOURCE}.
     */
    public int sendEcho(long dh, long dl, Device oif, int id, int seq, ByteBuf payload, int payloadOff,
                            int payloadLen, int hopLimit) {
        Route6 rt = inet6.output().routeOutput(dh, dl, oif);
        if (rt == null) {
            ns.mib().inc(Mib.Ip6OutNoRoutes);
            return ECHO_NO_ROUTE;
        }
        Device out = rt.dev() != null ? rt.dev() : ns.loopback();
        // Pinging one of our own addresses, selection gives that address itself (rule 1).
        Inet6Ifaddr a = inet6.addrconf().selectSource(out, dh, dl);
        if (a == null) {
            return ECHO_NO_SOURCE;
        }
        long sh = a.address().hi();
        long sl = a.address().lo();
        Packet r = Ip6Output.allocate(Icmpv6Packet.HEADER_LEN + payloadLen);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.ECHO_REQUEST);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        b.setShort(t + Icmpv6Packet.REST, id);
        b.setShort(t + Icmpv6Packet.REST + 2, seq);
        if (payloadLen > 0) {
            b.setBytes(t + Icmpv6Packet.HEADER_LEN, payload, payloadOff, payloadLen);
        }
        ns.mib().inc(Mib.Icmp6OutMsgs);
        ns.mib().inc(Mib.Icmp6OutEchos);
        r.setPktType(Packet.PACKET_OUTGOING);
        transmit(r, rt, sh, sl, dh, dl, 0, 0, hopLimit > 0 ? hopLimit : hopLimit(rt));
        return ECHO_SENT;
    }

    /** icmpv6_notify: the quoted packet's transport hears the error. */
    private void deliverError(Packet p, int off, int len, int type) {
        ByteBuf b = p.buf();
        int q = off + Icmpv6Packet.HEADER_LEN;
        int qlen = len - Icmpv6Packet.HEADER_LEN;
        if (qlen < Ipv6Packet.HEADER_LEN + 8) {
            return;
        }
        int nh = b.getUnsignedByte(q + Ipv6Packet.NEXT_HEADER);
        Inet6Protocol l4 = inet6.input().protocol(nh);
        if (l4 != null && l4 != this) {
            l4.err(type, icmp.code(), icmp.restWord(), b, q, q + Ipv6Packet.HEADER_LEN, qlen);
        }
    }

    /** icmpv6_echo_reply: the request's data back, traffic class reflected, flow label not. */
    private void echoReply(Packet req, int off, int len) {
        ip.wrap(req.buf(), req.network());
        long dh = ip.srcHi();
        long dl = ip.srcLo();
        long sh = ip.dstHi();
        long sl = ip.dstLo();
        Device in = req.dev();
        Route6 rt = inet6.output().routeOutput(dh, dl, in);
        if (rt == null) {
            ns.mib().inc(Mib.Ip6OutNoRoutes);
            return;
        }
        if (Ipv6Addr.isMulticast(sh)) {
            Inet6Ifaddr a = inet6.addrconf().selectSource(in, dh, dl);
            if (a == null) {
                return;
            }
            sh = a.address().hi();
            sl = a.address().lo();
        }
        Packet r = Ip6Output.allocate(len);
        ByteBuf b = r.buf();
        int t = r.transport();
        b.setBytes(t, req.buf(), off, len);
        b.setByte(t + Icmpv6Packet.TYPE, Icmpv6Packet.ECHO_REPLY);
        b.setByte(t + Icmpv6Packet.CODE, 0);
        ns.mib().inc(Mib.Icmp6OutMsgs);
        ns.mib().inc(Mib.Icmp6OutEchoReplies);
        // flowlabel_reflect bit 1: the reply carries the request's flow label.
        int flow = (ns.knobs().get(Ipv6Sysctl.FLOWLABEL_REFLECT) & 2) != 0 ? ip.flowLabel() : 0;
        transmit(r, rt, sh, sl, dh, dl, ip.trafficClass(), flow, hopLimit(rt));
    }

    /** Writes the header, the checksum over the pseudo-header, and sends. */
    private void transmit(Packet r, Route6 rt, long sh, long sl, long dh, long dl, int tclass, int flow,
                          int hopLimit) {
        ByteBuf b = r.buf();
        int t = r.transport();
        int len = r.start() + r.length() - t;
        Ipv6Packet.writeHeader(b, r.network(), tclass, flow, len, Ipv6Packet.NEXTHDR_ICMPV6, hopLimit, sh, sl, dh, dl);
        Icmpv6Packet.fillChecksum(b, r.network(), t, len);
        inet6.output().send(r, rt, sh, sl, dh, dl, Ipv6Packet.NEXTHDR_ICMPV6, tclass, flow, hopLimit);
    }

    /** The hop limit of a unicast packet along {@code rt}: its device's {@code hop_limit}. */
    int hopLimit(Route6 rt) {
        Device d = rt.dev() != null ? rt.dev() : ns.loopback();
        return (int) ns.conf(d).get(Ipv6Sysctl.HOP_LIMIT);
    }

    /** icmpv6_param_prob: a parameter problem with {@code pointer} (from the IPv6 header) about {@code p}. */
    public void paramProb(Packet p, int code, int pointer) {
        send(p, Icmpv6Packet.PARAMPROB, code, pointer);
    }

    /**
     * icmp6_send: an error about {@code offending} (not consumed; the caller still owns it). {@code info} is the
     * 32-bit field after the checksum (the MTU, the pointer).
     */
    public void send(Packet offending, int type, int code, long info) {
        ByteBuf ob = offending.buf();
        int net = offending.network();
        inner.wrap(ob, net);
        long osh = inner.srcHi();
        long osl = inner.srcLo();
        long odh = inner.dstHi();
        long odl = inner.dstLo();
        Device in = offending.dev();
        boolean ours = in != null && inet6.input().isLocalOn(in, odh, odl);
        boolean useDst = ours;
        if (Ipv6Addr.isMulticast(odh) || offending.pktType() != Packet.PACKET_HOST) {
            if (type != Icmpv6Packet.PKT_TOOBIG
                    && !(type == Icmpv6Packet.PARAMPROB && code == Icmpv6Packet.CODE_UNK_OPTION
                    && unrecognisedOptionWantsAnswer(ob, net, info))) {
                return;
            }
            useDst = false;
        }
        if ((osh == 0 && osl == 0) || Ipv6Addr.isMulticast(osh)) {
            return;
        }
        if (isIneligible(ob, net, offending.start() + offending.length())) {
            return;
        }
        Device oif = Ipv6Addr.isLinkLocalUnicast(osh) ? in : null;
        Route6 rt = inet6.output().routeOutput(osh, osl, oif);
        if (rt == null) {
            ns.mib().inc(Mib.Icmp6OutErrors);
            return;
        }
        if (!rateAllows(type, rt, osh, osl)) {
            ns.mib().inc(Mib.Icmp6OutRateLimitHost);
            return;
        }
        long sh;
        long sl;
        if (useDst) {
            sh = odh;
            sl = odl;
        } else {
            Inet6Ifaddr a = inet6.addrconf().selectSource(rt.dev(), osh, osl);
            if (a == null) {
                return;
            }
            sh = a.address().hi();
            sl = a.address().lo();
        }
        int avail = offending.start() + offending.length() - net;
        int quote = Math.min(avail, MAX_QUOTED_REPLY - Ipv6Packet.HEADER_LEN - Icmpv6Packet.HEADER_LEN);
        Packet e = Ip6Output.allocate(Icmpv6Packet.HEADER_LEN + quote);
        ByteBuf b = e.buf();
        int t = e.transport();
        b.setByte(t + Icmpv6Packet.TYPE, type);
        b.setByte(t + Icmpv6Packet.CODE, code);
        b.setInt(t + Icmpv6Packet.REST, (int) info);
        b.setBytes(t + Icmpv6Packet.HEADER_LEN, ob, net, quote);
        ns.mib().inc(Mib.Icmp6OutMsgs);
        ns.mib().inc(switch (type) {
            case Icmpv6Packet.DEST_UNREACH -> Mib.Icmp6OutDestUnreachs;
            case Icmpv6Packet.PKT_TOOBIG -> Mib.Icmp6OutPktTooBigs;
            case Icmpv6Packet.TIME_EXCEED -> Mib.Icmp6OutTimeExcds;
            default -> Mib.Icmp6OutParmProblems;
        });
        e.setPktType(Packet.PACKET_OUTGOING);
        transmit(e, rt, sh, sl, osh, osl, 0, 0, hopLimit(rt));
    }

    /** opt_unrec: the option a code-2 parameter problem points at has the "answer even multicast" bits 10. */
    private static boolean unrecognisedOptionWantsAnswer(ByteBuf b, int net, long pointer) {
        return (b.getUnsignedByte(net + (int) pointer) & 0xc0) == 0x80;
    }

    /**
     * is_ineligible: an error is never sent about an ICMPv6 error, nor about an unfragmented ICMPv6 message too short
     * to show its type; the header chain is walked to find the upper layer, and a non-first fragment counts as
     * eligible.
     */
    private static boolean isIneligible(ByteBuf b, int net, int end) {
        int nh = b.getUnsignedByte(net + Ipv6Packet.NEXT_HEADER);
        int off = net + Ipv6Packet.HEADER_LEN;
        int fragField = 0;
        while (true) {
            switch (nh) {
                case Ipv6Packet.NEXTHDR_HOP, Ipv6Packet.NEXTHDR_ROUTING, Ipv6Packet.NEXTHDR_DEST -> {
                    if (off + 2 > end) {
                        return false;
                    }
                    nh = b.getUnsignedByte(off);
                    off += (b.getUnsignedByte(off + 1) + 1) << 3;
                }
                case Ipv6Packet.NEXTHDR_FRAGMENT -> {
                    if (off + 8 > end) {
                        return false;
                    }
                    fragField = b.getUnsignedShort(off + 2);
                    if ((fragField & 0xfff8) != 0) {
                        return false;
                    }
                    nh = b.getUnsignedByte(off);
                    off += 8;
                }
                case Ipv6Packet.NEXTHDR_AUTH -> {
                    if (off + 2 > end) {
                        return false;
                    }
                    nh = b.getUnsignedByte(off);
                    off += (b.getUnsignedByte(off + 1) + 2) << 2;
                }
                case Ipv6Packet.NEXTHDR_ICMPV6 -> {
                    // A fragment cut before its ICMPv6 type is eligible (RFC 8200 §4.5: it gets its parameter
                    // problem); an unfragmented message too short to show one is not.
                    if (off >= end) {
                        return fragField == 0;
                    }
                    return Icmpv6Packet.isError(b.getUnsignedByte(off));
                }
                default -> {
                    return false;
                }
            }
        }
    }

    /**
     * icmpv6_xrlim_allow: errors of the rate-limited types to one destination at most one per
     * {@code net.ipv6.icmp.ratelimit} ms, the timeout halved per 32 bits the route's prefix is shorter than /128;
     * nothing through the loopback is limited.
     */
    private boolean rateAllows(int type, Route6 rt, long dh, long dl) {
        if (type == Icmpv6Packet.PKT_TOOBIG || type >= 128) {
            return true;
        }
        Device d = rt.dev();
        if (d == null || d instanceof Loopback) {
            return true;
        }
        long ms = ns.knobs().get(Ipv6Sysctl.ICMP_RATELIMIT);
        if (ms == 0) {
            return true;
        }
        int hz = (int) ns.knobs().get(NetCoreSysctl.HZ);
        long tmo = ms * hz / 1000;
        if (rt.prefixLen() < 128) {
            tmo >>= (128 - rt.prefixLen()) >> 5;
        }
        return peers.allow(dh, dl, ns.jiffies(), hz, tmo);
    }
}
