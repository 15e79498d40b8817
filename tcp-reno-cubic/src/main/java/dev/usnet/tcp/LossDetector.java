package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;

/**
 * What counts as evidence that a segment was lost: one implementation per mechanism — {@link NewRenoDetector}
 * (no SACK: duplicate ACKs, RFC 6582), {@link Rfc6675Detector} (SACK: DupThresh SACKed segments above a hole),
 * {@link FackDetector} (Linux 2.6–4.14: distance to the highest SACK) and {@link RackDetector} (RFC 8985: time
 * since a later-sent segment was delivered). {@link LossRecovery} runs the congestion state machine around it
 * and picks the detector ({@link LossRecovery#chooseDetector}, the only place that does). A detector marks
 * segments through the {@link Scoreboard}'s methods and keeps only its own state.
 */
interface LossDetector {
    /** Whether SACK drives recovery (tcp_is_sack): tail loss probes, forward retransmission and D-SACK need it. */
    boolean sack();

    /** The SACK blocks of an acceptable ACK: marks what they report; returns the packets newly SACKed. */
    long sackTag(TcpOptions o, long ack);

    /** The SACK blocks of an old duplicate ACK (below snd_una) still tell something. */
    void sackTagOld(TcpOptions o, long ack);

    /**
     * {@code s} was delivered — SACKed now, or cumulatively acknowledged without having been SACKed — with its
     * scoreboard bits as they were ({@code bits}); called before it leaves the queue. RACK keeps the most
     * recently sent delivered segment.
     */
    default void delivered(Packet s, int bits) {}

    /** A cumulative ACK removed {@code packets} from the queue. */
    default void cumulativeAcked(long packets) {}

    /** A duplicate ACK arrived; returns the packets it counts as delivered. */
    default long dupAck() {
        return 0;
    }

    /** The connection chose its initial sequence number: sequence marks start at {@code iss}. */
    default void sequenceStarts(long iss) {}

    /** snd_una moved to {@code sndUna}: sequence marks the detector keeps must not fall behind it. */
    default void unaAdvanced(long sndUna) {}

    /** Whether this ACK shows the peer reneged on data it SACKed ({@code unaMoved}: snd_una advanced). */
    boolean reneged(boolean unaMoved);

    /** tcp_time_to_recover's evidence besides lost_out: enough segments above the first hole. */
    boolean enoughDupAcks();

    /** An ACK during Recovery ({@code advanced}: it acknowledged new data): mark what is now known lost. */
    void recoveryAck(boolean advanced);

    /** A recovery episode starts: the first hole is lost (tcp_enter_recovery with tcp_update_scoreboard). */
    default void recoveryStarts(Scoreboard sb) {
        sb.markHeadLost();
        markLosses();
    }

    /** A recovery episode ended at high_seq: {@code undone} when it was undone as spurious. */
    default void recoveryEnded(boolean undone) {}

    /** Marks segments lost on the evidence there is, outside Recovery. */
    void markLosses();

    /** Undo cleared every LOST mark: marking may have to start again from snd_una. */
    default void lostMarksCleared() {}

    /** Whether an RTO forgets every SACK mark (no SACK, or the peer reneged). */
    boolean forgetSacksOnLoss(boolean reneged);

    /** The counter of recovery episodes entered. */
    Mib recoveryMib();

    /** The counter charged when reordering is detected (tcp_update_reordering, tcp_check_sack_reordering). */
    Mib reorderMib();

    /**
     * Whether every detection of reordering is counted, as Linux 4.15+ does (tcp_check_sack_reordering, with
     * RACK), rather than only one that raises the degree assumed (tcp_update_reordering up to 4.14).
     */
    default boolean countsEveryReordering() {
        return false;
    }

    /**
     * Whether RFC 5827 early retransmit may run alongside this detector (RACK replaced it: its reordering
     * timer does the same for short flights).
     */
    default boolean allowsEarlyRetransmit() {
        return true;
    }

    /**
     * The detection timer fired (ICSK_TIME_REO_TIMEOUT, armed by the detector through
     * {@link TcpTimers#armLossDetection}): marks what is lost by now. Detectors that never arm it ignore it.
     */
    default void timerFired() {}
}
