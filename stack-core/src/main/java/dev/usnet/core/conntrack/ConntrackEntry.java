package dev.usnet.core.conntrack;

import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfConntrack;

/**
 * One tracked connection (struct nf_conn): its two tuples, ORIGINAL as the first packet had it and REPLY as the
 * answer will carry it (the inverse, unless NAT changed it before confirmation), the IPS_* status, when it expires
 * (a deadline on the namespace clock; nothing runs when it passes — lookups and the table's collector notice), the
 * connection mark, what the protocol's tracker keeps, NAT's binding, and with accounting packets and bytes per
 * direction. A new entry lives on its first packet until {@link ConntrackTable#confirm} puts it in the table.
 */
public final class ConntrackEntry implements NfConntrack {
    public static final int ORIGINAL = 0;
    public static final int REPLY = 1;

    final ConntrackTupleHash[] tuplehash = {new ConntrackTupleHash(this, ORIGINAL), new ConntrackTupleHash(this, REPLY)};
    private int status;
    private int mark;
    /** Absolute deadline (namespace nanoseconds) once confirmed; before that the timeout relative to confirmation. */
    long timeout;
    /** TCP's state, or null for other protocols. */
    TcpConntrackState tcp;
    /** UDP: when the flow counts as a stream if still answered (stream_ts). */
    long streamDeadline;
    private Object natData;
    final boolean acct;
    final long[] packets;
    final long[] bytes;
    // The table's list of every confirmed entry, for listing and collection without walking empty buckets.
    ConntrackEntry prevAll;
    ConntrackEntry nextAll;

    ConntrackEntry(ConntrackTuple orig, ConntrackTuple reply, boolean acct) {
        tuplehash[ORIGINAL].tuple.copyFrom(orig);
        tuplehash[REPLY].tuple.copyFrom(reply);
        this.acct = acct;
        this.packets = acct ? new long[2] : null;
        this.bytes = acct ? new long[2] : null;
    }

    /** The tuple of direction {@code dir} ({@link #ORIGINAL} or {@link #REPLY}); not to be changed by the caller. */
    public ConntrackTuple tuple(int dir) {
        return tuplehash[dir].tuple;
    }

    @Override
    public int status() {
        return status;
    }

    /** Sets IPS_* bits (NAT marks SRC_NAT, DST_NAT, ..._DONE). */
    public void setStatusBits(int bits) {
        status |= bits;
    }

    public void clearStatusBits(int bits) {
        status &= ~bits;
    }

    public boolean hasStatus(int bit) {
        return (status & bit) != 0;
    }

    public boolean confirmed() {
        return (status & IpConntrackStatus.CONFIRMED) != 0;
    }

    @Override
    public int mark() {
        return mark;
    }

    @Override
    public void setMark(int mark) {
        this.mark = mark;
    }

    @Override
    public int protocol() {
        return tuplehash[ORIGINAL].tuple.protonum();
    }

    /** What NAT keeps of this connection (its binding), or null. */
    public Object natData() {
        return natData;
    }

    public void setNatData(Object natData) {
        this.natData = natData;
    }

    /** Whether the entry counts packets and bytes (nf_conntrack_acct was 1 when it was created). */
    public boolean accounting() {
        return acct;
    }

    public long packets(int dir) {
        return acct ? packets[dir] : 0;
    }

    public long bytes(int dir) {
        return acct ? bytes[dir] : 0;
    }

    /** The expiry deadline on the namespace clock (confirmed entries). */
    public long deadline() {
        return timeout;
    }

    /** Whether the deadline has passed at {@code now} (nf_ct_is_expired). */
    public boolean expired(long now) {
        return confirmed() && timeout - now <= 0;
    }

    /** Seconds left at {@code now}, rounded down as ctnetlink reports them. */
    public long secondsLeft(long now) {
        long left = confirmed() ? timeout - now : timeout;
        return left <= 0 ? 0 : left / 1_000_000_000L;
    }

    /** The TCP state's name as conntrack prints it, or null for other protocols. */
    public String tcpStateName() {
        return tcp == null ? null : TcpConntrack.stateName(tcp.state);
    }

    /** The TCP state (TcpConntrack.SYN_SENT ...), or -1. */
    public int tcpState() {
        return tcp == null ? -1 : tcp.state;
    }

    /** The line {@code conntrack -L} prints for this entry, with the seconds left at {@code now}. */
    public String describe(long now) {
        StringBuilder sb = new StringBuilder(160);
        int proto = protocol();
        String name = switch (proto) {
            case 6 -> "tcp";
            case 17 -> "udp";
            case 1 -> "icmp";
            case 136 -> "udplite";
            case 132 -> "sctp";
            case 47 -> "gre";
            case 33 -> "dccp";
            case 58 -> "icmpv6";
            default -> "unknown";
        };
        sb.append(name);
        for (int i = name.length(); i < 8; i++) {
            sb.append(' ');
        }
        sb.append(' ').append(proto).append(' ').append(secondsLeft(now)).append(' ');
        if (tcp != null) {
            sb.append(TcpConntrack.stateName(tcp.state)).append(' ');
        }
        describeDirection(sb, ORIGINAL);
        if (!hasStatus(IpConntrackStatus.SEEN_REPLY)) {
            sb.append("[UNREPLIED] ");
        }
        describeDirection(sb, REPLY);
        if (hasStatus(IpConntrackStatus.ASSURED)) {
            sb.append("[ASSURED] ");
        }
        sb.append("mark=").append(Integer.toUnsignedLong(mark)).append(" use=1");
        return sb.toString();
    }

    private void describeDirection(StringBuilder sb, int dir) {
        tuplehash[dir].tuple.describe(sb);
        sb.append(' ');
        if (acct) {
            sb.append("packets=").append(packets[dir]).append(" bytes=").append(bytes[dir]).append(' ');
        }
    }

    @Override
    public String toString() {
        return "conntrack " + tuplehash[ORIGINAL].tuple + " / " + tuplehash[REPLY].tuple + " status 0x"
                + Integer.toHexString(status);
    }
}
