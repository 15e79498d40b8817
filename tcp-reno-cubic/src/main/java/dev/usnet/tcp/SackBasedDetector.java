package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;

/**
 * What every SACK-driven detector shares: segments are tagged from the peer's SACK blocks (the scoreboard does
 * it), an old ACK's blocks still count, a SACKed head means the peer reneged, and a recovery episode counts as a
 * SACK one. The detectors differ in what they conclude from the marks.
 */
abstract class SackBasedDetector implements LossDetector {
    final TcpSock sk;
    final Scoreboard sb;

    SackBasedDetector(TcpSock sk) {
        this.sk = sk;
        this.sb = sk.sb;
    }

    @Override
    public final boolean sack() {
        return true;
    }

    @Override
    public long sackTag(TcpOptions o, long ack) {
        return o.sackBlocks == 0 ? 0 : sb.sacktag(o, ack);
    }

    @Override
    public final void sackTagOld(TcpOptions o, long ack) {
        if (o.sackBlocks > 0) {
            sb.sacktag(o, ack);
        }
    }

    /**
     * tcp_check_sack_reneging: the cumulative ACK stops at a segment the peer SACKed, so the peer threw that data
     * away (it pruned its out-of-order queue). Recovery cannot trust the scoreboard: that is left to an early RTO,
     * which forgets the SACK marks.
     */
    @Override
    public final boolean reneged(boolean unaMoved) {
        return unaMoved && sb.headSacked();
    }

    @Override
    public final boolean forgetSacksOnLoss(boolean reneged) {
        return reneged;
    }

    @Override
    public final Mib recoveryMib() {
        return Mib.TcpExtTCPSackRecovery;
    }

    /** Whether anything above snd_una is SACKed (there is evidence to judge from). */
    final boolean anythingSacked() {
        return sb.sackedOut() > 0 && Seq.after(sb.highSackedEnd(), sk.sndUna);
    }
}
