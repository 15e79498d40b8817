package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Packet;

/** A transport protocol's receive hook (struct net_protocol): TCP registers itself here. */
public interface L4Protocol {
    /**
     * A datagram for this host: {@code p.network()} is the IP header, {@code p.transport()} the L4 header.
     * Owns {@code p}.
     */
    void rcv(Packet p);
}
