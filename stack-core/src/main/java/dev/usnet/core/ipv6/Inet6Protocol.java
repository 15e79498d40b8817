package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import io.netty.buffer.ByteBuf;

/** A transport protocol's hooks over IPv6 (struct inet6_protocol): ICMPv6 and UDP now, TCP when it registers. */
public interface Inet6Protocol {
    /**
     * A datagram for this host: {@code p.network()} is the IPv6 header, {@code p.transport()} the header of this
     * protocol, after every extension header. Owns {@code p}.
     */
    void rcv(Packet p);

    /**
     * An ICMPv6 error about a datagram this protocol sent (err_handler): {@code quoted} holds the offending datagram
     * from its IPv6 header at {@code off}, {@code len} bytes; {@code transportOff} is its header of this protocol.
     * {@code info} is the MTU of a packet too big, the pointer of a parameter problem, otherwise 0. Valid only during
     * the call.
     */
    default void err(int type, int code, long info, ByteBuf quoted, int off, int transportOff, int len) {}
}
