package dev.usnet.tcp.cc;

/**
 * The sender state congestion avoidance works on: snd_cwnd, snd_cwnd_cnt, snd_ssthresh, snd_cwnd_clamp. Not
 * final: {@link CcSock} extends it with the rest of what a congestion-control module sees of a connection.
 */
public class CwndState {
    public long sndCwnd;
    public long sndCwndCnt;
    public long sndSsthresh;
    public long sndCwndClamp = 0xffff_ffffL;

    public CwndState(long cwnd, long cnt, long ssthresh) {
        this.sndCwnd = cwnd;
        this.sndCwndCnt = cnt;
        this.sndSsthresh = ssthresh;
    }

    @Override
    public String toString() {
        return sndCwnd + "/" + sndCwndCnt;
    }
}
