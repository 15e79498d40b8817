package dev.usnet.core.conntrack;

import dev.usnet.core.knob.Knobs;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;

/**
 * TCP connection tracking as Linux's nf_conntrack_proto_tcp: a state machine over the flags of each segment in each
 * direction (the transition table below is written from the states' meaning: a SYN opens, a SYN/ACK answers, FINs
 * and their ACKs close, a RST ends), and window tracking after Rooij's "Real stateful TCP packet filtering": per
 * direction the highest sequence sent (td_end), the highest the peer's window allows (td_maxend) and the largest
 * window seen (td_maxwin, scaled by the SYN's window-scale option). A segment must start below the receiver's
 * window end, must not end before data already acknowledged minus a window, and must acknowledge nothing unseen
 * nor too old; otherwise it is invalid unless nf_conntrack_tcp_be_liberal. The timeout follows the state, shortened
 * while data is unacknowledged, a window is zero or a segment was retransmitted too often.
 */
final class TcpConntrack {
    static final int NONE = 0;
    static final int SYN_SENT = 1;
    static final int SYN_RECV = 2;
    static final int ESTABLISHED = 3;
    static final int FIN_WAIT = 4;
    static final int CLOSE_WAIT = 5;
    static final int LAST_ACK = 6;
    static final int TIME_WAIT = 7;
    static final int CLOSE = 8;
    static final int SYN_SENT2 = 9;
    /** Not a state: the segment is invalid here. */
    static final int IV = 10;
    /** Not a state: the segment is let through but changes nothing (it may be a reopening or a lost-SYN case). */
    static final int IG = 11;

    private static final String[] NAMES = {"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT",
            "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"};

    // What a segment is to the state machine (get_conntrack_index), in this order of precedence: RST, SYN(/ACK), FIN, ACK.
    static final int SYN_SET = 0;
    static final int SYNACK_SET = 1;
    static final int FIN_SET = 2;
    static final int ACK_SET = 3;
    static final int RST_SET = 4;
    static final int NONE_SET = 5;

    private static final int NO = NONE;
    private static final int SS = SYN_SENT;
    private static final int SR = SYN_RECV;
    private static final int ES = ESTABLISHED;
    private static final int FW = FIN_WAIT;
    private static final int CW = CLOSE_WAIT;
    private static final int LA = LAST_ACK;
    private static final int TW = TIME_WAIT;
    private static final int CL = CLOSE;
    private static final int S2 = SYN_SENT2;

    /**
     * [direction][segment kind][current state] → next state. Columns: NONE, SYN_SENT, SYN_RECV, ESTABLISHED,
     * FIN_WAIT, CLOSE_WAIT, LAST_ACK, TIME_WAIT, CLOSE, SYN_SENT2.
     */
    private static final int[][][] TRANSITIONS = {
        { // original direction
            /* syn    */ {SS, SS, IG, IG, IG, IG, IG, SS, SS, S2},
            /* synack */ {IV, IV, SR, IV, IV, IV, IV, IV, IV, SR},
            /* fin    */ {IV, IV, FW, FW, LA, LA, LA, TW, CL, IV},
            /* ack    */ {ES, IV, ES, ES, CW, CW, TW, TW, CL, IV},
            /* rst    */ {IV, CL, CL, CL, CL, CL, CL, CL, CL, CL},
            /* none   */ {IV, IV, IV, IV, IV, IV, IV, IV, IV, IV},
        },
        { // reply direction
            /* syn    */ {IV, S2, IV, IV, IV, IV, IV, SS, IV, S2},
            /* synack */ {IV, SR, IG, IG, IG, IG, IG, IG, IG, SR},
            /* fin    */ {IV, IV, FW, FW, LA, LA, LA, TW, CL, IV},
            /* ack    */ {IV, IG, SR, ES, CW, CW, TW, TW, CL, IG},
            /* rst    */ {IV, CL, CL, CL, CL, CL, CL, CL, CL, CL},
            /* none   */ {IV, IV, IV, IV, IV, IV, IV, IV, IV, IV},
        },
    };

