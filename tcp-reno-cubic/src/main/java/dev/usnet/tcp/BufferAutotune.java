package dev.usnet.tcp;

import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.tcp.TcpSysctl.BufferMode;

/**
 * Socket-buffer autotuning as Linux 3.18 to 4.3 do it (usnet.tcp.buffers=autotune), the same in the four presets:
 * <ul>
 * <li>the initial receive window of 10 segments and the window scale (tcp_select_initial_window),
 * <li>the buffers fixed when the connection is established (tcp_init_buffer_space: tcp_fixup_rcvbuf,
 *     tcp_sndbuf_expand, the window clamp),
 * <li>rcv_ssthresh, the limit the offered window opens to, growing per in-order segment (tcp_grow_window),
 * <li>the receive buffer and window clamp growing per receiver RTT from the bytes the application read
 *     (tcp_rcv_space_adjust, "dynamic right sizing" as rewritten in 3.13, with net.ipv4.tcp_moderate_rcvbuf),
 *     with the receiver's RTT estimate (tcp_rcv_rtt_measure, tcp_rcv_rtt_measure_ts),
 * <li>the send buffer growing with cwnd when a writer waits for room (tcp_new_space, tcp_sndbuf_expand),
 * <li>SO_RCVBUF / SO_SNDBUF locking each off (SOCK_RCVBUF_LOCK, SOCK_SNDBUF_LOCK).
 * </ul>
 * With usnet.tcp.buffers=max nothing here acts: buffers stay at tcp_rmem/tcp_wmem max, the window is the free buffer
 * (usnet's behaviour before autotuning, kept so results stay comparable).
 *
 * <p>Differs: Linux charges buffers with skb truesize (payload plus sk_buff overhead); usnet holds payload only, so
 * the offered window is tcp_win_from_space(sk_rcvbuf) less the payload queued, and the send buffer's sk_sndbuf bounds
 * the payload written but not yet acknowledged (as Linux's sk_wmem_queued does for TSO-sized skbs, whose overhead is
 * small). The per-skb sizes below are an x86_64 distribution kernel's; they depend on the kernel's configuration.
 * rcv_ssthresh grows by 2 * advmss per segment as for an skb whose truesize is at most twice its length
 * (__tcp_grow_window's smaller steps for fat skbs are not modelled). Memory pressure (tcp_mem) is not modelled.
 */
final class BufferAutotune {
    /** MAX_TCP_HEADER: 128 + MAX_HEADER (LL_MAX_HEADER 128 + 48 for tunnels). */
    static final int MAX_TCP_HEADER = 304;
    /** SKB_DATA_ALIGN(sizeof(struct sk_buff)). */
    static final int SKB_STRUCT = 256;
    /** SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) with 17 fragments. */
    static final int SKB_SHARED_INFO = 320;
    /** TCP_DEFAULT_INIT_RCVWND: the initial receive window in segments (3.x to 4.19). */
    static final int TCP_INIT_RCVWND = 10;
    /** TCP_INIT_CWND, the floor of tcp_sndbuf_expand's segment count. */
    static final int TCP_INIT_CWND = 10;
    /** net.ipv4.tcp_app_win's default: 1/2^31 of the window is kept for the application, i.e. nothing. */
    static final int TCP_APP_WIN = 31;
    /** SOCK_MIN_RCVBUF / SOCK_MIN_SNDBUF: 2 * (2048 + sizeof(struct sk_buff)). */
    static final int SOCK_MIN_BUF = 2 * (2048 + SKB_STRUCT);
    /** The largest window without scaling, and the largest shift (RFC 7323). */
    private static final long MAX_CLAMP = 65_535L << 14;

    private final TcpSock sk;
    /** usnet.tcp.buffers=autotune. */
    final boolean on;
    private final boolean moderateRcvbuf;
    private final int advWinScale;
    private final long rmemMax;
    private final long wmemMax;

    /** window_clamp: the largest window this receiver will ever offer. */
    long windowClamp = MAX_CLAMP;
    /** rcv_ssthresh: the limit the offered window grows to (slow start of the receive window). */
    long rcvSsthresh = Long.MAX_VALUE;
    /** sk_sndbuf: bytes written and not yet acknowledged that the socket holds. */
    int sndbuf;

