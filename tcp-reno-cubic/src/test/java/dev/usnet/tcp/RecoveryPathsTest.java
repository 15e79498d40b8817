package dev.usnet.tcp;

import static dev.usnet.tcp.SegmentHarness.MSS;
import static dev.usnet.tcp.SegmentHarness.end;
import static dev.usnet.tcp.SegmentHarness.start;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import dev.usnet.tcp.cc.CaState;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each way the sender repairs a loss, driven segment by segment: SACK fast retransmit by FACK and by RFC 6675,
 * NewReno, the RTO with backoff, the tail loss probe, early retransmit, undo, a D-SACKed probe, and reneging.
 * The socket sends; the scripted peer acknowledges what it chooses. Segments are 1448 bytes (MSS 1460 less
 * timestamps), numbered from 1: segment i covers [1 + 1448 (i - 1), 1 + 1448 i).
 */
class RecoveryPathsTest {

    /** A duplicate ACK of snd_una = 1 SACKing segments {@code from..to}. */
    private static void sackDupack(SegmentHarness h, int from, int to) {
        h.seg().seq(1).ack(1).sack(start(from), end(to)).inject();
    }

    @Test
    void withFackOneSackFarAboveTheHoleIsEnoughForFastRetransmit() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            // Segment 5 is SACKed: the highest SACK lies 5 segments above snd_una, more than reordering (3).
            sackDupack(h, 5, 5);
            Sent rtx = h.sentOne();
            assertEquals(start(1), rtx.seq(), "the hole at the head is resent at once");
            assertEquals(MSS, rtx.payload());
            assertEquals(CaState.RECOVERY, s.info().caState());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPSackRecovery));
            // FACK marked segments 1 and 2 lost (more than 3 segments below the highest SACK).
            assertEquals(2, s.info().lost());
        }
    }

    @Test
    void rfc6675WaitsUntilReorderingSegmentsAreSackedAboveTheHole() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_fack", "0")) {
            TcpSock s = h.flight(10);
            sackDupack(h, 5, 5);
            sackDupack(h, 5, 6);
            h.sentNothing();
            assertEquals(CaState.DISORDER, s.info().caState());
            // The third SACKed segment: segments 1-4 now have three SACKed above them (DupThresh).
            sackDupack(h, 5, 7);
            Sent rtx = h.sentOne();
            assertEquals(start(1), rtx.seq());
            assertEquals(CaState.RECOVERY, s.info().caState());
            assertEquals(4, s.info().lost());
        }
    }

    @Test
    void newRenoRetransmitsOnTheThirdDuplicateAckAndAgainOnEachPartialAck() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_sack", "0")) {
            TcpSock s = h.flight(10);
            h.seg().seq(1).ack(1).inject();
            h.seg().seq(1).ack(1).inject();
            h.sentNothing();
            h.seg().seq(1).ack(1).inject();
            Sent first = h.sentOne();
            assertEquals(start(1), first.seq());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPRenoRecovery));
            // The retransmission filled the first hole; segment 4 was lost too: a partial ACK up to it.
            h.seg().seq(1).ack(end(3)).inject();
            List<Sent> next = h.sent();
            assertEquals(start(4), next.getFirst().seq(), next::toString);
            assertEquals(CaState.RECOVERY, s.info().caState(), "recovery lasts until everything sent before it is acked");
            // All up to the recovery point ACKed: without SACK Linux holds Recovery until something above it is
            // ACKed (NewReno's guard against a false second fast retransmit, tcp_try_undo_recovery).
            h.seg().seq(1).ack(end(10)).inject();
            assertEquals(CaState.RECOVERY, s.info().caState(), "an ACK of exactly high_seq holds Recovery");
            h.write(s, MSS);
            assertEquals(start(11), h.sentOne().seq(), "new data goes out while Recovery is held");
            h.seg().seq(1).ack(end(11)).inject();
            assertEquals(CaState.OPEN, s.info().caState(), "an ACK above high_seq ends it");
        }
    }

    @Test
    void theRtoResendsTheHeadEntersLossWithCwndOneAndBacksOff() {
        // Without SACK there is no tail loss probe: the RTO itself fires.
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_sack", "0")) {
            TcpSock s = h.flight(2);
            long sentAt = h.now();
            long rto = s.info().rtoUs() * 1000;
            h.advance(rto - 1_000_000L);
            h.sentNothing();
            h.advance(2_000_000L);
            Sent first = h.sentOne();
            assertEquals(start(1), first.seq());
            assertEquals(rto, first.at() - sentAt, 10_000L);
            assertEquals(CaState.LOSS, s.info().caState());
            assertEquals(1, s.info().cwnd());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPTimeouts));
            // Unanswered, the next timeout comes after twice the time.
            h.advance(2 * rto - 2_000_000L);
            h.sentNothing();
            h.advance(2_000_000L);
            Sent second = h.sentOne();
            assertEquals(start(1), second.seq());
            assertEquals(2 * rto, second.at() - first.at(), 10_000L);
            assertEquals(2, s.info().backoff());
            // An ACK of new data ends the backoff and the loss episode goes on with what is left.
            h.seg().seq(1).ack(end(1)).inject();
            assertEquals(0, s.info().backoff());
            assertEquals(start(2), h.sent().getFirst().seq(), "segment 2 was marked lost by the RTO and is resent");
        }
    }

    @Test
    void aLostTailIsProbedAfterTwoRoundTripsNotAnRto() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            h.advance(5_000_000L);
            // Segments 1-8 arrive; 9 and 10 are lost, so no duplicate ACK will ever come.
            h.seg().seq(1).ack(end(8)).inject();
            long ackAt = h.now();
            h.sentNothing();
            h.advance(50_000_000L);
            Sent probe = h.sentOne();
            assertEquals(start(10), probe.seq(), "nothing new to send: the probe resends the last segment");
            long srtt = s.info().rttUs() * 1000;
            // 2 * SRTT, but at least 10 ms (tcp_schedule_loss_probe), far below the 200 ms RTO.
            assertEquals(Math.max(2 * srtt, 10_000_000L), probe.at() - ackAt, 1_000_000L);
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPLossProbes));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtTCPTimeouts));
        }
    }

    @Test
    void earlyRetransmitNeedsOneSackedSegmentWhenTooFewAreOutForThreeDupacks() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_fack", "0")) {
            TcpSock s = h.flight(3);
            sackDupack(h, 2, 3);
            h.sentNothing();
            long at = h.now();
            h.advance(10_000_000L);
            Sent rtx = h.sentOne();
            assertEquals(start(1), rtx.seq());
            // RFC 5827 with Linux's delay for reordering: a quarter of the SRTT, at least 2 ms.
            assertEquals(Math.max(s.info().rttUs() * 1000 / 4, 2_000_000L), rtx.at() - at, 100_000L);
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPSackRecovery));
        }
    }

    @Test
    void anAckEchoingATimestampOlderThanTheRetransmissionUndoesTheReduction() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            long originalTs = h.lastDutTsVal;
            long cwndBefore = s.info().cwnd();
            h.advance(5_000_000L);
            sackDupack(h, 5, 5);
            Sent rtx = h.sentOne();
            assertTrue(rtx.tsVal() > originalTs, "the retransmission carries a later timestamp");
            assertEquals(CaState.RECOVERY, s.info().caState());
            assertTrue(s.info().ssthresh() < cwndBefore);
            // The original segment 1 was only delayed: the peer acknowledges it, echoing its timestamp.
            h.seg().seq(1).ack(end(10)).ts(h.peerTsNow(), originalTs).inject();
            assertEquals(CaState.OPEN, s.info().caState());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPFullUndo));
            assertTrue(s.info().cwnd() >= cwndBefore, "cwnd is back: " + s.info().cwnd());
        }
    }

    @Test
    void anAckEchoingTheRetransmissionDoesNotUndo() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            h.advance(5_000_000L);
            sackDupack(h, 5, 5);
            Sent rtx = h.sentOne();
            h.seg().seq(1).ack(end(10)).ts(h.peerTsNow(), rtx.tsVal()).inject();
            assertEquals(0, h.dut.mib().get(Mib.TcpExtTCPFullUndo));
            assertTrue(s.info().cwnd() < 10, "the reduction stands: " + s.info().cwnd());
        }
    }

    @Test
    void aDsackOfTheProbedSegmentEndsTheProbeWithoutReducingCwnd() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(2);
            h.advance(50_000_000L);
            Sent probe = h.sentOne();
            assertEquals(start(2), probe.seq());
            // Both copies of segment 2 arrived: the ACK covers everything and reports the second as a D-SACK.
            h.seg().seq(1).ack(end(2)).sack(start(2), end(2)).inject();
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPDSACKRecv));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtTCPLossProbeRecovery));
            assertEquals(CaState.OPEN, s.info().caState());
            assertEquals(10, s.info().cwnd());
        }
    }

    @Test
    void sacksTheReceiverRenegedOnAreForgottenByAnEarlyRto() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            sackDupack(h, 2, 6);
            assertEquals(start(1), h.sentOne().seq());
            // The cumulative ACK stops at segment 2, which the peer had SACKed: it dropped what it held.
            h.seg().seq(1).ack(end(1)).inject();
            long at = h.now();
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPSACKReneging));
            h.advance(100_000_000L);
            List<Sent> after = h.sent();
            assertTrue(!after.isEmpty(), "an early RTO, not the 200 ms one");
            Sent first = after.getFirst();
            assertEquals(start(2), first.seq(), "the formerly SACKed segment is resent: its mark was forgotten");
            assertEquals(Math.max(s.info().rttUs() * 1000 / 16, 10_000_000L), first.at() - at, 1_000_000L);
        }
    }
}
