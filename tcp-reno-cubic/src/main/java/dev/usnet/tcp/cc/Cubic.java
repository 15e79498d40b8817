package dev.usnet.tcp.cc;

/**
 * CUBIC with HyStart (net/ipv4/tcp_cubic.c, "cubic"), as Linux 3.18 to 4.3 run it, with the version
 * differences taken from {@link CcSwitches}: per-ACK counting with the delayed-ACK ratio (3.18) or per-packet
 * counting (3.19+), the HZ/32 update limit (3.18) or once per jiffy (3.19+), the cnt floor (1, or 2 from 4.0),
 * and the epoch shift over idle time (4.3). One instance per connection holds what Linux keeps in struct bictcp.
 *
 * <p>Time is what those kernels use: the epoch in jiffies of {@code sk.hz()} (tcp_time_stamp), HyStart's clock in
 * ms and delay_min in ms × 8 — or both in µs with {@link CcSwitches#cubicHystartUs}. The kernel's fields are
 * u32; they are Java ints here and wrap like the kernel's, compared unsigned where the kernel compares
 * unsigned, so the integer quirks (truncations, the u64 cube wrapping after hundreds of seconds off the curve)
 * come out the same.
 */
public final class Cubic implements CongestionOps {
    private static final long U32 = 0xffff_ffffL;
    /** beta and the fast-convergence factor are in 1/1024. */
    private static final int BICTCP_BETA_SCALE = 1024;
    /** CUBIC's time unit is 1/2^BICTCP_HZ s. */
    private static final int BICTCP_HZ = 10;
    /** 3.18's delayed_ack is an average number of packets per ACK in 1/16. */
    private static final int ACK_RATIO_SHIFT = 4;
    private static final int ACK_RATIO_LIMIT = 32 << ACK_RATIO_SHIFT;
    private static final int DELAYED_ACK_INITIAL = 2 << ACK_RATIO_SHIFT;
    /** HyStart's delay detector compares the minimum of this many samples per round. */
    private static final int HYSTART_MIN_SAMPLES = 8;
    /** The delay detector's margin is delay_min / 8, clamped to 4..16 ms (here in the ms × 8 unit). */
    private static final int HYSTART_DELAY_MIN = 4 << 3;
    private static final int HYSTART_DELAY_MAX = 16 << 3;
    /** The same margin in µs, for the µs clock. */
    private static final int HYSTART_DELAY_MIN_US = 4000;
    private static final int HYSTART_DELAY_MAX_US = 16000;

    private final CubicParams params;
    /** beta_scale: Reno's growth relative to CUBIC's ack counting, 8 × (1 + beta) / 3 / (1 − beta) = 15. */
    private final int betaScale;
    /** cube_rtt_scale: C in 1/1024 (bic_scale × 10 = 410). */
    private final long cubeRttScale;
    /** cube_factor: 2^40 / cube_rtt_scale, so that K = cubic_root(cube_factor × (Wmax − cwnd)) in 1/1024 s. */
    private final long cubeFactor;

    // struct bictcp. All u32 in the kernel.
    private int cnt;
    private int lastMaxCwnd;
    private int lossCwnd;
    private int lastCwnd;
    private int lastTime;
    private int bicOriginPoint;
    private int bicK;
    /** ms × 8 on the ms clock, µs on the µs clock; 0 = no sample yet. */
    private int delayMin;
    /** In tcp_time_stamp jiffies; 0 = no epoch running (a kernel sentinel, kept as it is). */
    private int epochStart;
    private int ackCnt;
    private int tcpCwnd;
    /** 3.18 only: packets per ACK in 1/16 ({@link CcSwitches#cubicPerPacket} off). */
    private int delayedAck;
    private int sampleCnt;
    private int found;
    private int roundStart;
    private int endSeq;
    private int lastAck;
    private int currRtt;
    /** Not kernel state: the last bic_target computed, so calculators and traces can show it. */
    private int lastTarget;

    public Cubic() {
        this(CubicParams.DEFAULT);
    }

