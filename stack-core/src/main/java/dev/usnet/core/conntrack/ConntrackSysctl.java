package dev.usnet.core.conntrack;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * Connection tracking's knobs ({@code net.netfilter.nf_conntrack_*}), with the defaults of a 6.x kernel on a machine
 * with more than 4 GiB (where nf_conntrack_buckets and _max are both 262144). Timeouts are in seconds. The current
 * number of entries (Linux's read-only nf_conntrack_count) is not a knob here: a usnet knob can always be set, so
 * the count is read with {@code usnet ctl conntrack -C} instead.
 */
public final class ConntrackSysctl implements SysctlTable {
    private static final long INT_MAX = Integer.MAX_VALUE;

    public static final LongKnob MAX = LongKnob.define("net.netfilter.nf_conntrack_max", 262144, 0, INT_MAX,
            "entries the table holds at most; beyond it a new connection evicts an unassured one near its bucket "
                    + "(early drop) or its packet is dropped");
    public static final LongKnob BUCKETS = LongKnob.define("net.netfilter.nf_conntrack_buckets", 262144, 1,
            1 << 24, "hash buckets of the table (allocated when tracking inserts its first entry; a change rehashes "
                    + "at the next insert)");
    public static final LongKnob CHECKSUM = LongKnob.define("net.netfilter.nf_conntrack_checksum", 1, 0, 1,
            "verify the TCP, UDP and ICMP checksum of arriving packets; a bad one is invalid");
    public static final LongKnob ACCT = LongKnob.define("net.netfilter.nf_conntrack_acct", 0, 0, 1,
            "count packets and bytes per direction of connections created from now on (conntrack -L packets=, bytes=)");
    public static final LongKnob TCP_LOOSE = LongKnob.define("net.netfilter.nf_conntrack_tcp_loose", 1, 0, 1,
            "a TCP segment other than a SYN may start tracking an already established connection");
    public static final LongKnob TCP_BE_LIBERAL = LongKnob.define("net.netfilter.nf_conntrack_tcp_be_liberal", 0, 0,
            1, "accept TCP segments outside the tracked window instead of marking them invalid");
    public static final LongKnob TCP_IGNORE_INVALID_RST = LongKnob.define(
            "net.netfilter.nf_conntrack_tcp_ignore_invalid_rst", 0, 0, 1,
            "skip the check that marks a RST below the peer's highest acknowledgement invalid");
    public static final LongKnob TCP_MAX_RETRANS = LongKnob.define("net.netfilter.nf_conntrack_tcp_max_retrans", 3,
            0, INT_MAX, "identical retransmissions after which the max_retrans timeout applies");
    public static final LongKnob TCP_TIMEOUT_SYN_SENT = timeout("tcp_timeout_syn_sent", 120, "TCP after a SYN");
    public static final LongKnob TCP_TIMEOUT_SYN_RECV = timeout("tcp_timeout_syn_recv", 60, "TCP after the SYN/ACK");
    public static final LongKnob TCP_TIMEOUT_ESTABLISHED = timeout("tcp_timeout_established", 432000,
            "established TCP");
    public static final LongKnob TCP_TIMEOUT_FIN_WAIT = timeout("tcp_timeout_fin_wait", 120, "TCP after the first FIN");
    public static final LongKnob TCP_TIMEOUT_CLOSE_WAIT = timeout("tcp_timeout_close_wait", 60,
            "TCP after the FIN was acknowledged");
    public static final LongKnob TCP_TIMEOUT_LAST_ACK = timeout("tcp_timeout_last_ack", 30, "TCP after both FINs");
    public static final LongKnob TCP_TIMEOUT_TIME_WAIT = timeout("tcp_timeout_time_wait", 120,
            "TCP after the last ACK");
    public static final LongKnob TCP_TIMEOUT_CLOSE = timeout("tcp_timeout_close", 10, "TCP after a RST");
    public static final LongKnob TCP_TIMEOUT_MAX_RETRANS = timeout("tcp_timeout_max_retrans", 300,
            "TCP after tcp_max_retrans identical retransmissions, or a zero window");
    public static final LongKnob TCP_TIMEOUT_UNACKNOWLEDGED = timeout("tcp_timeout_unacknowledged", 300,
            "TCP with data not yet acknowledged");
    public static final LongKnob UDP_TIMEOUT = timeout("udp_timeout", 30, "UDP not answered, or answered within 2 s");
    public static final LongKnob UDP_TIMEOUT_STREAM = timeout("udp_timeout_stream", 120,
            "UDP still seen both ways 2 s after it began (a stream: ASSURED)");
    public static final LongKnob ICMP_TIMEOUT = timeout("icmp_timeout", 30, "ICMP queries (echo, timestamp, ...)");
    public static final LongKnob GENERIC_TIMEOUT = timeout("generic_timeout", 600, "protocols without a tracker");

    private static LongKnob timeout(String name, long def, String what) {
        return LongKnob.define("net.netfilter.nf_conntrack_" + name, def, 0, INT_MAX,
                "seconds an entry lives without packets: " + what);
    }

    private static final List<Knob> KNOBS = List.of(MAX, BUCKETS, CHECKSUM, ACCT, TCP_LOOSE, TCP_BE_LIBERAL,
            TCP_IGNORE_INVALID_RST, TCP_MAX_RETRANS, TCP_TIMEOUT_SYN_SENT, TCP_TIMEOUT_SYN_RECV, TCP_TIMEOUT_ESTABLISHED,
            TCP_TIMEOUT_FIN_WAIT,
            TCP_TIMEOUT_CLOSE_WAIT, TCP_TIMEOUT_LAST_ACK, TCP_TIMEOUT_TIME_WAIT, TCP_TIMEOUT_CLOSE,
            TCP_TIMEOUT_MAX_RETRANS, TCP_TIMEOUT_UNACKNOWLEDGED, UDP_TIMEOUT, UDP_TIMEOUT_STREAM, ICMP_TIMEOUT,
            GENERIC_TIMEOUT);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public ConntrackSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }
}