    private static final LongKnob[] TIMEOUTS = {ConntrackSysctl.TCP_TIMEOUT_CLOSE, ConntrackSysctl.TCP_TIMEOUT_SYN_SENT,
        ConntrackSysctl.TCP_TIMEOUT_SYN_RECV, ConntrackSysctl.TCP_TIMEOUT_ESTABLISHED,
        ConntrackSysctl.TCP_TIMEOUT_FIN_WAIT, ConntrackSysctl.TCP_TIMEOUT_CLOSE_WAIT,
        ConntrackSysctl.TCP_TIMEOUT_LAST_ACK, ConntrackSysctl.TCP_TIMEOUT_TIME_WAIT, ConntrackSysctl.TCP_TIMEOUT_CLOSE,
        ConntrackSysctl.TCP_TIMEOUT_SYN_SENT};

    /** Valid flag combinations ignoring PSH, ECE and CWR (tcp_valid_flags). */
    private static final boolean[] VALID_FLAGS = new boolean[64];

    static {
        int syn = TcpSegment.SYN;
        int ack = TcpSegment.ACK_FLAG;
        int fin = TcpSegment.FIN;
        int rst = TcpSegment.RST;
        int urg = TcpSegment.URG;
        for (int f : new int[] {syn, syn | urg, syn | ack, rst, rst | ack, fin | ack, fin | ack | urg, ack, ack | urg}) {
            VALID_FLAGS[f] = true;
        }
    }

    /** What {@link #packet} decided. */
    static final int ACCEPT = 1;
    static final int INVALID = 0;
    /** The segment reopens a closed connection: the old entry is gone, look up again. */
    static final int REPEAT = 2;

    /** Why the last call returned INVALID. */
    ConntrackInvalid why;
    /** Scratch for the options of an ignored SYN. */
    private final TcpConntrackState.Seen offered = new TcpConntrackState.Seen();

    // The segment being tracked, read once by parse().
    private int flags;
    private int seq;
    private int ack;
    private int win;
    private int dataoff;
    private int seglen;
    private ByteBuf buf;
    private int off;

    static String stateName(int state) {
        return state >= 0 && state < NAMES.length ? NAMES[state] : "UNKNOWN";
    }

    static boolean before(int a, int b) {
        return a - b < 0;
    }

    static boolean after(int a, int b) {
        return b - a < 0;
    }

    /**
     * tcp_error: reads the segment at {@code off} ({@code len} bytes of TCP header and data) and checks what needs
     * no connection: its header length and flags. Null when fine.
     */
    ConntrackInvalid parse(ByteBuf b, int off, int len) {
        if (len < TcpSegment.MIN_HEADER_LEN) {
            return ConntrackInvalid.TRUNCATED;
        }
        int doff = (b.getUnsignedByte(off + TcpSegment.DATA_OFF) >>> 4) * 4;
        if (doff < TcpSegment.MIN_HEADER_LEN || doff > len) {
            return ConntrackInvalid.TRUNCATED;
        }
        this.buf = b;
        this.off = off;
        this.dataoff = doff;
        this.seglen = len;
        this.flags = b.getUnsignedByte(off + TcpSegment.FLAGS);
        this.seq = b.getInt(off + TcpSegment.SEQ);
        this.ack = b.getInt(off + TcpSegment.ACK);
        this.win = b.getUnsignedShort(off + TcpSegment.WINDOW);
        if (!VALID_FLAGS[flags & ~(TcpSegment.PSH | TcpSegment.ECE | TcpSegment.CWR)]) {
            return ConntrackInvalid.TCP_BAD_FLAGS;
        }
        return null;
    }

    private boolean has(int f) {
        return (flags & f) != 0;
    }

