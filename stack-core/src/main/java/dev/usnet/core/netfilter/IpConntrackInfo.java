package dev.usnet.core.netfilter;

/**
 * How a packet relates to its connection-tracking entry (enum ip_conntrack_info), kept in
 * {@code Packet.ctinfo()} beside the entry. A packet without an entry is INVALID to rules ({@code ct state
 * invalid}).
 */
public final class IpConntrackInfo {
    /** Part of an established connection, original direction (and a reply once seen, see IS_REPLY). */
    public static final int ESTABLISHED = 0;
    /** Related to an existing connection (an ICMP error about it), original direction. */
    public static final int RELATED = 1;
    /** Starts a new connection, or retransmits its first packet before any reply. */
    public static final int NEW = 2;
    /** Added to ESTABLISHED and RELATED for the reply direction. */
    public static final int IS_REPLY = 3;
    public static final int ESTABLISHED_REPLY = ESTABLISHED + IS_REPLY;
    public static final int RELATED_REPLY = RELATED + IS_REPLY;
    /** Deliberately not tracked ({@code notrack}). */
    public static final int UNTRACKED = 7;

    private IpConntrackInfo() {}

    /** CTINFO2DIR: 0 for the original direction, 1 for the reply. */
    public static int direction(int ctinfo) {
        return ctinfo >= IS_REPLY && ctinfo != UNTRACKED ? 1 : 0;
    }
}
