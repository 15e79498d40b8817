package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv6.Inet6Protocol;
import io.netty.buffer.ByteBuf;

/**
 * TCP's entry in IPv6's protocol table under next header 6 (tcpv6_protocol): segments for this host go to
 * {@link Tcp#rcv6} (tcp_v6_rcv), ICMPv6 errors quoting a segment of ours to {@link Tcp#err6} (tcp_v6_err). The
 * same {@link Tcp} serves both families; IPv4's entry is the {@code Tcp} itself.
 */
final class TcpV6Protocol implements Inet6Protocol {
    private final Tcp tcp;

    TcpV6Protocol(Tcp tcp) {
        this.tcp = tcp;
    }

    @Override
    public void rcv(Packet p) {
        tcp.rcv6(p);
    }

    @Override
    public void err(int type, int code, long info, ByteBuf quoted, int off, int transportOff, int len) {
        tcp.err6(type, code, info, quoted, off, transportOff, len);
    }
}
