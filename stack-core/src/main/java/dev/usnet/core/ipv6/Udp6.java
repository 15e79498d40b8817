package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;

/**
 * UDP over IPv6 of one namespace (__udp6_lib_rcv and the IPv6 socket table): the length and the checksum
 * (mandatory over IPv6: a zero checksum is an error) are checked, the datagram goes to the socket bound on its
 * port (and address, when the socket names one; and from its peer, when it is connected), and with no such socket
 * port unreachable goes back. ICMPv6 errors about datagrams it sent go to the socket that sent them ({@link #err}).
 */
public final class Udp6 implements Inet6Protocol {
    static final int HEADER_LEN = 8;
    // Replaced whole on every bind and unbind, never changed in place: until the first bind, the shared empty one.
    private static final IntObjectHashMap<Udp6Socket> NONE = new IntObjectHashMap<>(1);

    private final Netns ns;
    private final Ipv6 inet6;
    private final Ipv6Packet ip = new Ipv6Packet();
    private volatile IntObjectHashMap<Udp6Socket> byPort = NONE;
    private int nextEphemeral = 32768;

    public Udp6(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    /**
     * bind(): {@code addr} {@link Ipv6Addr#ANY} for any local address, {@code port} 0 for an ephemeral port from
     * the range Linux uses (32768–60999).
     */
    public synchronized Udp6Socket bind(Ipv6Addr addr, int port) {
        if (port == 0) {
            for (int i = 0; i < 28232 && byPort.containsKey(nextEphemeral); i++) {
                nextEphemeral = nextEphemeral >= 60999 ? 32768 : nextEphemeral + 1;
            }
            port = nextEphemeral;
            nextEphemeral = nextEphemeral >= 60999 ? 32768 : nextEphemeral + 1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("UDP port " + port + " out of range 1..65535");
        }
        if (byPort.containsKey(port)) {
            throw new IllegalArgumentException("UDP port " + port + " in use over IPv6 in namespace " + ns.name()
                    + " (EADDRINUSE)");
        }
        Udp6Socket s = new Udp6Socket(inet6, addr, port);
        IntObjectHashMap<Udp6Socket> m = new IntObjectHashMap<>();
        m.putAll(byPort);
        m.put(port, s);
        byPort = m;
        return s;
    }

    synchronized void unbind(Udp6Socket s) {
        IntObjectHashMap<Udp6Socket> m = new IntObjectHashMap<>();
        m.putAll(byPort);
        if (m.get(s.localPort()) == s) {
            m.remove(s.localPort());
        }
        byPort = m;
    }

    @Override
    public void rcv(Packet p) {
        ByteBuf b = p.buf();
        int off = p.transport();
        int avail = p.start() + p.length() - off;
        int ulen = avail >= HEADER_LEN ? b.getUnsignedShort(off + 4) : 0;
        if (avail < HEADER_LEN || ulen > avail || ulen < HEADER_LEN) {
            ns.mib().inc(Mib.Udp6InErrors);
            ns.drop(p, DropReason.PKT_TOO_SMALL);
            return;
        }
        long sum = Ipv6Packet.pseudoHeaderSum(b, p.network(), ulen, Ipv6Packet.NEXTHDR_UDP);
        if (b.getUnsignedShort(off + 6) == 0 || Checksum.finish(Checksum.add(b, off, ulen, sum)) != 0) {
            ns.mib().inc(Mib.Udp6InCsumErrors);
            ns.mib().inc(Mib.Udp6InErrors);
            ns.drop(p, DropReason.UDP_CSUM);
            return;
        }
        ip.wrap(b, p.network());
        Udp6Socket s = byPort.get(b.getUnsignedShort(off + 2));
        if (s == null || !s.accepts(ip.dstHi(), ip.dstLo()) || !s.acceptsFrom(ip.srcHi(), ip.srcLo(),
                b.getUnsignedShort(off))) {
            ns.mib().inc(Mib.Udp6NoPorts);
            inet6.icmp().send(p, Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_PORT_UNREACH, 0);
            ns.drop(p, DropReason.UDP_NO_SOCKET);
            return;
        }
        ns.mib().inc(Mib.Udp6InDatagrams);
        s.deliver(ip.srcHi(), ip.srcLo(), b.getUnsignedShort(off), b, off + HEADER_LEN, ulen - HEADER_LEN);
        p.release();
    }

    /**
     * An ICMPv6 error about a datagram we sent (udpv6_err): the socket that sent it is looked up as a datagram from the
     * quoted destination to the quoted source would find it, and hears the error; with no such socket the error is
     * counted as Icmp6InErrors, as Linux does.
     */
    @Override
    public void err(int type, int code, long info, ByteBuf quoted, int off, int transportOff, int len) {
        if (transportOff + HEADER_LEN > off + len) {
            return;
        }
        int srcPort = quoted.getUnsignedShort(transportOff);
        int dstPort = quoted.getUnsignedShort(transportOff + 2);
        Udp6Socket s = byPort.get(srcPort);
        if (s == null || !s.accepts(quoted.getLong(off + Ipv6Packet.SRC), quoted.getLong(off + Ipv6Packet.SRC + 8))
                || !s.acceptsFrom(quoted.getLong(off + Ipv6Packet.DST), quoted.getLong(off + Ipv6Packet.DST + 8), dstPort)) {
            ns.mib().inc(Mib.Icmp6InErrors);
            return;
        }
        s.icmpError(type, code, info);
    }
}