    public Cubic(CubicParams params) {
        this.params = params;
        // cubictcp_register's derived constants.
        this.betaScale = 8 * (BICTCP_BETA_SCALE + params.beta()) / 3 / (BICTCP_BETA_SCALE - params.beta());
        this.cubeRttScale = params.bicScale() * 10L;
        this.cubeFactor = (1L << (10 + 3 * BICTCP_HZ)) / cubeRttScale;
        reset();
    }

    @Override
    public String name() {
        return "cubic";
    }

    public CubicParams params() {
        return params;
    }

    /** bictcp_reset: forget the curve (Wmax included) and HyStart's verdict; loss_cwnd survives. */
    private void reset() {
        cnt = 0;
        lastMaxCwnd = 0;
        lastCwnd = 0;
        lastTime = 0;
        bicOriginPoint = 0;
        bicK = 0;
        delayMin = 0;
        epochStart = 0;
        delayedAck = DELAYED_ACK_INITIAL;
        ackCnt = 0;
        tcpCwnd = 0;
        found = 0;
        lastTarget = 0;
    }

    /** bictcp_clock: HyStart's clock, ms (jiffies at HZ 1000, the real-time clock below) or µs; wraps at 32 bits. */
    private static int clock(CcSock sk) {
        return sk.sw.cubicHystartUs() ? (int) Math.floorDiv(sk.nowNanos(), 1_000L) : (int) Math.floorDiv(sk.nowNanos(), 1_000_000L);
    }

    /** bictcp_hystart_reset: a new slow-start round starts; it ends when snd_nxt of now is acknowledged. */
    private void hystartReset(CcSock sk) {
        roundStart = lastAck = clock(sk);
        endSeq = (int) sk.sndNxt();
        currRtt = 0;
        sampleCnt = 0;
    }

    @Override
    public void init(CcSock sk) {
        reset();
        lossCwnd = 0;
        if (params.hystart()) {
            hystartReset(sk);
        }
        // As in the kernel, initial_ssthresh only applies when HyStart is off.
        if (!params.hystart() && params.initialSsthresh() != 0) {
            sk.sndSsthresh = params.initialSsthresh();
        }
    }

    /** after(seq1, seq2) on 32-bit sequence numbers. */
    private static boolean after(int seq1, int seq2) {
        return seq1 - seq2 > 0;
    }

    @Override
    public void congAvoid(CcSock sk, long ack, long acked) {
        if (!sk.cwndLimited) {
            return;
        }
        if (RenoCongAvoid.inSlowStart(sk, sk.sw)) {
            if (params.hystart() && after((int) ack, endSeq)) {
                hystartReset(sk);
            }
            acked = RenoCongAvoid.slowStart(sk, acked, sk.sw);
            if (acked == 0) {
                return;
            }
        }
        update(sk, acked);
        AdditiveIncrease.apply(sk, Integer.toUnsignedLong(cnt), acked, sk.sw.ai());
    }

    /**
     * bictcp_update: recomputes cnt, the number of acknowledged packets per cwnd increment, from the cubic
     * curve through Wmax and from the Reno-friendly estimate, for {@code acked} packets acknowledged now at
     * cwnd {@code sk.sndCwnd}. Public so calculators can drive the curve without slow start in front of it.
     */
    public void update(CcSock sk, long acked) {
        int cwnd = (int) sk.sndCwnd;
        int now = sk.tcpTimeStamp();
        CcSwitches sw = sk.sw;
        if (sw.cubicPerPacket()) {
            ackCnt += (int) acked;
        } else {
            ackCnt++; // 3.18 counts ACKs; the delayed-ACK ratio below makes up for what each covers
        }
        if (!sw.cubicJiffyUpdate() && lastCwnd == cwnd && now - lastTime <= sk.hz() / 32) {
            // 3.18: nothing at all while cwnd is unchanged, for up to HZ/32 - TCP friendliness included.
            return;
        }
        // 3.19+: the curve is evaluated at most once per jiffy (a loss clears epoch_start, which forces it);
        // TCP friendliness still sees every call.
        boolean recomputed = !(sw.cubicJiffyUpdate() && epochStart != 0 && now == lastTime);
        if (recomputed) {
            cubicCnt(sk, cwnd, now, acked);
        }
        if (params.tcpFriendliness()) {
            friendliness(cwnd);
        }
        // 3.18: cnt counted packets; scale it to ACKs by the measured packets per ACK. In 3.18 every call that
        // gets here recomputed cnt; only recomputed values are scaled so that a combination no kernel had
        // (per-ACK counting with the once-per-jiffy rule) does not scale the same cnt again on every ACK.
        if (!sw.cubicPerPacket() && recomputed) {
            cnt = Integer.divideUnsigned(cnt << ACK_RATIO_SHIFT, delayedAck);
        }
        // The fastest growth CUBIC allows: +1 per packet (floor 1, cwnd doubles per RTT) or per two (floor 2, × 1.5).
        if (Integer.compareUnsigned(cnt, sw.cubicCntFloor()) < 0) {
            cnt = sw.cubicCntFloor();
        }
    }

