package dev.usnet.core.conntrack;

import dev.usnet.core.wire.IcmpPacket;

/**
 * ICMP tracking (nf_conntrack_proto_icmp): a query (echo, timestamp, information, address mask) and its reply are a
 * connection keyed by the identifier, the reply's tuple carrying the reply type; only a query starts one. An error
 * (unreachable, source quench, redirect, time exceeded, parameter problem) starts nothing: it belongs, as RELATED,
 * to the connection of the datagram it quotes.
 */
final class IcmpConntrack {
    /** The highest ICMP type Linux knows (NR_ICMP_TYPES). */
    static final int MAX_TYPE = 18;

    private IcmpConntrack() {}

    /** The reply type of query {@code type} (echo → echo reply, and back), or -1 for a type with no answer. */
    static int replyType(int type) {
        return switch (type) {
            case IcmpPacket.ECHO -> IcmpPacket.ECHO_REPLY;
            case IcmpPacket.ECHO_REPLY -> IcmpPacket.ECHO;
            case IcmpPacket.TIMESTAMP -> IcmpPacket.TIMESTAMP_REPLY;
            case IcmpPacket.TIMESTAMP_REPLY -> IcmpPacket.TIMESTAMP;
            case 15 -> 16;
            case 16 -> 15;
            case 17 -> 18;
            case 18 -> 17;
            default -> -1;
        };
    }

    /** Whether {@code type} may start a connection (a query, not a reply). */
    static boolean startsConnection(int type) {
        return type == IcmpPacket.ECHO || type == IcmpPacket.TIMESTAMP || type == 15 || type == 17;
    }

    /** Whether {@code type} is an error quoting another datagram. */
    static boolean isError(int type) {
        return type == IcmpPacket.DEST_UNREACH || type == IcmpPacket.SOURCE_QUENCH || type == IcmpPacket.REDIRECT
                || type == IcmpPacket.TIME_EXCEEDED || type == IcmpPacket.PARAMETER_PROB;
    }
}
