package dev.usnet.tcp.cc;

/**
 * tcp_cong_avoid_ai in its three kernel-version forms: grow snd_cwnd by one for every {@code w} packets
 * acknowledged, keeping the count in snd_cwnd_cnt. The forms differ in what they do with {@code acked} and with
 * credit built up while {@code w} was larger (the 3.19 credit bug).
 */
public final class AdditiveIncrease {
    private AdditiveIncrease() {}

    public static void apply(CwndState s, long w, long acked, CcSwitches.AiMode mode) {
        if (w <= 0) {
            throw new IllegalArgumentException("w must be positive, got " + w);
        }
        switch (mode) {
            case PER_ACK -> {
                if (s.sndCwndCnt >= w) {
                    if (s.sndCwnd < s.sndCwndClamp) {
                        s.sndCwnd++;
                    }
                    s.sndCwndCnt = 0;
                } else {
                    s.sndCwndCnt++;
                }
            }
            case ACCUMULATE -> accumulate(s, w, acked);
            case GENTLE -> {
                if (s.sndCwndCnt >= w) {
                    // Credit earned at a larger window: one packet now, the rest forgotten.
                    s.sndCwndCnt = 0;
                    s.sndCwnd++;
                }
                accumulate(s, w, acked);
            }
        }
    }

    private static void accumulate(CwndState s, long w, long acked) {
        s.sndCwndCnt += acked;
        if (s.sndCwndCnt >= w) {
            long delta = s.sndCwndCnt / w;
            s.sndCwndCnt -= delta * w;
            s.sndCwnd += delta;
        }
        s.sndCwnd = Math.min(s.sndCwnd, s.sndCwndClamp);
    }
}