    /** The cubic part of bictcp_update: start an epoch if none runs, then cnt from the curve's target. */
    private void cubicCnt(CcSock sk, int cwnd, int now, long acked) {
        lastCwnd = cwnd;
        lastTime = now;
        if (epochStart == 0) {
            epochStart = now;
            ackCnt = sk.sw.cubicPerPacket() ? (int) acked : 1;
            tcpCwnd = cwnd; // the Reno estimate starts where CUBIC is
            if (Integer.compareUnsigned(lastMaxCwnd, cwnd) <= 0) {
                // Above the last Wmax (or none yet): the curve starts flat here and probes upwards.
                bicK = 0;
                bicOriginPoint = cwnd;
            } else {
                // Below Wmax: K is the time to climb back to it.
                bicK = (int) CubicRoot.of(cubeFactor * Integer.toUnsignedLong(lastMaxCwnd - cwnd));
                bicOriginPoint = lastMaxCwnd;
            }
        }
        // t = time since the epoch started, plus the minimum RTT: the target is where cwnd should be one RTT on.
        // (s32) difference sign-extended into the kernel's u64, as the kernel does.
        long t = now - epochStart;
        t += sk.sw.cubicHystartUs()
                ? sk.usecsToJiffies(Integer.toUnsignedLong(delayMin))
                : sk.msecsToJiffies(Integer.toUnsignedLong(delayMin) >>> 3);
        t = Long.divideUnsigned(t << BICTCP_HZ, sk.hz()); // jiffies to 1/1024 s
        long k = Integer.toUnsignedLong(bicK);
        boolean beforeK = Long.compareUnsigned(t, k) < 0;
        long offs = beforeK ? k - t : t - k;
        // C × (t − K)^3 in packets; the u64 product wraps once |t − K| passes ~350 s, and delta is a u32.
        int delta = (int) ((cubeRttScale * offs * offs * offs) >>> (10 + 3 * BICTCP_HZ));
        int target = beforeK ? bicOriginPoint - delta : bicOriginPoint + delta;
        lastTarget = target;
        if (Integer.compareUnsigned(target, cwnd) > 0) {
            cnt = Integer.divideUnsigned(cwnd, target - cwnd);
        } else {
            cnt = 100 * cwnd; // at or above the target: grow very slowly
        }
        // Before the first loss the curve knows nothing about the path: grow at least 5% per RTT.
        if (lastMaxCwnd == 0 && Integer.compareUnsigned(cnt, 20) > 0) {
            cnt = 20;
        }
    }

    /**
     * TCP friendliness: tcp_cwnd estimates the cwnd Reno would have reached since the epoch started, one
     * packet per cwnd × beta_scale / 8 acknowledged (Reno with CUBIC's beta, per RFC 8312); if that is ahead,
     * cnt is capped so CUBIC grows at least as fast.
     */
    private void friendliness(int cwnd) {
        long d = Integer.toUnsignedLong(cwnd * betaScale) >>> 3;
        long ac = Integer.toUnsignedLong(ackCnt);
        if (d > 0 && ac > d) {
            // The kernel loops "while (ack_cnt > delta) { ack_cnt -= delta; tcp_cwnd++; }"; this is its closed form.
            long n = (ac - 1) / d;
            ackCnt = (int) (ac - n * d);
            tcpCwnd += (int) n;
        }
        if (Integer.compareUnsigned(tcpCwnd, cwnd) > 0) {
            int maxCnt = Integer.divideUnsigned(cwnd, tcpCwnd - cwnd);
            if (Integer.compareUnsigned(cnt, maxCnt) > 0) {
                cnt = maxCnt;
            }
        }
    }

