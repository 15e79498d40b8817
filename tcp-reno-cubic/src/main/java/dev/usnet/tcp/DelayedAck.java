package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;

/**
 * When the receiver acknowledges (icsk_ack, tcp_send_delayed_ack, __tcp_ack_snd_check): at once in quick-ack
 * mode (the start of a flow, after a pause, around holes and FINs), for every second full segment, or after the
 * delayed-ACK timeout, which adapts to how fast data arrives (ato) and stays at its minimum while the exchange
 * is interactive (ping-pong).
 */
final class DelayedAck {
    static final long TCP_ATO_MIN_NANOS = 40_000_000L;
    static final long TCP_DELACK_MAX_NANOS = 200_000_000L;
    static final int TCP_MAX_QUICKACKS = 16;

    private final TcpSock sk;
    /** An ACK is owed for data or a FIN received. */
    boolean ackPending;
    int quickAcks;
    boolean pingpong;
    long atoNanos;
    /** When data last arrived (icsk_ack.lrcvtime). */
    long lrcvNanos;

    DelayedAck(TcpSock sk) {
        this.sk = sk;
    }

    /** The connection is established: the first data triggers quick-ack mode (ato == 0). */
    void established() {
        atoNanos = 0;
    }

    /** An ACK is owed and should go soon: at least the next one is sent at once. */
    void ackSoon() {
        ackPending = true;
        quickAckNext();
    }

    /** The next ACK goes out at once (filling a hole, a FIN, out-of-order data). */
    void quickAckNext() {
        quickAcks = Math.max(quickAcks, 1);
    }

    /** tcp_enter_quickack_mode: acknowledge the next segments at once. */
    void enterQuickAckMode() {
        incrQuickAck();
        pingpong = false;
        atoNanos = TCP_ATO_MIN_NANOS;
    }

    private void incrQuickAck() {
        long q = sk.rwnd.rcvWnd / (2L * Math.max(sk.rcvMss, 1));
        q = Math.max(2, Math.min(q, TCP_MAX_QUICKACKS));
        if (q > quickAcks) {
            quickAcks = (int) q;
        }
    }

    /** tcp_event_data_recv: the delayed-ACK timeout adapts to how fast data arrives. */
    void dataReceived(int payload, long now) {
        if (payload == 0) {
            return;
        }
        long m = now - lrcvNanos;
        lrcvNanos = now;
        if (atoNanos == 0) {
            incrQuickAck();
            atoNanos = TCP_ATO_MIN_NANOS;
        } else {
            long rto = sk.rtt.rtoNanos;
            if (m <= TCP_ATO_MIN_NANOS / 2) {
                atoNanos = (atoNanos >> 1) + TCP_ATO_MIN_NANOS / 2;
            } else if (m < atoNanos) {
                atoNanos = (atoNanos >> 1) + m;
                if (atoNanos > rto) {
                    atoNanos = rto;
                }
            } else if (m > rto) {
                // A long pause: the sender may be restarting slowly, so acknowledge quickly again.
                incrQuickAck();
            }
        }
    }

    /** Data is sent within the delayed-ACK timeout of the last data received: an interactive exchange. */
    void dataSent(long now) {
        if (now - lrcvNanos < atoNanos) {
            pingpong = true;
        }
    }

    /** __tcp_ack_snd_check: acknowledge now, or arm the delayed-ACK timer. */
    void ackSndCheck() {
        if (!ackPending) {
            return;
        }
        boolean fullSegments = Seq.sub(sk.rcvNxt, sk.rwnd.rcvWup) > sk.rcvMss
                && sk.rwnd.selectWindowPeek() >= sk.rwnd.rcvWnd;
        boolean quick = quickAcks > 0 && !pingpong;
        if (fullSegments || quick || sk.rq.hasOutOfOrder()) {
            sk.out.sendAck();
            return;
        }
        SockTimer t = sk.timers.delack;
        if (!t.isArmed()) {
            // tcp_send_delayed_ack: the timer runs for ato, which is 0 until the first data arrives (a bare FIN
            // then is acknowledged at the next tick).
            long ato = atoNanos == 0 ? 0 : Math.max(atoNanos, TCP_ATO_MIN_NANOS);
            t.arm(Math.min(ato, TCP_DELACK_MAX_NANOS));
        }
    }

    /** A segment carrying an ACK went out: nothing is owed any more. */
    void ackSent() {
        ackPending = false;
        sk.timers.delack.cancel();
        if (quickAcks > 0) {
            quickAcks--;
        }
    }

    /**
     * TCP_QUICKACK: off enters ping-pong mode (ACKs are delayed); on leaves it and acknowledges at once what is owed
     * on an open connection (__tcp_sock_set_quickack).
     */
    void setQuickAck(boolean on) {
        if (!on) {
            pingpong = true;
            return;
        }
        pingpong = false;
        TcpState st = sk.state;
        if (ackPending && (st == TcpState.ESTABLISHED || st == TcpState.CLOSE_WAIT)) {
            sk.out.sendAck();
        }
    }

    /** The delayed-ACK timer fired (tcp_delack_timer). */
    void timerFired() {
        if (!ackPending || sk.state == TcpState.CLOSED) {
            return;
        }
        sk.stack.mib().inc(Mib.TcpExtDelayedACKs);
        if (pingpong) {
            // The exchange stopped being interactive: leave ping-pong mode (Linux's delayed-ACK timer does this).
            pingpong = false;
            atoNanos = TCP_ATO_MIN_NANOS;
        } else {
            atoNanos = Math.min(atoNanos << 1, sk.rtt.rtoNanos);
        }
        sk.out.sendAck();
    }
}
