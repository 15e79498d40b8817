package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Packet;
import io.netty.buffer.ByteBuf;

/** A transport protocol's hooks (struct net_protocol): TCP registers itself here. */
public interface L4Protocol {
    /**
     * A datagram for this host: {@code p.network()} is the IP header, {@code p.transport()} the L4 header.
     * Owns {@code p}.
     */
    void rcv(Packet p);

    /**
     * An ICMP error about a datagram this protocol sent (the err_handler of struct net_protocol, called from
     * icmp_unreach and its kin). {@code quoted} holds the offending datagram as the error quotes it: its IP
     * header at {@code off} and at least the first 8 bytes of its transport header (ICMP checked that), {@code len}
     * bytes in all. {@code info} is what the ICMP type defines: the next-hop MTU for fragmentation needed, the
     * pointer for a parameter problem, the gateway for a redirect, otherwise 0. The buffer is valid only during
     * the call. A protocol that keeps no per-datagram state ignores it, which is the default.
     */
    default void err(int type, int code, int info, ByteBuf quoted, int off, int len) {}
}