    /** get_conntrack_index. */
    private int index() {
        if (has(TcpSegment.RST)) {
            return RST_SET;
        }
        if (has(TcpSegment.SYN)) {
            return has(TcpSegment.ACK_FLAG) ? SYNACK_SET : SYN_SET;
        }
        if (has(TcpSegment.FIN)) {
            return FIN_SET;
        }
        return has(TcpSegment.ACK_FLAG) ? ACK_SET : NONE_SET;
    }

    /** The sequence number after the segment: its data, plus one for SYN and one for FIN. */
    private int end() {
        return seq + seglen - dataoff + (has(TcpSegment.SYN) ? 1 : 0) + (has(TcpSegment.FIN) ? 1 : 0);
    }

    /**
     * tcp_new: whether the parsed segment may start tracking — a SYN, or with nf_conntrack_tcp_loose an ACK picked
     * up mid-stream (both directions then checked liberally, the window scale being unknown).
     */
    boolean newConnection(ConntrackEntry ct, Knobs knobs) {
        int next = TRANSITIONS[0][index()][NONE];
        if (next == IV) {
            why = ConntrackInvalid.TCP_NOT_SYN;
            return false;
        }
        TcpConntrackState t = new TcpConntrackState();
        TcpConntrackState.Seen s = t.seen[0];
        s.end = end();
        s.maxwin = win == 0 ? 1 : win;
        if (next == SYN_SENT) {
            s.maxend = s.end;
            options(s);
        } else {
            if (knobs.get(ConntrackSysctl.TCP_LOOSE) == 0) {
                why = ConntrackInvalid.TCP_NOT_SYN;
                return false;
            }
            s.maxend = s.end + s.maxwin;
            s.flags = t.seen[1].flags = TcpConntrackState.FLAG_SACK_PERM | TcpConntrackState.FLAG_BE_LIBERAL;
        }
        ct.tcp = t;
        return true;
    }

