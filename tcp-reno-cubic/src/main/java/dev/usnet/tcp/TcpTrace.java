package dev.usnet.tcp;

import dev.usnet.tcp.cc.CcSock;
import java.io.IOException;
import java.io.Writer;
import java.util.Arrays;

/**
 * A connection's congestion trace: one row per ACK and per congestion event with time, snd_cwnd,
 * snd_ssthresh, snd_cwnd_cnt, smoothed RTT, packets in flight and CA state. Rows go into growable primitive
 * arrays (no object per row), written as CSV on demand. Same inputs in virtual time, same bytes.
 */
public final class TcpTrace {
    private long[] data;
    private String[] events;
    private int rows;
    private final int maxRows;
    /** Whether ACK rows ("ack", "dupack") are kept; without them only congestion events are, a few rows per loss. */
    private final boolean acks;

    /** A trace keeping at most {@code maxRows} rows (later rows are dropped and counted). */
    public TcpTrace(int maxRows) {
        this(maxRows, true);
    }

    /**
     * A trace of at most {@code maxRows} rows; with {@code acks} false it keeps only the congestion events
     * (recovery, rto, undo, CA state changes, restart), not a row per ACK: cheap enough for every connection of a
     * large run, e.g. to read the cwnd at each loss ({@link #priorCwnd}).
     */
    public TcpTrace(int maxRows, boolean acks) {
        this.maxRows = maxRows;
        this.acks = acks;
        // A full trace starts with room for 1024 rows; an events-only one (one per connection of a large run) for 8.
        int rows0 = acks ? 1024 : 8;
        this.data = new long[rows0 * COLS];
        this.events = new String[rows0];
    }

    public TcpTrace() {
        this(10_000_000);
    }

    private static final int COLS = 8;

    void record(long nowNanos, CcSock cc, long srttUs, long inflight, String event) {
        if (rows >= maxRows || !acks && (event.equals("ack") || event.equals("dupack"))) {
            return;
        }
        int base = rows * COLS;
        if (base + COLS > data.length) {
            data = Arrays.copyOf(data, data.length * 2);
        }
        if (rows >= events.length) {
            events = Arrays.copyOf(events, events.length * 2);
        }
        data[base] = nowNanos;
        data[base + 1] = cc.sndCwnd;
        data[base + 2] = cc.sndSsthresh;
        data[base + 3] = cc.sndCwndCnt;
        data[base + 4] = srttUs;
        data[base + 5] = inflight;
        data[base + 6] = cc.caState.ordinal();
        data[base + 7] = cc.priorCwnd;
        events[rows] = event;
        rows++;
    }

    public int rows() {
        return rows;
    }

    public long timeNanos(int row) {
        return data[row * COLS];
    }

    public long cwnd(int row) {
        return data[row * COLS + 1];
    }

    public long ssthresh(int row) {
        return data[row * COLS + 2];
    }

    public long sndCwndCnt(int row) {
        return data[row * COLS + 3];
    }

    public long srttUs(int row) {
        return data[row * COLS + 4];
    }

    public long inflight(int row) {
        return data[row * COLS + 5];
    }

    /**
     * prior_cwnd at the row: the snd_cwnd the current loss episode started from (tcp_init_cwnd_reduction and
     * tcp_enter_loss save it before reducing), so on a "recovery" or "rto" row the cwnd at that loss.
     */
    public long priorCwnd(int row) {
        return data[row * COLS + 7];
    }

    /** The CA state of a row. */
    public dev.usnet.tcp.cc.CaState caState(int row) {
        return dev.usnet.tcp.cc.CaState.values()[(int) data[row * COLS + 6]];
    }

    public String event(int row) {
        return events[row];
    }

    /** Writes {@code time_us,cwnd,ssthresh,snd_cwnd_cnt,srtt_us,inflight,ca_state,event} rows. */
    public void writeCsv(Writer w) throws IOException {
        w.write("time_us,cwnd,ssthresh,snd_cwnd_cnt,srtt_us,inflight,ca_state,event\n");
        var states = dev.usnet.tcp.cc.CaState.values();
        StringBuilder b = new StringBuilder(96);
        for (int r = 0; r < rows; r++) {
            int base = r * COLS;
            b.setLength(0);
            long t = data[base];
            b.append(t / 1000).append('.').append(String.format("%03d", t % 1000)).append(',');
            b.append(data[base + 1]).append(',');
            long ss = data[base + 2];
            b.append(ss >= 0x7fff_ffffL ? "inf" : Long.toString(ss)).append(',');
            b.append(data[base + 3]).append(',').append(data[base + 4]).append(',').append(data[base + 5]).append(',');
            b.append(states[(int) data[base + 6]].ssName()).append(',').append(events[r]).append('\n');
            w.write(b.toString());
        }
    }
}
