package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;

/**
 * A UDP socket bound on IPv6 in one namespace: a minimal sendto/recvfrom API. Received datagrams are handed to the
 * receiver on the namespace thread (the payload is valid only during the call).
 */
public final class Udp6Socket implements AutoCloseable {
    /** {@link #sendTo}: the datagram left. */
    public static final int SENT = 0;
    /** {@link #sendTo}: no route to the destination (ENETUNREACH). */
    public static final int NO_ROUTE = 1;
    /** {@link #sendTo}: no usable source address (EADDRNOTAVAIL), as while addresses are tentative. */
    public static final int NO_SOURCE = 2;

    /** The socket's receive callback; the source address as two longs. */
    public interface Receiver {
        void datagram(Udp6Socket s, long srcHi, long srcLo, int srcPort, ByteBuf payload, int off, int len);
    }

    private final Netns ns;
    private final Ipv6 inet6;
    private final long localHi;
    private final long localLo;
    private final int localPort;
    private volatile Receiver receiver;
    private int hopLimit;
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
     * §8.1: zero means none, which IPv6 does not allow). Returns {@link #SENT} or why nothing left.
     */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public int sendTo(long dh, long dl, Device oif, int dstPort, ByteBuf data, int off, int len) {
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
