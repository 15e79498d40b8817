package dev.usnet.core.netfilter;

/** The status bits of a connection-tracking entry (enum ip_conntrack_status), as {@code ct status} matches them. */
public final class IpConntrackStatus {
    public static final int EXPECTED = 1;
    public static final int SEEN_REPLY = 1 << 1;
    public static final int ASSURED = 1 << 2;
    public static final int CONFIRMED = 1 << 3;
    public static final int SRC_NAT = 1 << 4;
    public static final int DST_NAT = 1 << 5;
    public static final int SEQ_ADJUST = 1 << 6;
    public static final int SRC_NAT_DONE = 1 << 7;
    public static final int DST_NAT_DONE = 1 << 8;
    public static final int DYING = 1 << 9;
    public static final int FIXED_TIMEOUT = 1 << 10;
    public static final int TEMPLATE = 1 << 11;
    public static final int UNTRACKED = 1 << 12;

    private IpConntrackStatus() {}
}