    /** usnet.tcp.init_rwnd: how the SYN's window is sized. */
    private final InitialRwndSysctl.Rule initRwnd;

    // rcvq_space: the bytes read per receiver RTT at the last adjustment, and where that measurement began.
    private long spaceBytes;
    private long spaceSeq;
    private long spaceTime;
    /** copied_seq as a count: bytes the application has read. */
    private long copied;
    // rcv_rtt_est: the receiver's RTT in jiffies << 3 (0: none yet), and the window-based measurement under way.
    private long rcvRtt8;
    private long rttEstSeq;
    private long rttEstTime;
    private boolean rttEstStarted;

    BufferAutotune(TcpSock sk, int sndbuf) {
        this.sk = sk;
        var knobs = sk.stack.knobs();
        this.on = knobs.get(TcpSysctl.BUFFERS) == BufferMode.AUTOTUNE;
        this.moderateRcvbuf = knobs.get(TcpSysctl.MODERATE_RCVBUF) != 0;
        this.advWinScale = (int) knobs.get(TcpSysctl.ADV_WIN_SCALE);
        this.rmemMax = knobs.get(TcpSysctl.RMEM).max();
        this.wmemMax = knobs.get(TcpSysctl.WMEM).max();
        this.sndbuf = sndbuf;
        this.initRwnd = InitialRwndSysctl.rule(knobs);
    }

    /** tcp_win_from_space: how much of {@code space} bytes of buffer is offered as window. */
    long winFromSpace(long space) {
        return winFromSpace(space, on ? advWinScale : 0);
    }

    static long winFromSpace(long space, int advWinScale) {
        if (advWinScale == 0) {
            return space;
        }
        return advWinScale < 0 ? space >> -advWinScale : space - (space >> advWinScale);
    }

    /** tcp_full_space: the window the whole receive buffer would give. */
    long fullSpace() {
        return winFromSpace(sk.rcvbuf);
    }

    /** SKB_TRUESIZE: the memory an skb of {@code len} linear bytes takes. */
    static long truesize(long len) {
        return len + SKB_STRUCT + SKB_SHARED_INFO;
    }

    /** tcp_default_init_rwnd: 10 segments up to MSS 1460, 14600 bytes' worth (at least 2) above. */
    static int initRcvWndSegments(int mss) {
        return mss > 1460 ? Math.max(1460 * TCP_INIT_RCVWND / mss, 2) : TCP_INIT_RCVWND;
    }

    // ------------------------------------------------------------------------------------------------------
    // Opening

    /** The window scale a SYN offers: from tcp_rmem max, or from the locked buffer (tcp_select_initial_window). */
    int windowScale() {
        long space = sk.rcvbufLocked ? Math.min(rmemMax, fullSpace()) : rmemMax;
        return TcpSock.windowScaleFor(space);
    }

    /**
     * tcp_select_initial_window for a SYN or SYN-ACK whose window counts whole segments of {@code unit} bytes:
     * returns rcv_wnd and sets window_clamp and rcv_ssthresh (tcp_connect_init, tcp_openreq_init_rwin).
     */
    long initialWindow(int unit) {
        long clamp = sk.rcvbufLocked ? fullSpace() : MAX_CLAMP;
        long rcvWnd = initialWindow(fullSpace(), clamp, unit, sk.rcvWscale, initRwnd);
        windowClamp = Math.min(65_535L << sk.rcvWscale, clamp);
        rcvSsthresh = rcvWnd;
        return rcvWnd;
    }

    /**
     * tcp_select_initial_window's rcv_wnd for {@code fullSpace} bytes of window space under {@code rule} (no side
     * effects).
     */
    static long initialWindow(long fullSpace, long clamp, int unit, int wscale, InitialRwndSysctl.Rule rule) {
        long space = Math.min(clamp, fullSpace);
        if (space > unit) {
            space = space / unit * unit;
        }
        if (rule == InitialRwndSysctl.Rule.SPACE) {
            // Linux 4.20+: all of it, but no more than an unscaled window field can say.
            return Math.min(space, 65_535);
        }
        long rcvWnd = space;
        if (unit > 1 << wscale) {
            rcvWnd = Math.min(rcvWnd, (long) initRcvWndSegments(unit) * unit);
        }
        return rcvWnd;
    }

