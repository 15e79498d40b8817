package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.SACKED;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.cc.CaState;

/**
 * Repairing losses at the tail of a flight, where too few duplicate ACKs come back for fast retransmit: the tail
 * loss probe (tcp_schedule_loss_probe / tcp_send_loss_probe, on by default since Linux 3.10 with
 * tcp_early_retrans=3; RFC 8985's TLP) and early retransmit (RFC 5827 with Linux's delay, before RACK replaced
 * it). Both need SACK. When the probe fires is usnet.tcp.tlp_pto's ({@link LossSwitches.TlpPto}).
 */
final class TailLossProbe {
    private final TcpSock sk;
    // tlp_high_seq: snd_nxt when the outstanding loss probe went out.
    private long highSeq;
    private boolean pending;
    // tlp_retrans: the outstanding probe resent old data (rather than sending new data).
    private boolean retransmitted;

    TailLossProbe(TcpSock sk) {
        this.sk = sk;
    }

    /** A probe is outstanding (its ACK has not told yet whether it repaired a loss). */
    boolean pending() {
        return pending;
    }

    /** A reduction started for another reason: the outstanding probe no longer matters. */
    void cancel() {
        pending = false;
    }

    /**
     * When a SACK connection in Open state (6.x: or CWR) has nothing more it may send, probe after the PTO
     * instead of waiting for the RTO, so a lost tail is repaired by fast recovery.
     */
    void schedule() {
        Scoreboard sb = sk.sb;
        LossSwitches sw = sk.recovery.switches();
        boolean v6 = sw.tlpPto() == LossSwitches.TlpPto.V6;
        CaState st = sk.cc.caState;
        if (!sw.tlp() || !sk.recovery.sack() || sb.packetsOut() == 0 || st != CaState.OPEN && !(v6 && st == CaState.CWR)
                || pending || sk.state != TcpState.ESTABLISHED && sk.state != TcpState.CLOSE_WAIT) {
            return;
        }
        if (sk.out.canSendNewData()) {
            // Neither cwnd- nor application-limited.
            return;
        }
        long timeout = v6 ? ptoV6(sb) : ptoV3(sb);
        TcpTimers timers = sk.timers;
        if (timers.retransmitArmed()) {
            long rtoLeft = timers.retransmitDeadline() - sk.stack.now();
            if (timeout > rtoLeft) {
                // The RTO comes first: let it fire in the probe's place.
                timeout = Math.max(rtoLeft, 0);
            }
        }
        timers.armLossProbe(timeout);
    }

    /**
     * Linux 3.10–4.x: 2·SRTT, at least 10 ms; with one segment out at least 1.5·SRTT plus the peer's longest
     * delayed ACK (200 ms); 1 s before any RTT sample.
     */
    private long ptoV3(Scoreboard sb) {
        long timeout;
        long srtt = sk.rtt.srttNanos();
        if (srtt > 0) {
            timeout = 2 * srtt;
            if (sb.packetsOut() == 1) {
                timeout = Math.max(timeout, srtt + (srtt >> 1) + DelayedAck.TCP_DELACK_MAX_NANOS);
            }
        } else {
            timeout = RttEstimator.TCP_TIMEOUT_INIT_NANOS;
        }
        return Math.max(timeout, 10_000_000L);
    }

    /**
     * Linux 6.x: 2·SRTT plus two jiffies (TCP_TIMEOUT_MIN); with one segment out plus the minimum RTO instead,
     * room for the peer's delayed ACK; 1 s before any RTT sample.
     */
    private long ptoV6(Scoreboard sb) {
        long srtt = sk.rtt.srttNanos();
        if (srtt == 0) {
            return RttEstimator.TCP_TIMEOUT_INIT_NANOS;
        }
        return 2 * srtt + (sb.packetsOut() == 1 ? sk.tcp.rtoMinNanos() : 2 * 1_000_000_000L / sk.stack.knobs().get(NetCoreSysctl.HZ));
    }

    /** The probe timer fired: new data if the window allows, else the last segment again; then the RTO. */
    void send() {
        sk.stack.mib().inc(Mib.TcpExtTCPLossProbes);
        pending = true;
        retransmitted = false;
        highSeq = sk.sndNxt;
        long wndLeft = sk.sendWindowLeft();
        int avail = sk.sendBuf.size();
        if (avail > 0 && wndLeft > 0) {
            int len = (int) Math.min(Math.min(avail, sk.mssCache), wndLeft);
            sk.out.sendNewSegment(len, sk.finQueued && !sk.finSent && len == avail);
            highSeq = sk.sndNxt;
        } else if (!sk.sb.isEmpty()) {
            Packet tail = sk.sb.tail();
            if ((TcpSkbCb.sacked(tail) & SACKED) == 0) {
                sk.retransmit.segment(tail);
                retransmitted = true;
            }
        }
        sk.timers.armRto();
    }

    /**
     * tcp_process_tlp_ack: an ACK beyond the probe means a loss was repaired by it, so cwnd is reduced once (CWR)
     * — unless the ACK carries a D-SACK: then the original and the probe both arrived and nothing was lost; with
     * the 6.x PTO, a probe of new data that is acknowledged tells nothing of a loss either.
     */
    void processAck(long ack, boolean unaMoved, boolean isDupAck, long newlySacked) {
        if (Seq.before(ack, highSeq)) {
            return;
        }
        if (!retransmitted && sk.recovery.switches().tlpPto() == LossSwitches.TlpPto.V6) {
            pending = false;
        } else if (sk.sb.lastAckDsack()) {
            pending = false;
        } else if (Seq.after(ack, highSeq)) {
            pending = false;
            sk.stack.mib().inc(Mib.TcpExtTCPLossProbeRecovery);
            LossRecovery r = sk.recovery;
            r.initCwndReduction();
            sk.setCaState(CaState.CWR);
            r.endCwndReduction();
            sk.setCaState(CaState.OPEN);
        } else if (!unaMoved && isDupAck && newlySacked == 0) {
            // A pure duplicate ACK at the probe's edge: original and probe both arrived, no loss.
            pending = false;
        }
    }

    /**
     * Early retransmit (RFC 5827): with fewer than four segments out there cannot be three duplicate ACKs, so
     * one SACKed segment above a hole is enough once nothing new can be sent.
     */
    boolean earlyRetransEligible() {
        Scoreboard sb = sk.sb;
        if (!sk.recovery.earlyRetransAllowed() || !sk.recovery.sack() || sb.retransOut() > 0 || sb.sackedOut() == 0 || sb.packetsOut() < sb.sackedOut() + 1
                || sb.packetsOut() >= 4) {
            return false;
        }
        return !sk.out.canSendNewData();
    }

    /** Linux's mitigation of RFC 5827: wait a quarter RTT (at least 2 ms) for reordering to show itself. */
    void armEarlyRetransmit() {
        sk.timers.armEarlyRetransmit(Math.max(sk.rtt.srttNanos() / 4, 2_000_000L));
    }

    /** The early-retransmit delay passed and the hole is still there: fast recovery. */
    void earlyRetransTimerFired() {
        CaState st = sk.cc.caState;
        if ((st == CaState.OPEN || st == CaState.DISORDER) && earlyRetransEligible()) {
            sk.recovery.enterRecovery();
            sk.retransmit.xmitQueue();
        }
        if (sk.sb.packetsOut() > 0) {
            sk.timers.armRto();
        }
    }
}
