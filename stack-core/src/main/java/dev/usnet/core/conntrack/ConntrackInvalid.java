package dev.usnet.core.conntrack;

/**
 * Why connection tracking gave a packet no entry ({@code ct state invalid}): what Linux writes to its log with
 * nf_conntrack_log_invalid, kept here as counters for {@code conntrack -S} and the metrics.
 */
public enum ConntrackInvalid {
    TRUNCATED("transport header truncated"),
    FRAGMENT("a fragment that could not be reassembled first (not the first fragment)"),
    BAD_CHECKSUM("transport checksum wrong (nf_conntrack_checksum 1)"),
    TCP_BAD_FLAGS("TCP flag combination no stack sends"),
    TCP_NOT_SYN("TCP segment other than a SYN starts no connection (nf_conntrack_tcp_loose 0, or not an ACK)"),
    TCP_BAD_TRANSITION("TCP segment not allowed in the connection's state"),
    TCP_OUT_OF_WINDOW("TCP segment outside the tracked window (nf_conntrack_tcp_be_liberal 0)"),
    TCP_BAD_RST("TCP RST below the acknowledged sequence"),
    UDP_BAD_LENGTH("UDP length field disagrees with the datagram"),
    ICMP_NO_NEW("ICMP type that starts no connection (a reply without its request)"),
    ICMP_BAD_TYPE("ICMP type beyond the known ones"),
    ICMP_ERROR_UNMATCHED("ICMP error about no tracked connection");

    private final String doc;

    ConntrackInvalid(String doc) {
        this.doc = doc;
    }

    public String doc() {
        return doc;
    }
}