    /**
     * tcp_packet: moves the connection's state for the parsed segment travelling in direction {@code dir}, checks
     * it against the windows, and sets the entry's timeout. Returns ACCEPT, INVALID (with {@link #why}) or REPEAT.
     */
    int packet(ConntrackEntry ct, int dir, ConntrackTable table, Knobs knobs) {
        TcpConntrackState t = ct.tcp;
        int index = index();
        int old = t.state;
        int next = TRANSITIONS[dir][index][old];
        switch (next) {
            case SYN_SENT -> {
                if (old >= TIME_WAIT) {
                    // A SYN on a closed connection: a new one reusing the ports (RFC 1122 4.2.2.13) if this one was
                    // closed by FINs or reset by the same side; then the old entry goes and the SYN is tracked afresh.
                    if (((t.seen[dir].flags | t.seen[1 - dir].flags) & TcpConntrackState.FLAG_CLOSE_INIT) != 0
                            || (t.lastDir == dir && t.lastIndex == RST_SET)) {
                        table.delete(ct);
                        return REPEAT;
                    }
                    return ignore(t, dir, index, old);
                }
            }
            case IG -> {
                if (index == SYNACK_SET && t.lastIndex == SYN_SET && t.lastDir != dir && ack == t.lastEnd) {
                    // The answer to a SYN we let through unbelieved: the ends restarted the connection and we
                    // missed its end. Take up the new one from the SYN kept aside and this SYN/ACK.
                    TcpConntrackState.Seen client = t.seen[t.lastDir];
                    client.end = client.maxend = t.lastEnd;
                    client.maxwin = t.lastWin == 0 ? 1 : t.lastWin;
                    client.scale = t.lastWscale;
                    client.flags = t.lastFlags;
                    t.seen[dir].clear();
                    old = SYN_SENT;
                    next = SYN_RECV;
                } else {
                    return ignore(t, dir, index, old);
                }
            }
            case IV -> {
                why = ConntrackInvalid.TCP_BAD_TRANSITION;
                return INVALID;
            }
            case CLOSE -> {
                if (index == RST_SET) {
                    TcpConntrackState.Seen peer = t.seen[1 - dir];
                    if ((peer.flags & TcpConntrackState.FLAG_MAXACK_SET) != 0) {
                        // With tcp_ignore_invalid_rst Linux skips only this check; the window check below stays.
                        if (before(seq, peer.maxack) && knobs.get(ConntrackSysctl.TCP_IGNORE_INVALID_RST) == 0) {
                            why = ConntrackInvalid.TCP_BAD_RST;
                            return INVALID;
                        }
                        boolean established = ct.hasStatus(IpConntrackStatus.ASSURED) && old == ESTABLISHED;
                        if (established && seq != peer.maxack
                                && !(t.lastIndex == ACK_SET && t.lastDir == dir && seq == t.lastEnd)) {
                            // A RST not exactly at the acknowledged sequence may be answered by a challenge ACK
                            // (RFC 5961): keep the state until one that is exact.
                            next = old;
                        }
                    }
                }
            }
            default -> {
            }
        }
        if (!inWindow(t, dir, index, knobs)) {
            why = ConntrackInvalid.TCP_OUT_OF_WINDOW;
            return INVALID;
        }
        t.lastIndex = index;
        t.lastDir = dir;
        t.state = next;
        if (old != next && next == FIN_WAIT) {
            t.seen[dir].flags |= TcpConntrackState.FLAG_CLOSE_INIT;
        }
        long timeout = timeout(t, next, index, knobs);
        if (!ct.hasStatus(IpConntrackStatus.SEEN_REPLY)) {
            if (has(TcpSegment.RST)) {
                // A reset before any answer (a refused connection): the attempt is over, nothing to keep.
                if (ct.confirmed()) {
                    table.delete(ct);
                } else {
                    ct.setStatusBits(IpConntrackStatus.DYING);
                }
                return ACCEPT;
            }
            // Picked up mid-stream and not yet answered: not the five days of ESTABLISHED.
            long unack = seconds(knobs, ConntrackSysctl.TCP_TIMEOUT_UNACKNOWLEDGED);
            if (next == ESTABLISHED && timeout > unack) {
                timeout = unack;
            }
        } else if (!ct.hasStatus(IpConntrackStatus.ASSURED) && (old == SYN_RECV || old == ESTABLISHED)
                && next == ESTABLISHED) {
            // The handshake completed (or a picked-up connection was answered and acknowledged).
            ct.setStatusBits(IpConntrackStatus.ASSURED);
        }
        ConntrackCore.refresh(ct, table, timeout);
        return ACCEPT;
    }

    /**
     * A segment that may belong to a connection the ends have and we do not (a SYN reusing the ports of an entry
     * still open here): it passes, changes no state and no timeout, and is remembered — with a SYN's options — in
     * case the answer proves it real.
     */
    private int ignore(TcpConntrackState t, int dir, int index, int old) {
        t.lastIndex = index;
        t.lastDir = dir;
        t.lastSeq = seq;
        t.lastEnd = end();
        t.lastWin = win;
        if (index == SYN_SET && dir == 0) {
            TcpConntrackState.Seen offered = this.offered;
            offered.clear();
            options(offered);
            t.lastFlags = offered.flags & (TcpConntrackState.FLAG_WINDOW_SCALE | TcpConntrackState.FLAG_SACK_PERM);
            t.lastWscale = (offered.flags & TcpConntrackState.FLAG_WINDOW_SCALE) != 0 ? offered.scale : 0;
        }
        if (old == SYN_SENT && index == ACK_SET && dir == 1) {
            // Possibly a challenge ACK answering the SYN.
            t.lastAck = ack;
        }
        return ACCEPT;
    }

    private static long seconds(Knobs knobs, LongKnob k) {
        return knobs.get(k) * 1_000_000_000L;
    }