    /** bictcp_recalc_ssthresh: end the epoch, remember Wmax (lower with fast convergence), back off by beta. */
    @Override
    public long ssthresh(CcSock sk) {
        int cwnd = (int) sk.sndCwnd;
        epochStart = 0;
        if (Integer.compareUnsigned(cwnd, lastMaxCwnd) < 0 && params.fastConvergence()) {
            // Lost again below the last Wmax: the path's share shrank, release more for the newcomers.
            lastMaxCwnd = Integer.divideUnsigned(cwnd * (BICTCP_BETA_SCALE + params.beta()), 2 * BICTCP_BETA_SCALE);
        } else {
            lastMaxCwnd = cwnd;
        }
        lossCwnd = cwnd;
        return Math.max(Integer.toUnsignedLong(cwnd * params.beta()) / BICTCP_BETA_SCALE, 2);
    }

    /** bictcp_undo_cwnd (3.x/4.x): back to at least the cwnd the last loss was taken at. */
    @Override
    public long undoCwnd(CcSock sk) {
        return Math.max(sk.sndCwnd, Integer.toUnsignedLong(lossCwnd));
    }

    /** bictcp_state: an RTO forgets the curve and HyStart's state. */
    @Override
    public void setState(CcSock sk, CaState newState) {
        if (newState == CaState.LOSS) {
            reset();
            hystartReset(sk);
        }
    }

    /**
     * bictcp_cwnd_event (4.3+, {@link CcSwitches#cubicIdleShift}): on the first send after the sender was idle,
     * move the epoch forward by the idle time so the curve resumes where it stopped instead of having run on
     * during the idle period; never past now. The connection fires TX_START before it updates lsndtime.
     */
    @Override
    public void cwndEvent(CcSock sk, CaEvent ev) {
        if (ev != CaEvent.TX_START || !sk.sw.cubicIdleShift()) {
            return;
        }
        int now = sk.tcpTimeStamp();
        int delta = now - sk.tcpTimeStamp(sk.lastSendNanos());
        if (epochStart != 0 && delta > 0) {
            epochStart += delta;
            if (after(epochStart, now)) {
                epochStart = now;
            }
        }
    }

    /**
     * bictcp_acked: 3.18 updates its delayed-ACK ratio (in Open state only), then every version takes the RTT
     * sample for delay_min and HyStart. Samples in the first second of an epoch are ignored: they would still
     * carry the queue built before the loss.
     */
    @Override
    public void pktsAcked(CcSock sk, long pkts, long rttUs) {
        if (!sk.sw.cubicPerPacket() && sk.caState == CaState.OPEN) {
            // A moving average of packets per ACK, weight 1/16, in 1/16 units.
            long ratio = delayedAck - (delayedAck >> ACK_RATIO_SHIFT) + (pkts & U32);
            delayedAck = (int) Math.clamp(ratio, 1, ACK_RATIO_LIMIT);
        }
        if (rttUs < 0) {
            return;
        }
        if (epochStart != 0 && sk.tcpTimeStamp() - epochStart < sk.hz()) {
            return;
        }
        int delay;
        if (sk.sw.cubicHystartUs()) {
            delay = (int) rttUs;
        } else {
            delay = (int) ((rttUs << 3) / 1000);
        }
        if (delay == 0) {
            delay = 1;
        }
        if (delayMin == 0 || Integer.compareUnsigned(delayMin, delay) > 0) {
            delayMin = delay;
        }
        if (params.hystart() && RenoCongAvoid.inSlowStart(sk, sk.sw) && sk.sndCwnd >= params.hystartLowWindow()) {
            hystartUpdate(sk, delay);
        }
    }