    /** tcp_init_buffer_space: the connection is established; size the buffers and the window clamp. */
    void initBufferSpace() {
        if (!on) {
            return;
        }
        int advmss = sk.advMss;
        if (!sk.rcvbufLocked) {
            fixupRcvbuf(advmss);
        }
        if (!sk.sndbufLocked) {
            sndbufExpand();
        }
        spaceBytes = sk.rwnd.rcvWnd;
        spaceTime = sk.stack.jiffies();
        spaceSeq = copied;
        long maxwin = fullSpace();
        if (windowClamp >= maxwin) {
            windowClamp = maxwin;
            if (maxwin > 4L * advmss) {
                windowClamp = Math.max(maxwin - (maxwin >> TCP_APP_WIN), 4L * advmss);
            }
        }
        // Force reservation of one segment.
        if (windowClamp > 2L * advmss && windowClamp + advmss > maxwin) {
            windowClamp = Math.max(2L * advmss, maxwin - advmss);
        }
        rcvSsthresh = Math.min(rcvSsthresh, windowClamp);
    }

    /** tcp_fixup_rcvbuf: room for twice the initial window's skbs, four times that with DRS on. */
    private void fixupRcvbuf(int mss) {
        long rcvmem = 2 * truesize(mss + MAX_TCP_HEADER) * initRcvWndSegments(mss);
        if (moderateRcvbuf) {
            rcvmem <<= 2;
        }
        if (sk.rcvbuf < rcvmem) {
            sk.rcvbuf = (int) Math.min(rcvmem, rmemMax);
        }
    }

    // ------------------------------------------------------------------------------------------------------
    // Receiving

    /** tcp_event_data_recv's part: an in-order segment of {@code len} bytes was queued (rcv_nxt moved past it). */
    void dataReceived(int len) {
        if (!on) {
            return;
        }
        rcvRttMeasure();
        if (len >= 128) {
            growWindow(len);
        }
    }

    /** tcp_grow_window: while the buffer has room, rcv_ssthresh opens by two segments (or twice the skb) per skb. */
    private void growWindow(int len) {
        if (rcvSsthresh < windowClamp && rcvSsthresh < sk.rwnd.freeSpace()) {
            long incr = Math.max(2L * sk.advMss, 2L * len);
            rcvSsthresh = Math.min(rcvSsthresh + incr, windowClamp);
        }
    }

    /** tcp_rcv_rtt_measure: the time to receive a window's worth of data, once per window. */
    private void rcvRttMeasure() {
        long now = sk.stack.jiffies();
        if (rttEstStarted) {
            if (Seq.before(sk.rcvNxt, rttEstSeq)) {
                return;
            }
            rcvRttUpdate(now - rttEstTime, true);
        }
        rttEstSeq = Seq.add(sk.rcvNxt, sk.rwnd.rcvWnd);
        rttEstTime = now;
        rttEstStarted = true;
    }

    /** tcp_rcv_rtt_measure_ts: a full segment's echoed timestamp gives the receiver an RTT sample. */
    void rcvRttMeasureTs(long tsEcr, int len) {
        if (!on || tsEcr == 0 || len < sk.rcvMss) {
            return;
        }
        long ms = Seq.sub(sk.tsNow(), tsEcr);
        if (ms < 0) {
            return;
        }
        // Linux's timestamps are jiffies; usnet's tick in milliseconds.
        rcvRttUpdate(ms * (int) sk.stack.knobs().get(NetCoreSysctl.HZ) / 1000, false);
    }

    /** rcv_rtt_est in microseconds (0 before the first sample); usnet measures it in jiffies. */
    long rcvRttUs() {
        return (rcvRtt8 >> 3) * 1_000_000L / sk.stack.knobs().get(NetCoreSysctl.HZ);
    }

    /** rcvq_space.space: the bytes read per receiver RTT at the last adjustment. */
    long rcvSpace() {
        return spaceBytes;
    }

    /**
     * tcp_rcv_rtt_update: with timestamps an average (1/8 gain), per window the minimum. As in Linux, the
     * minimum compares the new sample with the scaled estimate, so a sample below rtt*8 replaces it.
     */
    private void rcvRttUpdate(long sample, boolean winDep) {
        long m = Math.max(sample, 1);
        if (rcvRtt8 != 0) {
            if (!winDep) {
                rcvRtt8 += m - (rcvRtt8 >> 3);
            } else if (m < rcvRtt8) {
                rcvRtt8 = m << 3;
            }
        } else {
            rcvRtt8 = m << 3;
        }
    }

