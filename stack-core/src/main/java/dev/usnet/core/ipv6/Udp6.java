package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;

/**
 * UDP over IPv6 before any socket can bind (__udp6_lib_rcv with an empty socket table): the length and the
 * checksum (mandatory over IPv6: a zero checksum is an error) are checked, then, with no socket to take it, port
 * unreachable goes back. A UDP that keeps sockets registers itself for next header 17 in its place.
 */
public final class Udp6 implements Inet6Protocol {
    private static final int HEADER_LEN = 8;

    private final Netns ns;
    private final Ipv6 inet6;

    public Udp6(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
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
        ns.mib().inc(Mib.Udp6NoPorts);
        inet6.icmp().send(p, Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_PORT_UNREACH, 0);
        ns.drop(p, DropReason.UDP_NO_SOCKET);
    }
}
