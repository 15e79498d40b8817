package dev.usnet.core.stats;

/**
 * Why a packet was dropped, named after Linux's {@code enum skb_drop_reason} where one exists.
 * Every drop in usnet is counted under exactly one reason.
 */
public enum DropReason {
    PKT_TOO_SMALL("frame shorter than its headers"),
    PKT_TOO_BIG("frame larger than the receiving device's MTU"),
    MAC_INVALID_SOURCE("source MAC is multicast or zero"),
    OTHERHOST("frame not addressed to this host's MAC"),
    UNHANDLED_PROTO("no handler for this ethertype or protocol"),
    DEV_DOWN("device is down"),
    NO_CARRIER("device has no peer"),
    BACKLOG_FULL("receive backlog full (netdev_max_backlog)"),
    BRIDGE_LINK_LOCAL("IEEE 802.1D link-local group frame not forwarded"),
    BRIDGE_SAME_PORT("destination learned on the ingress port"),
    BRIDGE_NO_PORT("no port to forward to"),
    FDB_FULL("FDB full: source MAC not learned"),
    ARP_MALFORMED("malformed ARP packet"),
    ARP_NOT_FOR_US("ARP request for an address not ours and not proxied"),
    IP_VERSION("IP version is not 4"),
    IP_INHDR("IP header length invalid"),
    IP_CSUM("IP header checksum wrong"),
    IP_TRUNCATED("IP total length exceeds the frame"),
    IP_INVALID_SOURCE("martian source address"),
    IP_INVALID_DEST("martian destination address"),
    IP_NOT_FORWARDING("forwarding disabled (net.ipv4.ip_forward=0)"),
    IP_NOROUTE("no route to destination"),
    IP_TTL_EXPIRED("TTL expired in transit"),
    IP_FRAG_NEEDED("DF set and larger than the next-hop MTU"),
    IP_BROADCAST_FORWARD("broadcast or multicast is not forwarded"),
    IP_OPTIONS("bad IP options"),
    IP_REASM_TIMEOUT("fragment reassembly timed out"),
    IP_REASM_OVERLAP("fragment overlaps or exceeds 64 KiB"),
    IP_REASM_LIMIT("reassembly memory limit reached"),
    ICMP_CSUM("ICMP checksum wrong"),
    ICMP_MALFORMED("malformed ICMP message"),
    UDP_CSUM("UDP checksum wrong"),
    UDP_MALFORMED("UDP length invalid"),
    UDP_NO_SOCKET("no socket on the destination port"),
    TCP_CSUM("TCP checksum wrong"),
    TCP_MALFORMED("TCP header truncated or data offset invalid"),
    TCP_NO_SOCKET("no TCP socket or listener on the destination port"),
    TCP_NOT_HOST("TCP segment to a broadcast or multicast address"),
    TCP_OLD_SEGMENT("TCP timestamp older than the last seen (PAWS)"),
    TCP_OUT_OF_WINDOW("TCP segment outside the receive window"),
    TCP_NO_ACK("TCP segment without ACK in a synchronized state"),
    TCP_INVALID_ACK("TCP ACK for data never sent"),
    TCP_RCVBUF_FULL("TCP receive buffer full"),
    TCP_LISTEN_OVERFLOW("TCP SYN dropped: listen or SYN backlog full"),
    SOCKET_RCVBUF("socket receive queue full"),
    NEIGH_FAILED("neighbour resolution failed"),
    NEIGH_QUEUE_FULL("neighbour resolution queue full (unres_qlen_bytes)"),
    NEIGH_DEAD("neighbour entry removed with packets queued"),
    TX_QUEUE_FULL("transmit queue full"),
    NETEM_LOSS("link emulation: random loss (usnet.netem.<dev>.loss)"),
    NETEM_QUEUE_FULL("link emulation: queue limit reached, tail drop (usnet.netem.<dev>.limit)"),
    NOT_SPECIFIED("not specified");

    private final String description;

    DropReason(String description) {
        this.description = description;
    }

    /** A sentence for users, shown next to the counter. */
    public String description() {
        return description;
    }
}
