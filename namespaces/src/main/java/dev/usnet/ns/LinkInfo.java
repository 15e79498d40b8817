package dev.usnet.ns;

/**
 * One link as an RTM_NEWLINK answer describes it ({@code ip -d link}): the peer of a veth is named by its
 * ifindex and, when it lives in another namespace, by that namespace's nsid as seen from the asker
 * (IFLA_LINK_NETNSID); -1 when the peer is local or absent.
 */
public record LinkInfo(int ifindex, String name, String kind, long mac, int mtu, boolean up, boolean lowerUp,
                       String master, int peerIfindex, int linkNetnsid, long rxPackets, long txPackets) {}