    /**
     * hystart_update of 3.18–4.x (and, with the µs clock, the units of 5.6): leave slow start (ssthresh = cwnd)
     * when the ACKs of one round keep coming closely spaced for longer than half the minimum RTT (ACK train),
     * or when the smallest of the first eight RTT samples of a round exceeds delay_min by more than
     * delay_min / 8, clamped to 4..16 ms (delay increase). Later HyStart refinements (curr_rtt tracked across
     * the round, pacing-aware ACK-train threshold, 6.x's ack_delay handling) are not modelled.
     */
    private void hystartUpdate(CcSock sk, int delay) {
        int detect = params.hystartDetect();
        if ((found & detect) != 0) {
            return;
        }
        boolean us = sk.sw.cubicHystartUs();
        int now = clock(sk);
        if ((detect & CubicParams.HYSTART_ACK_TRAIN) != 0) {
            long ackDelta = us ? params.hystartAckDeltaMs() * 1000L : params.hystartAckDeltaMs();
            if (now - lastAck <= ackDelta) {
                lastAck = now;
                // Half of delay_min: ms × 8 >> 4 on the ms clock, µs >> 1 on the µs clock. The kernel compares
                // the signed difference as unsigned; the clock is monotonic, so the difference is not negative.
                long threshold = Integer.toUnsignedLong(delayMin) >>> (us ? 1 : 4);
                if (Integer.toUnsignedLong(now - roundStart) > threshold) {
                    found |= CubicParams.HYSTART_ACK_TRAIN;
                }
            }
        }
        if ((detect & CubicParams.HYSTART_DELAY) != 0) {
            if (sampleCnt < HYSTART_MIN_SAMPLES) {
                if (currRtt == 0 || Integer.compareUnsigned(currRtt, delay) > 0) {
                    currRtt = delay;
                }
                sampleCnt++;
            } else {
                long dm = Integer.toUnsignedLong(delayMin);
                long margin = us
                        ? Math.clamp(dm >>> 3, HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US)
                        : Math.clamp(dm >>> 3, HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if (Integer.toUnsignedLong(currRtt) > dm + margin) {
                    found |= CubicParams.HYSTART_DELAY;
                }
            }
        }
        if ((found & detect) != 0) {
            sk.sndSsthresh = sk.sndCwnd;
        }
    }

    // State for tests, traces and calculators (unsigned values of the kernel's u32 fields).

    /** ca->cnt: packets to acknowledge per cwnd increment. */
    public long cnt() {
        return Integer.toUnsignedLong(cnt);
    }

    /** ca->bic_K: time from the epoch start to Wmax, in 1/1024 s. */
    public long bicK() {
        return Integer.toUnsignedLong(bicK);
    }

    /** ca->bic_origin_point: the curve's plateau (Wmax, or cwnd at the epoch start if that was higher). */
    public long originPoint() {
        return Integer.toUnsignedLong(bicOriginPoint);
    }

    /** The last bic_target computed (the curve one RTT ahead). */
    public long target() {
        return Integer.toUnsignedLong(lastTarget);
    }

    /** ca->last_max_cwnd: Wmax. */
    public long lastMaxCwnd() {
        return Integer.toUnsignedLong(lastMaxCwnd);
    }

    /** ca->loss_cwnd: cwnd at the last loss, for undo. */
    public long lossCwnd() {
        return Integer.toUnsignedLong(lossCwnd);
    }

    /** ca->epoch_start in tcp_time_stamp jiffies (see {@link CcSock#tcpTimeStamp()}); 0 = no epoch. */
    public int epochStart() {
        return epochStart;
    }

    /** Whether an epoch is running (epoch_start != 0). */
    public boolean inEpoch() {
        return epochStart != 0;
    }

    /** ca->delay_min: ms × 8 on the ms clock, µs with {@link CcSwitches#cubicHystartUs}. */
    public long delayMin() {
        return Integer.toUnsignedLong(delayMin);
    }

    /** ca->delayed_ack (3.18): packets per ACK in 1/16. */
    public int delayedAck() {
        return delayedAck;
    }

    /** ca->tcp_cwnd: the Reno-friendly estimate. */
    public long tcpCwnd() {
        return Integer.toUnsignedLong(tcpCwnd);
    }

    /** ca->ack_cnt: packets (3.19+) or ACKs (3.18) counted towards the next tcp_cwnd increment. */
    public long ackCnt() {
        return Integer.toUnsignedLong(ackCnt);
    }

    /** ca->found: which HyStart detectors fired ({@link CubicParams#HYSTART_ACK_TRAIN}, {@link CubicParams#HYSTART_DELAY}). */
    public int hystartFound() {
        return found;
    }
}
