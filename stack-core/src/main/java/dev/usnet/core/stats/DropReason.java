package dev.usnet.core.stats;

/**
 * Why a packet was dropped, named after Linux's {@code enum skb_drop_reason} where one exists.
 * Every drop in usnet is counted under exactly one reason.
 */
public enum DropReason {
    PKT_TOO_SMALL("frame shorter than the Ethernet, ARP, IP or TCP header it claims to carry (Linux: PKT_TOO_SMALL)"),
    PKT_TOO_BIG("frame longer than the receiving end's MTU, as veth's is_skb_forwardable check refuses it; counted as "
            + "the peer's rx dropped (TAP without vnet_hdr: a GSO super-frame it cannot take)"),
    MAC_INVALID_SOURCE("a bridge port received a frame whose source MAC is multicast or zero; bridges never forward "
            + "those (Linux: MAC_INVALID_SOURCE)"),
    OTHERHOST("frame addressed to another host's MAC, seen because it was flooded or the device is promiscuous (Linux: "
            + "PACKET_OTHERHOST, OTHERHOST)"),
    UNHANDLED_PROTO("no handler for the frame's ethertype or the IP protocol number (IpInUnknownProtos for IP)"),
    DEV_DOWN("the device, or the bridge port, was down; or link emulation still held the frame when its device went "
            + "down, moved or was deleted (the qdisc purged)"),
    NO_CARRIER("a veth end sent with its peer gone: no carrier; counted as tx dropped"),
    BACKLOG_FULL("the namespace's receive backlog was full (net.core.netdev_max_backlog, default 1000; Linux counts it "
            + "in /proc/net/softnet_stat's dropped column); counted as rx dropped"),
    BRIDGE_LINK_LOCAL("frame to an IEEE 802.1D link-local group 01:80:c2:00:00:0X (STP, PAUSE, LLDP ...) that the "
            + "bridge's group_fwd_mask does not forward"),
    BRIDGE_SAME_PORT("the bridge's FDB places the destination behind the port the frame came in on, so it is not sent "
            + "back out (no hairpin)"),
    BRIDGE_NO_PORT("the bridge had no port to send the frame out of: the learned port or every flood candidate was "
            + "down or not forwarding"),
    BRIDGE_MCAST_INVALID("multicast IPv6 frame that a snooping bridge found broken: its IPv6 header does not fit the "
            + "frame, or an MLD message with a bad checksum, too short, or a query from a non-link-local source"),
    FDB_FULL("the bridge's FDB held fdb_max_learned entries, so the source MAC was not learned (the frame itself was "
            + "still forwarded)"),
    ARP_MALFORMED("ARP packet with a wrong hardware or protocol type or address length (arp_rcv's checks)"),
    ARP_PROXY_QUEUE_FULL("an ARP request proxy ARP would answer found proxy_qlen requests already waiting out their "
            + "random proxy_delay (pneigh_enqueue)"),
    IP_VERSION("IP header version is not 4 (IpInHdrErrors)"),
    IP_INHDR("IP header length below 20 bytes or beyond the packet (IpInHdrErrors; Linux: IP_INHDR)"),
    IP_CSUM("IP header checksum wrong (IpInHdrErrors, IpExtInCsumErrors; Linux: IP_CSUM)"),
    IP_TRUNCATED("IP total length longer than the frame that carried it (IpExtInTruncatedPkts)"),
    IP_INVALID_SOURCE("martian source: multicast, broadcast, 0.0.0.0/8, loopback from outside, or one of our own "
            + "addresses arriving from outside (ip_route_input's martian check)"),
    IP_INVALID_DEST("martian destination: 0.0.0.0/8, or 127.0.0.0/8 arriving on a device other than lo"),
    IP_NOT_FORWARDING("packet for another host arrived but forwarding is off (net.ipv4.ip_forward=0 or "
            + "conf.<dev>.forwarding=0; IpInAddrErrors)"),
    IP_NOROUTE("no route to the destination, or a blackhole/unreachable/prohibit route; forwarded packets get an ICMP "
            + "unreachable (IpOutNoRoutes, IpExtInNoRoutes; ENETUNREACH for local senders)"),
    IP_TTL_EXPIRED("TTL reached 0 while forwarding; an ICMP time exceeded went back (IcmpOutTimeExcds)"),
    IP_FRAG_NEEDED("DF set and longer than the next hop's MTU; an ICMP fragmentation needed went back (IpFragFails)"),
    IP_BROADCAST_FORWARD("multicast or broadcast destination: never forwarded, and no group joined here "
            + "(IpExtInMcastPkts)"),
    IP_OPTIONS("bad or source-routing IP options; an ICMP parameter problem went back for bad ones (IpInHdrErrors)"),
    IP_REASM_TIMEOUT("not every fragment of a datagram arrived within net.ipv4.ipfrag_time (IpReasmTimeout, "
            + "IpReasmFails)"),
    IP_REASM_OVERLAP("fragment overlaps another, is empty, or would make the datagram longer than 64 KiB "
            + "(IpReasmFails)"),
    IP_REASM_LIMIT("reassembly memory above net.ipv4.ipfrag_high_thresh (IpReasmFails)"),
    ICMP_CSUM("ICMP checksum wrong (IcmpInCsumErrors, IcmpInErrors)"),
    ICMP_MALFORMED("ICMP message shorter than its header (IcmpInErrors)"),
    UDP_CSUM("UDP checksum wrong (UdpInCsumErrors, UdpInErrors)"),
    UDP_MALFORMED("UDP length field below 8 or beyond the IP payload (UdpInErrors)"),
    UDP_NO_SOCKET("no socket bound to the destination UDP port; an ICMP port unreachable went back (UdpNoPorts; Linux: "
            + "NO_SOCKET)"),
    TCP_CSUM("TCP checksum wrong (TcpInCsumErrors, TcpInErrs)"),
    TCP_MALFORMED("TCP header truncated or its data offset invalid (TcpInErrs)"),
    TCP_NO_SOCKET("no connection and no listener on the TCP port; answered with a reset unless it was one (TcpOutRsts; "
            + "Linux: NO_SOCKET)"),
    TCP_NOT_HOST("TCP segment to a broadcast or multicast address"),
    TCP_OLD_SEGMENT("TCP timestamp older than the last one seen: an old duplicate, rejected by PAWS (TcpExtPAWSEstab)"),
    TCP_OUT_OF_WINDOW("TCP segment outside the receive window (or data after the peer's FIN); answered with a "
            + "duplicate ACK (Linux: TCP_INVALID_SEQUENCE)"),
    TCP_NO_ACK("TCP segment without the ACK flag in a synchronized state, or an unexpected SYN-SENT answer (Linux: "
            + "TCP_FLAGS)"),
    TCP_INVALID_ACK("TCP ACK for data never sent (Linux: TCP_ACK_UNSENT_DATA)"),
    TCP_RCVBUF_FULL("TCP receive buffer full (SO_RCVBUF / net.ipv4.tcp_rmem): the application did not read and the "
            + "peer ignored the window (TcpExtTCPRcvQDrop)"),
    TCP_OLD_DATA("TCP segment carrying only data already received (below rcv_nxt): a retransmission the receiver did "
            + "not need; answered at once with a D-SACK (TcpExtDelayedACKLost, TcpExtTCPDSACKOldSent; Linux: "
            + "TCP_OLD_DATA)"),
    TCP_OFOMERGE("TCP out-of-order segment whose data the out-of-order queue already holds: a duplicate; answered "
            + "with a D-SACK (TcpExtTCPOFOMerge, TcpExtTCPDSACKOfoSent; Linux: TCP_OFOMERGE)"),
    TCP_OFO_QUEUE_PRUNE("TCP out-of-order data thrown away from the highest sequence down because received data "
            + "exceeded the receive buffer (SO_RCVBUF / net.ipv4.tcp_rmem); the sender must resend it (TcpExtOfoPruned; "
            + "Linux: TCP_OFO_QUEUE_PRUNE)"),
    TCP_LISTEN_OVERFLOW("SYN or handshake ACK dropped: the listener's accept queue (listen backlog, capped by "
            + "net.core.somaxconn) was full (TcpExtListenOverflows, TcpExtListenDrops; Linux: TCP_LISTEN_OVERFLOW)"),
    TCP_SYN_QUEUE_FULL("SYN dropped: the listener's SYN queue held more than its backlog and SYN cookies are off "
            + "(net.ipv4.tcp_syncookies 0), or its last quarter of tcp_max_syn_backlog is kept for proven peers "
            + "(TcpExtTCPReqQFullDrop, TcpExtListenDrops)"),
    SOCKET_RCVBUF("socket receive queue full (SO_RCVBUF; UdpRcvbufErrors)"),
    NEIGH_FAILED("ARP got no answer to its solicitations (mcast_solicit, default 3, retrans_time_ms apart, default "
            + "1 s): what waited for that neighbour is dropped, forwarded packets with an ICMP host unreachable "
            + "(ip neigh: FAILED)"),
    NEIGH_CREATEFAIL("no neighbour entry could be made, for a packet's next hop or for the sender of an ARP request "
            + "to us (which then goes unanswered, so that host cannot reach this namespace): the table held gc_thresh3 "
            + "entries and its forced GC found none failed or 5 s old to remove; raise "
            + "net.ipv4.neigh.default.gc_thresh3 (and gc_thresh2, the level the forced GC cleans down to) in the "
            + "namespace that counts it (NeighTableOverflow; Linux: NEIGH_CREATEFAIL, \"neighbour table overflow\")"),
    NEIGH_QUEUE_FULL("packet waited for ARP resolution and the neighbour's unresolved queue (unres_qlen_bytes) was "
            + "full"),
    NEIGH_DEAD("neighbour entry deleted (ip neigh del or flush, device gone) while packets still waited for its "
            + "resolution"),
    TX_QUEUE_FULL("the device's transmit queue was full: the reader on the other side (a TAP's kernel end) did not "
            + "keep up; counted as tx dropped"),
    NETEM_LOSS("link emulation drew the frame as lost (netem loss, usnet.netem.<dev>.loss); counted as tx dropped"),
    NETEM_QUEUE_FULL("link emulation already held its limit of frames: tail drop (netem limit, "
            + "usnet.netem.<dev>.limit); counted as tx dropped"),
    IPV6DISABLED("IPv6 frame on a device whose net.ipv6.conf.<dev>.disable_ipv6 is 1 (Ip6InDiscards; Linux: "
            + "IPV6DISABLED)"),
    IP6_INVALID_ADDRESS("martian IPv6 address: multicast or v4-mapped source, loopback from outside, interface-local "
            + "or scope-0 multicast destination from outside (Ip6InAddrErrors, Ip6InHdrErrors)"),
    IP6_MCAST_NOT_JOINED("IPv6 multicast to a group this node is not in; multicast is never forwarded "
            + "(Ip6InMcastPkts)"),
    IP6_NOT_FORWARDING("IPv6 packet for another host arrived but net.ipv6.conf.<dev>.forwarding is 0 "
            + "(Ip6InAddrErrors)"),
    IP6_HOP_LIMIT("hop limit 1 or 0 while forwarding; an ICMPv6 time exceeded went back (Ip6InHdrErrors)"),
    IP6_PKT_TOO_BIG("IPv6 packet larger than the next hop's MTU (routers never fragment); an ICMPv6 packet too big "
            + "went back (Ip6InTooBigErrors, Ip6FragFails)"),
    IP6_BEYOND_SCOPE("IPv6 packet with a link-local source would leave its link; an ICMPv6 destination unreachable "
            + "beyond scope went back"),
    IPV6_BAD_EXTHDR("malformed or refused IPv6 extension header: a bad option, a routing header type 0 with "
            + "segments left, a header beyond the packet; an ICMPv6 parameter problem went back where Linux sends "
            + "one (Ip6InHdrErrors; Linux: IPV6_BAD_EXTHDR)"),
    IPV6_MLD_BAD_QUERY("MLD query ignored: its source is not a link-local address or it is shorter than 24 bytes "
            + "(igmp6_event_query's checks)"),
    IPV6_NDISC_BAD("neighbour discovery message failing RFC 4861 validation: hop limit not 255, code not 0, too "
            + "short, bad options (Icmp6InErrors; Linux: IPV6_NDISC_HOP_LIMIT, _BAD_CODE, _BAD_OPTIONS)"),
    IP6_REASM_TIMEOUT("not every fragment of an IPv6 datagram arrived within net.ipv6.ip6frag_time "
            + "(Ip6ReasmTimeout, Ip6ReasmFails)"),
    IP6_REASM_OVERLAP("IPv6 fragment overlapping another, past 64 KiB, or with a length not a multiple of 8 before "
            + "the last: the whole datagram is discarded (RFC 5722; Ip6ReasmFails)"),
    IP6_REASM_LIMIT("IPv6 reassembly memory above net.ipv6.ip6frag_high_thresh (Ip6ReasmFails)"),
    NAT_NO_FREE_TUPLE("source or destination NAT found no free address and port in the rule's range for a new "
            + "connection (Linux keeps the clashing tuple and drops the packet when conntrack confirms it, counted "
            + "as insert_failed)"),
    NAT_MASQUERADE_NO_ADDRESS("masquerade: the outgoing device has no IPv4 address to take as the source "
            + "(Linux: inet_select_addr found none, NF_DROP)"),
    NAT_REWRITE_FAILED("NAT could not rewrite the packet: its transport header, or the header inside an ICMP "
            + "error, is cut short, or the ICMP error's checksum is wrong (Linux: NF_DROP from the NAT hook)"),
    NETFILTER_DROP("a netfilter rule dropped the packet (nftables drop or reject verdict, or a chain's drop policy; "
            + "Linux: NETFILTER_DROP)"),
    NOT_SPECIFIED("dropped without a more specific reason (Linux: NOT_SPECIFIED)");

    private final String description;

    DropReason(String description) {
        this.description = description;
    }

    /**
     * What happened to the packet, for users reading a drop table: the cause, and where Linux counts the same
     * thing, its counter (nstat name), knob or drop reason.
     */
    public String description() {
        return description;
    }
}
