package dev.usnet.core.stats;

/** SNMP counters of a namespace, named as {@code nstat} prints them. */
public enum Mib {
    IpInReceives, IpInHdrErrors, IpInAddrErrors, IpInUnknownProtos, IpInDiscards, IpInDelivers, IpForwDatagrams,
    IpOutRequests, IpOutDiscards, IpOutNoRoutes, IpReasmTimeout, IpReasmReqds, IpReasmOKs, IpReasmFails,
    IpFragOKs, IpFragFails, IpFragCreates, IpExtInCsumErrors, IpExtInTruncatedPkts, IpExtInNoRoutes,
    IpExtInBcastPkts, IpExtInMcastPkts, IpExtOutBcastPkts, IpExtReasmOverlaps,
    IcmpInMsgs, IcmpInErrors, IcmpInCsumErrors, IcmpInEchos, IcmpInEchoReps, IcmpInDestUnreachs, IcmpInTimeExcds,
    IcmpInRedirects, IcmpOutMsgs, IcmpOutErrors, IcmpOutEchoReps, IcmpOutEchos, IcmpOutDestUnreachs,
    IcmpOutTimeExcds, IcmpOutRedirects, IcmpOutRateLimitHost, IcmpOutRateLimitGlobal,
    UdpInDatagrams, UdpNoPorts, UdpInErrors, UdpOutDatagrams, UdpRcvbufErrors, UdpInCsumErrors,
    TcpActiveOpens, TcpPassiveOpens, TcpAttemptFails, TcpEstabResets, TcpInSegs, TcpOutSegs, TcpRetransSegs,
    TcpInErrs, TcpOutRsts, TcpInCsumErrors,
    TcpExtListenOverflows, TcpExtListenDrops, TcpExtSyncookiesSent, TcpExtSyncookiesRecv, TcpExtSyncookiesFailed,
    TcpExtTCPReqQFullDoCookies, TcpExtTCPReqQFullDrop, TcpExtTCPTimeouts, TcpExtTCPSackRecovery, TcpExtTCPRenoRecovery,
    TcpExtTCPLossProbes, TcpExtTCPLossProbeRecovery, TcpExtTCPLossUndo, TcpExtTCPFullUndo, TcpExtTCPLostRetransmit, TcpExtTCPAbortOnTimeout, TcpExtTCPAbortOnData, TcpExtPAWSEstab, TcpExtTCPChallengeACK,
    TcpExtDelayedACKs, TcpExtTCPOFOQueue, TcpExtTCPRcvQDrop, TcpExtTW, TcpExtTCPKeepAlive,
    TcpExtDelayedACKLost, TcpExtTCPOFOMerge, TcpExtTCPOFODrop, TcpExtOfoPruned, TcpExtTCPDSACKOldSent,
    TcpExtTCPDSACKOfoSent, TcpExtTCPDSACKRecv, TcpExtTCPDSACKOfoRecv, TcpExtTCPDSACKUndo, TcpExtTCPSACKReneging,
    TcpExtTCPFastRetrans, TcpExtTCPForwardRetrans, TcpExtTCPSlowStartRetrans, TcpExtTCPPartialUndo,
    TcpExtTCPSACKReorder, TcpExtTCPFACKReorder, TcpExtTCPRenoReorder, TcpExtTCPTSReorder,
    TcpExtTCPSackFailures, TcpExtTCPRenoFailures, TcpExtTCPLossFailures,
    // ICMP errors about TCP segments (tcp_v4_err).
    TcpExtOutOfWindowIcmps,
    // Loss recovery of the 6.x preset (F-RTO's verdict on an RTO).
    TcpExtTCPSpuriousRTOs,
    // usnet's own (Linux has no MIB for it): tcp_write_xmit stopped on TCP small queues' limit.
    UsnetTCPTSQThrottled,
    ArpInRequests, ArpInReplies, ArpOutRequests, ArpOutReplies, ArpProxyReplies,
    NeighResolutionFailed, NeighTableOverflow,
    // IPv6, as /proc/net/snmp6 names them.
    Ip6InReceives, Ip6InHdrErrors, Ip6InTooBigErrors, Ip6InNoRoutes, Ip6InAddrErrors, Ip6InUnknownProtos,
    Ip6InTruncatedPkts, Ip6InDiscards, Ip6InDelivers, Ip6OutForwDatagrams, Ip6OutRequests, Ip6OutDiscards,
    Ip6OutNoRoutes, Ip6ReasmTimeout, Ip6ReasmReqds, Ip6ReasmOKs, Ip6ReasmFails, Ip6FragOKs, Ip6FragFails,
    Ip6FragCreates, Ip6InMcastPkts, Ip6OutMcastPkts,
    Icmp6InMsgs, Icmp6InErrors, Icmp6OutMsgs, Icmp6OutErrors, Icmp6InCsumErrors, Icmp6OutRateLimitHost,
    Icmp6InDestUnreachs, Icmp6InPktTooBigs, Icmp6InTimeExcds, Icmp6InParmProblems, Icmp6InEchos, Icmp6InEchoReplies,
    Icmp6InRouterSolicits, Icmp6InRouterAdvertisements, Icmp6InNeighborSolicits, Icmp6InNeighborAdvertisements,
    Icmp6InRedirects, Icmp6OutDestUnreachs, Icmp6OutPktTooBigs, Icmp6OutTimeExcds, Icmp6OutParmProblems,
    Icmp6OutEchos, Icmp6OutEchoReplies, Icmp6OutRouterSolicits, Icmp6OutRouterAdvertisements, Icmp6OutNeighborSolicits,
    Icmp6OutNeighborAdvertisements, Icmp6OutRedirects,
    Udp6InDatagrams, Udp6NoPorts, Udp6InErrors, Udp6OutDatagrams, Udp6InCsumErrors
}
