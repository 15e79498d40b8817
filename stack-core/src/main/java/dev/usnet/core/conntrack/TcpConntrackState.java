package dev.usnet.core.conntrack;

/**
 * What TCP tracking keeps of one connection (struct ip_ct_tcp): its state, each direction's window as seen
 * (struct ip_ct_tcp_state) and the last packet, which retransmission counting and the RST checks compare with.
 */
final class TcpConntrackState {
    /** One direction's sequence space as the other end will accept it. */
    static final class Seen {
        /** The highest sequence number sent plus its length: td_end. */
        int end;
        /** The highest sequence the receiver's window allows: td_maxend (ack + window). */
        int maxend;
        /** The largest window this sender advertised: td_maxwin. */
        int maxwin;
        /** The highest acknowledgement this sender sent: td_maxack. */
        int maxack;
        /** The window-scale shift from this sender's SYN: td_scale. */
        int scale;
        /** IP_CT_TCP_FLAG_* bits. */
        int flags;

        void clear() {
            end = maxend = maxwin = maxack = scale = flags = 0;
        }
    }

    static final int FLAG_WINDOW_SCALE = 0x01;
    static final int FLAG_SACK_PERM = 0x02;
    static final int FLAG_CLOSE_INIT = 0x04;
    static final int FLAG_BE_LIBERAL = 0x08;
    static final int FLAG_DATA_UNACKNOWLEDGED = 0x10;
    static final int FLAG_MAXACK_SET = 0x20;

    final Seen[] seen = {new Seen(), new Seen()};
    int state;
    int lastDir;
    int lastIndex = TcpConntrack.NONE_SET;
    int lastSeq;
    int lastAck;
    int lastEnd;
    int lastWin;
    /** Window scale and SACK permission an ignored SYN offered, kept until its SYN/ACK shows it was real. */
    int lastWscale;
    int lastFlags;
    int retrans;
}
