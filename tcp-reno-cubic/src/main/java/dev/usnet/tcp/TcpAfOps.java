package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.route.Dst;
import dev.usnet.core.wire.TcpSegment;

/**
 * What TCP needs from the network-layer family a socket runs over (inet_connection_sock_af_ops; IPv4's is
 * {@link TcpIpv4Ops}, ipv4_specific): the size of its header, packets with room for it, routes and source
 * addresses, the path MTU and the MSS it allows, the checksum over its pseudo-header and the way out. TCP's state
 * machine, windows and options are the same over every family; only these differ, so a second family is a
 * second implementation of this interface, chosen per socket ({@code TcpSock.af}).
 *
 * <p>IPv6's is {@link TcpIpv6Ops} (ipv6_specific). The family-neutral methods take the socket, whose addresses the
 * family keeps in its own form, or the received segment, whose addresses the family reads from its own header;
 * routes are {@link Dst}s, which the family knows to be its own kind. Opening a connection (the route and source
 * address for a destination) is the family's own API, as tcp_v4_connect and tcp_v6_connect are. There is no send_ack for a segment without a socket: usnet
 * keeps SYN-RECV and TIME-WAIT connections as full sockets (no request or time-wait minisockets), and those
 * acknowledge through {@link #queueXmit}.
 */
interface TcpAfOps {
    /** net_header_len: the family's header in front of every TCP segment (no options or extension headers). */
    int netHeaderLen();

    /**
     * The MSS assumed for a peer whose SYN carries no MSS option (the request sock ops' mss_clamp): the family's
     * smallest packet every host must take less both headers — IPv4's TCP_MSS_DEFAULT 536 (576 − 40), IPv6's 1220
     * (1280 − 60).
     */
    int defaultPeerMss();

    /** The GSO type of a TSO segment of this family (SKB_GSO_TCPV4). */
    int gsoType();

    /**
     * A packet for a TCP segment of {@code tcpLen} bytes (header and payload): transport() is the TCP header,
     * network() the family's header in front of it, not yet written ({@link #queueXmit} writes it).
     */
    Packet allocate(int tcpLen);

    /**
     * The route the answer to a received segment takes (inet_csk_route_req): towards the segment's source.
     * Null: unreachable.
     */
    Dst routeReply(Packet in);

    /**
     * A listener's child for the segment {@code in} takes its addresses from it: the segment's destination as
     * its local address, its source as the remote one; {@code lport} and {@code rport} are the ports.
     */
    void initChild(TcpSock child, Packet in, int lport, int rport);

    /** The path MTU of {@code sk}'s route and peer (dst_mtu). */
    int pathMtu(TcpSock sk);

    /**
     * A router reported {@code reportedMtu} for {@code sk}'s path (inet_csk_update_pmtu). Returns the path MTU
     * afterwards: never raised, never below the family's floor.
     */
    int updatePmtu(TcpSock sk, int reportedMtu);

    /** tcp_mtu_to_mss: the segment payload a packet of {@code mtu} bytes carries, without TCP options. */
    default int mtuToMss(int mtu) {
        return mtu - netHeaderLen() - TcpSegment.MIN_HEADER_LEN;
    }

    /** tcp_mss_to_mtu: the packet size a segment of {@code mss} payload bytes, without TCP options, makes. */
    default int mssToMtu(int mss) {
        return mss + netHeaderLen() + TcpSegment.MIN_HEADER_LEN;
    }

    /** tcp_advmss: the MSS to announce on {@code rt}, from its device's MTU and the family's largest packet. */
    int advMss(Dst rt);

    /**
     * tcp_v4_send_check: the checksum of {@code sk}'s segment in {@code p} over this family's pseudo-header, left
     * to the device when it offloads checksums (CHECKSUM_PARTIAL), else computed here.
     */
    void sendCheck(TcpSock sk, Packet p);

    /** queue_xmit (ip_queue_xmit): sends {@code sk}'s checksummed segment in {@code p}; owns {@code p}. */
    void queueXmit(TcpSock sk, Packet p);

    /**
     * tcp_v4_send_reset for a connection: a bare RST (or RST|ACK) from {@code sk}'s addresses and ports with
     * {@code seq} and {@code ack}, not kept or retransmitted.
     */
    void sendReset(TcpSock sk, long seq, long ack, int flags);

    /**
     * tcp_v4_send_reset without a socket: a bare reset answering the segment {@code in} (parsed in {@code seg}),
     * from its destination to its source. Nothing is sent when there is no route back.
     */
    void sendReset(Packet in, TcpSegment seg, long seq, long ack, int flags);

    /**
     * The SYN-ACK of a request that keeps no socket (a SYN cookie's): {@code synAck} holds the TCP header, built;
     * it is checksummed and sent from the SYN's destination to its source over {@code rt}. Owns {@code synAck}.
     */
    void sendSynAck(Packet syn, Dst rt, Packet synAck);
}
