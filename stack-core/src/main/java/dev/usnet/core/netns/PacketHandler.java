package dev.usnet.core.netns;

import dev.usnet.core.buf.Packet;

/**
 * A protocol's receive function for the frames of its ethertype (packet_type.func): called on the namespace's
 * thread with the network header set just past the Ethernet header; owns {@code p} from there.
 */
@FunctionalInterface
public interface PacketHandler {
    void rcv(Packet p);
}