    /**
     * The application read {@code n} bytes: tcp_rcv_space_adjust. Once per receiver RTT, if it read more than in the
     * last one, the buffer grows to hold twice that plus 16 segments — doubled again when the rate grew by half
     * (a sender in slow start), by half when it grew by a quarter — in skb truesize, up to tcp_rmem max; the window
     * clamp follows.
     */
    void copied(int n) {
        copied += n;
        if (!on) {
            return;
        }
        long now = sk.stack.jiffies();
        if (now - spaceTime < rcvRtt8 >> 3 || rcvRtt8 == 0) {
            return;
        }
        long bytes = copied - spaceSeq;
        if (bytes > spaceBytes) {
            if (moderateRcvbuf && !sk.rcvbufLocked) {
                int advmss = sk.advMss;
                long rcvwin = (bytes << 1) + 16L * advmss;
                if (bytes >= spaceBytes + (spaceBytes >> 2)) {
                    if (bytes >= spaceBytes + (spaceBytes >> 1)) {
                        rcvwin <<= 1;
                    } else {
                        rcvwin += rcvwin >> 1;
                    }
                }
                long rcvmem = truesize(advmss + MAX_TCP_HEADER);
                while (winFromSpace(rcvmem) < advmss) {
                    rcvmem += 128;
                }
                long rcvbuf = Math.min(rcvwin / advmss * rcvmem, rmemMax);
                if (rcvbuf > sk.rcvbuf) {
                    sk.rcvbuf = (int) rcvbuf;
                    windowClamp = rcvwin;
                }
            }
            spaceBytes = bytes;
        }
        spaceSeq = copied;
        spaceTime = now;
    }

    /** rcv_rtt_est.rtt in jiffies (0: no sample yet). */
    long rcvRttJiffies() {
        return rcvRtt8 >> 3;
    }

    // ------------------------------------------------------------------------------------------------------
    // Sending

    /**
     * tcp_sndbuf_expand: room for twice the larger of cwnd, the initial window and reordering + 1 in non-TSO skbs
     * (each rounded to a power-of-two allocation), up to tcp_wmem max.
     */
    void sndbufExpand() {
        long perMss = Math.max(sk.peerMss(), sk.mssCache) + MAX_TCP_HEADER + SKB_SHARED_INFO;
        perMss = Long.highestOneBit(perMss - 1) << 1;
        perMss += SKB_STRUCT;
        long nrSegs = Math.max(TCP_INIT_CWND, sk.cc.sndCwnd);
        nrSegs = Math.max(nrSegs, sk.recovery.reordering() + 1);
        long sndmem = 2 * nrSegs * perMss;
        if (sndbuf < sndmem) {
            sndbuf = (int) Math.min(sndmem, wmemMax);
            sk.sendBuf.resize(sndbuf);
        }
    }

    /**
     * tcp_new_space for a writer that waited for room (SOCK_NOSPACE) once an ACK freed some: the send buffer grows
     * unless locked or the flight already fills cwnd (tcp_should_expand_sndbuf).
     */
    void newSpace() {
        if (on && !sk.sndbufLocked && sk.sb.packetsOut() < sk.cc.sndCwnd) {
            sndbufExpand();
        }
    }

    /** Bytes written but not yet acknowledged (sk_wmem_queued, in payload). */
    private long wmemQueued() {
        return sk.sendBuf.size() + Math.max(0, Seq.sub(sk.sndNxt, sk.sndUna));
    }

    /** Bytes a write may take now: sk_sndbuf less what is queued; with buffers=max, the unsent room. */
    int sndRoom() {
        int free = sk.sendBuf.free();
        if (!on) {
            return free;
        }
        return (int) Math.max(0, Math.min(free, sndbuf - wmemQueued()));
    }

    /** sk_stream_is_writeable: free room at least half of what is queued; with buffers=max, a third free. */
    boolean writeable() {
        if (!on) {
            return sk.sendBuf.free() >= sk.sendBuf.capacity() / 3;
        }
        long queued = wmemQueued();
        return sndbuf - queued >= queued >> 1 && sk.sendBuf.free() > 0;
    }
}
