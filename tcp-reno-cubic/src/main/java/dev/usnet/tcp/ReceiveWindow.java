package dev.usnet.tcp;

/**
 * The window this receiver offers (tcp_select_window, __tcp_select_window, tcp_receive_window): free receive
 * buffer, scaled, with receiver-side silly-window avoidance, and never moving its right edge left once offered.
 */
final class ReceiveWindow {
    private final TcpSock sk;
    /** rcv_wnd: the window last advertised, in bytes. */
    long rcvWnd;
    /** rcv_wup: rcv_nxt when that window was advertised. */
    long rcvWup;

    ReceiveWindow(TcpSock sk) {
        this.sk = sk;
    }

    /** tcp_receive_window: what is left of the window last advertised. */
    long remaining() {
        long w = Seq.sub(Seq.add(rcvWup, rcvWnd), sk.rcvNxt);
        return Math.max(0, w);
    }

    /** tcp_space: the window the free receive buffer gives (with buffers=max, the free buffer itself). */
    long freeSpace() {
        return Math.max(0, sk.autotune.winFromSpace(sk.rcvbuf) - sk.rq.queuedBytes() - sk.rq.outOfOrderBytes());
    }

    /** __tcp_select_window without side effects: the window we would offer now. */
    long selectWindowPeek() {
        if (sk.autotune.on) {
            return selectWindowAutotuned();
        }
        long free = freeSpace();
        int rcvbuf = sk.rcvbuf;
        // Receiver-side silly window avoidance: with less than half the buffer free, offer nothing rather
        // than a sliver smaller than a segment (or a sixteenth of the buffer).
        if (free < rcvbuf / 2 && (free < rcvbuf / 16 || free < sk.rcvMss)) {
            return 0;
        }
        int ws = sk.rcvWscale;
        long maxWin = 65_535L << ws;
        long w = Math.min(free, maxWin);
        // Keep the window a multiple of the scale unit so nothing is lost to the shift.
        return w >> ws << ws;
    }

    /**
     * __tcp_select_window of Linux 3.18-4.3: the free space, at most rcv_ssthresh (which autotuning opens), with the
     * same silly-window rule against the full space bounded by window_clamp; rounded up to the scale unit so it
     * is not scaled away, or without scaling kept at the last offer while that still fits.
     */
    private long selectWindowAutotuned() {
        BufferAutotune at = sk.autotune;
        long allowed = at.fullSpace();
        long full = Math.min(at.windowClamp, allowed);
        long mss = Math.min(sk.rcvMss, full);
        long free = freeSpace();
        int ws = sk.rcvWscale;
        if (free < full >> 1) {
            free = free >> ws << ws;
            if (free < allowed >> 4 || free < mss) {
                return 0;
            }
        }
        if (free > at.rcvSsthresh) {
            free = at.rcvSsthresh;
        }
        long window;
        if (ws != 0) {
            window = free;
            if (window >> ws << ws != window) {
                window = (window >> ws) + 1 << ws;
            }
        } else {
            window = rcvWnd;
            if (window <= free - mss || window > free) {
                window = mss > 0 ? free / mss * mss : free;
            } else if (mss == full && free > window + (full >> 1)) {
                window = free;
            }
        }
        return Math.min(window, 65_535L << ws);
    }

    /** tcp_select_window: the offered window never moves its right edge left. Returns the header value. */
    int selectWindow() {
        long w = selectWindowPeek();
        long curWin = remaining();
        int ws = sk.rcvWscale;
        if (w < curWin) {
            // Never shrink: keep the edge we already offered.
            w = curWin + (1L << ws) - 1 >> ws << ws;
        }
        rcvWnd = w;
        rcvWup = sk.rcvNxt;
        return (int) Math.min(65_535, w >> ws);
    }

    /**
     * The window of a SYN or SYN-ACK, which is never scaled, in whole MSS-sized segments (a SYN-ACK knows
     * timestamps are on and rounds by the MSS they leave). Autotuned (Linux 3.18-4.3): 10 segments, 14600 for MSS
     * 1460 and 14480 = 10 * 1448 in a SYN-ACK with timestamps. With usnet.tcp.buffers=max the whole 16-bit window:
     * 64240 for MSS 1460, 65160 = 45 * 1448 (which is also what Linux 4.20 and later offer).
     */
    int selectSynWindow() {
        int unit = sk.state == TcpState.SYN_RECV && sk.tsOk ? sk.advMss - 12 : sk.advMss;
        if (sk.autotune.on) {
            // tcp_select_initial_window: 10 segments, within the buffer; the SYN shows it unscaled.
            rcvWnd = sk.autotune.initialWindow(unit);
            rcvWup = sk.rcvNxt;
            return (int) Math.min(65_535, rcvWnd);
        }
        int synWin = synWindow(freeSpace(), unit);
        rcvWnd = synWin;
        rcvWup = sk.rcvNxt;
        return synWin;
    }

    /** A SYN's window for {@code free} bytes of buffer: at most 64 KiB less one, in whole {@code unit}s. */
    static int synWindow(long free, int unit) {
        long synWin = Math.min(65_535, free);
        if (synWin > unit) {
            synWin = synWin / unit * unit;
        }
        return (int) synWin;
    }

    /** tcp_cleanup_rbuf: after the application read, announce a window that grew a lot. */
    void afterRead() {
        TcpState st = sk.state;
        if (st == TcpState.CLOSED || !st.receivesData()) {
            return;
        }
        long rcvWindowNow = remaining();
        // Linux compares with window_clamp; usnet.tcp.buffers=max keeps usnet's comparison with the last offer.
        long bound = sk.autotune.on ? sk.autotune.windowClamp : rcvWnd;
        if (2 * rcvWindowNow <= bound || sk.delack.ackPending && Seq.sub(sk.rcvNxt, rcvWup) > sk.rcvMss) {
            long newWindow = selectWindowPeek();
            if (newWindow >= 2 * rcvWindowNow && newWindow > 0) {
                sk.out.sendAck();
            }
        }
    }
}