    private long timeout(TcpConntrackState t, int state, int index, Knobs knobs) {
        long base = seconds(knobs, TIMEOUTS[state]);
        long retrans = seconds(knobs, ConntrackSysctl.TCP_TIMEOUT_MAX_RETRANS);
        if (t.retrans >= knobs.get(ConntrackSysctl.TCP_MAX_RETRANS) && base > retrans) {
            return retrans;
        }
        if (index == RST_SET) {
            return seconds(knobs, ConntrackSysctl.TCP_TIMEOUT_CLOSE);
        }
        long unack = seconds(knobs, ConntrackSysctl.TCP_TIMEOUT_UNACKNOWLEDGED);
        if (((t.seen[0].flags | t.seen[1].flags) & TcpConntrackState.FLAG_DATA_UNACKNOWLEDGED) != 0 && base > unack) {
            return unack;
        }
        if (t.lastWin == 0 && base > retrans) {
            return retrans;
        }
        return base;
    }

    /** tcp_in_window: the window checks, and on success the windows updated from the segment. */
    private boolean inWindow(TcpConntrackState t, int dir, int index, Knobs knobs) {
        TcpConntrackState.Seen sender = t.seen[dir];
        TcpConntrackState.Seen receiver = t.seen[1 - dir];
        int seq = this.seq;
        int ack = this.ack;
        int end = end();
        int win = this.win;
        int sack = ack;
        boolean syn = has(TcpSegment.SYN);
        boolean hasAck = has(TcpSegment.ACK_FLAG);
        if ((receiver.flags & TcpConntrackState.FLAG_SACK_PERM) != 0 && hasAck) {
            sack = highestSack(ack);
        }
        if (sender.maxwin == 0) {
            // The first segment seen in this direction.
            if (syn) {
                sender.end = sender.maxend = end;
                sender.maxwin = win == 0 ? 1 : win;
                options(sender);
                // Scaling applies only when both SYNs offered it (RFC 7323).
                if ((sender.flags & TcpConntrackState.FLAG_WINDOW_SCALE) == 0
                        || (receiver.flags & TcpConntrackState.FLAG_WINDOW_SCALE) == 0) {
                    sender.scale = receiver.scale = 0;
                }
                if (!hasAck) {
                    return true;
                }
            } else {
                // Picked up mid-stream in this direction: believe the segment.
                sender.end = end;
                int swin = win << sender.scale;
                sender.maxwin = swin == 0 ? 1 : swin;
                sender.maxend = end + sender.maxwin;
                if (receiver.maxwin == 0) {
                    receiver.end = receiver.maxend = sack;
                } else if (sack == receiver.end + 1) {
                    receiver.end++;
                }
            }
        } else if (syn && after(end, sender.end)
                && ((t.state == SYN_SENT && dir == 0) || (t.state == SYN_RECV && dir == 1))) {
            // A SYN (or SYN/ACK) sent again with a new initial sequence: the side starts over.
            sender.end = sender.maxend = end;
            sender.maxwin = win == 0 ? 1 : win;
            options(sender);
        }
        if (!hasAck) {
            ack = sack = receiver.end;
        } else if (has(TcpSegment.RST) && ack == 0) {
            // Stacks that send RST|ACK with a zero acknowledgement.
            ack = sack = receiver.end;
        }
        if (has(TcpSegment.RST) && seq == 0 && t.state == SYN_SENT) {
            // A reset answering our SYN carries no sequence of its own.
            seq = end = sender.end;
        }
        int maxAckWindow = Math.max(sender.maxwin, 66000);
        // Before the receiver's first segment its window is unknown: nothing to be below yet.
        boolean inReceiveWindow = receiver.maxwin == 0 || after(end, sender.end - receiver.maxwin - 1);
        boolean ok = before(seq, sender.maxend + 1)
                && inReceiveWindow
                && before(sack, receiver.end + 1)
                && after(sack, receiver.end - maxAckWindow - 1);
        if (!ok) {
            return (sender.flags & TcpConntrackState.FLAG_BE_LIBERAL) != 0
                    || knobs.get(ConntrackSysctl.TCP_BE_LIBERAL) != 0;
        }
        if (!syn) {
            win <<= sender.scale;
        }
        int swin = win + (sack - ack);
        if (Integer.compareUnsigned(sender.maxwin, swin) < 0) {
            sender.maxwin = swin;
        }
        if (after(end, sender.end)) {
            sender.end = end;
            sender.flags |= TcpConntrackState.FLAG_DATA_UNACKNOWLEDGED;
        }
        if (hasAck) {
            if ((sender.flags & TcpConntrackState.FLAG_MAXACK_SET) == 0) {
                sender.maxack = ack;
                sender.flags |= TcpConntrackState.FLAG_MAXACK_SET;
            } else if (after(ack, sender.maxack)) {
                sender.maxack = ack;
            }
        }
        if (receiver.maxwin != 0 && after(end, sender.maxend)) {
            receiver.maxwin += end - sender.maxend;
        }
        if (after(sack + win, receiver.maxend - 1)) {
            receiver.maxend = sack + win;
            if (win == 0) {
                receiver.maxend++;
            }
        }
        if (ack == receiver.end) {
            receiver.flags &= ~TcpConntrackState.FLAG_DATA_UNACKNOWLEDGED;
        }
        if (index == ACK_SET) {
            if (t.lastDir == dir && t.lastSeq == seq && t.lastAck == ack && t.lastEnd == end && t.lastWin == win) {
                t.retrans++;
            } else {
                t.lastDir = dir;
                t.lastSeq = seq;
                t.lastAck = ack;
                t.lastEnd = end;
                t.lastWin = win;
                t.retrans = 0;
            }
        }
        return true;
    }

