package dev.usnet.core.netfilter;

/**
 * A connection-tracking entry as rules see it (the parts of struct nf_conn that {@code ct} expressions read and
 * write). The entry a packet belongs to is {@code Packet.nfct()}.
 */
public interface NfConntrack {
    /** {@link IpConntrackStatus} bits. */
    int status();

    /** The connection mark ({@code ct mark}). */
    int mark();

    void setMark(int mark);

    /** IPPROTO of the connection (6 TCP, 17 UDP, 1 ICMP, ...). */
    int protocol();
}
