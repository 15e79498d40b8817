package dev.usnet.core.conntrack;

import dev.usnet.core.knob.Knobs;
import dev.usnet.core.netfilter.IpConntrackStatus;

/**
 * UDP tracking (nf_conntrack_proto_udp): no state but whether an answer came. Unanswered, an entry lives
 * nf_conntrack_udp_timeout (30 s) after each packet; answered, and still in use two seconds after it began, it is a
 * stream: ASSURED and nf_conntrack_udp_timeout_stream (120 s). A query answered at once (DNS) stays a 30-second
 * entry that early drop may evict.
 */
final class UdpConntrack {
    /** How long after the first packet an answered flow must still be active to count as a stream. */
    static final long STREAM_AFTER = 2_000_000_000L;

    private UdpConntrack() {}

    static void packet(ConntrackEntry ct, ConntrackTable table, Knobs knobs) {
        long now = table.now();
        if (!ct.confirmed()) {
            ct.streamDeadline = now + STREAM_AFTER;
        }
        if (ct.hasStatus(IpConntrackStatus.SEEN_REPLY)) {
            long timeout = knobs.get(ConntrackSysctl.UDP_TIMEOUT);
            boolean stream = false;
            if (now - ct.streamDeadline > 0) {
                timeout = knobs.get(ConntrackSysctl.UDP_TIMEOUT_STREAM);
                stream = true;
            }
            ConntrackCore.refresh(ct, table, timeout * 1_000_000_000L);
            if (stream) {
                ct.setStatusBits(IpConntrackStatus.ASSURED);
            }
        } else {
            ConntrackCore.refresh(ct, table, knobs.get(ConntrackSysctl.UDP_TIMEOUT) * 1_000_000_000L);
        }
    }
}