    /** tcp_options: the window scale (at most 14) and SACK permission a SYN offers. */
    private void options(TcpConntrackState.Seen s) {
        s.scale = 0;
        s.flags &= ~(TcpConntrackState.FLAG_WINDOW_SCALE | TcpConntrackState.FLAG_SACK_PERM);
        int i = off + TcpSegment.MIN_HEADER_LEN;
        int limit = off + dataoff;
        while (i < limit) {
            int kind = buf.getUnsignedByte(i);
            if (kind == 0) {
                return;
            }
            if (kind == 1) {
                i++;
                continue;
            }
            if (i + 1 >= limit) {
                return;
            }
            int size = buf.getUnsignedByte(i + 1);
            if (size < 2 || i + size > limit) {
                return;
            }
            if (kind == 4 && size == 2) {
                s.flags |= TcpConntrackState.FLAG_SACK_PERM;
            } else if (kind == 3 && size == 3) {
                s.scale = Math.min(buf.getUnsignedByte(i + 2), 14);
                s.flags |= TcpConntrackState.FLAG_WINDOW_SCALE;
            }
            i += size;
        }
    }

    /** tcp_sack: the highest right edge of the SACK blocks if beyond {@code ack}, else {@code ack}. */
    private int highestSack(int ack) {
        int sack = ack;
        int i = off + TcpSegment.MIN_HEADER_LEN;
        int limit = off + dataoff;
        while (i < limit) {
            int kind = buf.getUnsignedByte(i);
            if (kind == 0) {
                break;
            }
            if (kind == 1) {
                i++;
                continue;
            }
            if (i + 1 >= limit) {
                break;
            }
            int size = buf.getUnsignedByte(i + 1);
            if (size < 2 || i + size > limit) {
                break;
            }
            if (kind == 5 && size >= 10 && (size - 2) % 8 == 0) {
                for (int b = i + 2; b < i + size; b += 8) {
                    int right = buf.getInt(b + 4);
                    if (after(right, sack)) {
                        sack = right;
                    }
                }
            }
            i += size;
        }
        return sack;
    }
}
