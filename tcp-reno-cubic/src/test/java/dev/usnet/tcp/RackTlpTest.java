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
 * Loss recovery of the 6.x preset, segment by segment: RACK's time-based marking and its reordering timer, the tail
 * loss probe's 6.x timing, F-RTO's verdict on an RTO, and the D-SACK undo. The handshake takes 10 ms, so min_rtt
 * and SRTT start at 10 ms and RACK's reordering window is min_rtt / 4 = 2.5 ms.
 */
class RackTlpTest {
    private static final long RTT = 10_000_000L;

    /** An established connection with a 10 ms RTT sample that has written {@code segments} and sent {@code sent}. */
    private static TcpSock flight(SegmentHarness h, int segments, int sent) {
        h.listenAndSendSyn(PeerSyn.linux());
        Sent synAck = h.sentOne();
        h.advance(RTT);
        TcpSock s = h.completeHandshake(synAck, 65535);
        h.write(s, segments * MSS);
        assertEquals(sent, h.sent().size());
        assertEquals(10_000, s.info().rttUs(), "the handshake's RTT sample");
        return s;
    }

    private static long mib(SegmentHarness h, Mib m) {
        return h.dut.mib().get(m);
    }

    @Test
    void rackMarksAnEarlierSentSegmentLostOneReorderingWindowAfterALaterOneIsSacked() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "6.x")) {
            TcpSock s = flight(h, 10, 10);
            h.advance(RTT);
            // Segment 2 is SACKed; 1 was sent at the same instant. One SACK is far from DupThresh (3).
            h.seg().seq(1).ack(1).sack(start(2), end(2)).inject();
            h.sentNothing();
            assertEquals(CaState.DISORDER, s.info().caState());
            assertEquals(0, s.info().lost(), "not by counting: segment 1 is not lost yet");
            // reo_wnd = 2.5 ms; the reordering timer adds 2 ms of slack: it fires 4.5 ms after the SACK.
            h.advance(4_000_000L);
            h.sentNothing();
            h.advance(1_000_000L);
            Sent rtx = h.sentOne();
            assertEquals(start(1), rtx.seq(), "the reordering timer marked segment 1 lost and it was resent");
            assertEquals(CaState.RECOVERY, s.info().caState());
            assertEquals(1, s.info().lost(), "segments 3-10 were sent after segment 2: not lost");
            assertEquals(1, mib(h, Mib.TcpExtTCPSackRecovery));
            assertEquals(0, mib(h, Mib.TcpExtTCPTimeouts));
        }
    }

    @Test
    void withDupThreshSegmentsSackedAndNoReorderingSeenTheWindowIsZero() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "6.x")) {
            TcpSock s = flight(h, 10, 10);
            h.advance(RTT);
            h.seg().seq(1).ack(1).sack(start(2), end(4)).inject();
            Sent rtx = h.sentOne();
            assertEquals(start(1), rtx.seq(), "three SACKed segments: segment 1 is lost at once");
            assertEquals(CaState.RECOVERY, s.info().caState());
        }
    }

    @Test
    void aLateSackOfAnOriginalIsReorderingAndWidensNothingButStopsTheZeroWindow() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "6.x")) {
            TcpSock s = flight(h, 10, 10);
            h.advance(RTT);
            h.seg().seq(1).ack(1).sack(start(4), end(4)).inject();
            // Segment 2, never retransmitted, arrives after 4: reordering seen (TCPSACKReorder).
            h.seg().seq(1).ack(1).sack(start(2), end(2)).sack(start(4), end(4)).inject();
            assertEquals(1, mib(h, Mib.TcpExtTCPSACKReorder));
            // Now even three SACKed segments wait the reordering window before segment 1 counts as lost.
            h.seg().seq(1).ack(1).sack(start(2), end(2)).sack(start(4), end(5)).inject();
            h.sentNothing();
            h.advance(5_000_000L);
            assertEquals(start(1), h.sent().getFirst().seq());
            assertEquals(CaState.RECOVERY, s.info().caState());
        }
    }

    @Test
    void aTailLossIsProbedAtTwoRttsPlusTwoJiffiesAndRepairedWithoutAnRto() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "6.x")) {
            TcpSock s = flight(h, 10, 10);
            h.advance(RTT);
            // Segments 1-8 arrive; 9 and 10 are lost, so no duplicate ACK will ever come.
            h.seg().seq(1).ack(end(8)).inject();
            long ackAt = h.now();
            h.sentNothing();
            long srtt = s.info().rttUs() * 1000;
            h.advance(2 * srtt + 2_000_000L - 500_000L);
            h.sentNothing();
            h.advance(1_000_000L);
            Sent probe = h.sentOne();
            assertEquals(start(10), probe.seq(), "nothing new to send: the probe resends the last segment");
            assertEquals(2 * srtt + 2_000_000L, probe.at() - ackAt, 100_000L, "PTO = 2 SRTT + 2 jiffies (HZ 1000)");
            assertEquals(1, mib(h, Mib.TcpExtTCPLossProbes));
            assertEquals(CaState.OPEN, s.info().caState(), "a probe goes out in Open state");
            // The probe arrives and is SACKed: segment 9, sent long before it, is lost by RACK at once.
            h.advance(11_000_000L);
            h.seg().seq(1).ack(end(8)).sack(start(10), end(10)).inject();
            Sent rtx = h.sentOne();
            assertEquals(start(9), rtx.seq());
            assertEquals(CaState.RECOVERY, s.info().caState());
            h.advance(RTT);
            h.seg().seq(1).ack(end(10)).inject();
            assertEquals(CaState.OPEN, s.info().caState());
            assertEquals(0, mib(h, Mib.TcpExtTCPTimeouts), "repaired without an RTO");
            assertEquals(0, s.info().retrans());
        }
    }

    /** A flight of 10 of 20 segments written, then the RTO (tail loss probes off, so the RTO itself fires). */
    private static TcpSock rtoAfterFlight(SegmentHarness h) {
        TcpSock s = flight(h, 20, 10);
        long rto = s.info().rtoUs() * 1000;
        h.advance(rto + 1_000_000L);
        Sent rtx = h.sentOne();
        assertEquals(start(1), rtx.seq());
        assertEquals(CaState.LOSS, s.info().caState());
        assertEquals(1, s.info().cwnd());
        h.advance(1_000_000L);
        // Segment 1 is acknowledged (its retransmission, or the delayed original: nobody can tell yet).
        h.seg().seq(1).ack(end(1)).inject();
        return s;
    }

    @Test
    void frtoSendsNewDataAfterTheRtoAndUndoesItWhenNeverRetransmittedDataIsAcked() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "6.x", "net.ipv4.tcp_early_retrans", "0")) {
            TcpSock s = rtoAfterFlight(h);
            List<Sent> next = h.sent();
            assertTrue(!next.isEmpty(), "F-RTO step 2b sends something");
            for (Sent p : next) {
                assertTrue(p.seq() >= start(11), "new data, not a retransmission of segment 2: " + next);
            }
            // The originals 2-10 were only delayed: their ACK covers data never retransmitted.
            h.advance(1_000_000L);
            h.seg().seq(1).ack(end(10)).inject();
            assertEquals(1, mib(h, Mib.TcpExtTCPSpuriousRTOs));
            assertEquals(1, mib(h, Mib.TcpExtTCPLossUndo));
            assertEquals(CaState.OPEN, s.info().caState());
            assertTrue(s.info().cwnd() >= 10, "cwnd is back: " + s.info().cwnd());
            assertTrue(s.info().ssthresh() > 7, "ssthresh is back: " + s.info().ssthresh());
        }
    }

    @Test
    void withoutFrtoThe43PresetRetransmitsAfterTheSameAck() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "4.3", "net.ipv4.tcp_early_retrans", "0")) {
            rtoAfterFlight(h);
            assertEquals(start(2), h.sent().getFirst().seq(), "everything was marked lost: segment 2 is resent");
            h.advance(1_000_000L);
            h.seg().seq(1).ack(end(10)).inject();
            assertEquals(0, mib(h, Mib.TcpExtTCPSpuriousRTOs));
        }
    }

    /**
     * Segments 5-8 of 10 are SACKed: 1-4 are lost and resent. Then the originals of 1-4 arrive after all (the ACK
     * reaches 8; 9 and 10 are still out, so Recovery goes on), and each retransmission comes back as a D-SACK.
     * Returns the ssthresh the reduction set.
     */
    private static long dsackEveryRetransmission(SegmentHarness h, TcpSock s, java.util.function.IntConsumer afterEach) {
        h.advance(RTT);
        h.seg().seq(1).ack(1).sack(start(5), end(8)).inject();
        List<Sent> rtx = h.sent();
        assertEquals(List.of(start(1), start(2), start(3), start(4)), rtx.stream().map(Sent::seq).toList());
        assertEquals(CaState.RECOVERY, s.info().caState());
        long reducedSsthresh = s.info().ssthresh();
        h.advance(1_000_000L);
        h.seg().seq(1).ack(end(8)).inject();
        assertEquals(CaState.RECOVERY, s.info().caState(), "9 and 10, sent before recovery, are still out");
        for (int i = 1; i <= 4; i++) {
            h.advance(1_000_000L);
            h.seg().seq(1).ack(end(8)).sack(start(i), end(i)).inject();
            afterEach.accept(i);
        }
        return reducedSsthresh;
    }

    @Test
    void dsacksForEveryRetransmissionUndoTheReduction() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "6.x")) {
            TcpSock s = flight(h, 10, 10);
            long cwndBefore = s.info().cwnd();
            long reduced = dsackEveryRetransmission(h, s,
                    i -> assertEquals(i == 4 ? 1 : 0, mib(h, Mib.TcpExtTCPDSACKUndo), "after D-SACK " + i));
            assertTrue(reduced < cwndBefore);
            assertEquals(4, mib(h, Mib.TcpExtTCPDSACKRecv));
            assertTrue(s.info().cwnd() >= cwndBefore, "cwnd restored: " + s.info().cwnd());
            assertTrue(s.info().ssthresh() > reduced, "ssthresh restored: " + s.info().ssthresh());
            // Recovery is over; the D-SACK ACK itself counts as a duplicate ACK here, which holds Disorder.
            assertTrue(s.info().caState() == CaState.OPEN || s.info().caState() == CaState.DISORDER,
                    s.info().caState().toString());
        }
    }

    @Test
    void the43PresetKeepsTheReductionDespiteTheSameDsacks() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.kernel", "4.3")) {
            TcpSock s = flight(h, 10, 10);
            long reduced = dsackEveryRetransmission(h, s, i -> { });
            assertEquals(4, mib(h, Mib.TcpExtTCPDSACKRecv));
            assertEquals(0, mib(h, Mib.TcpExtTCPDSACKUndo));
            assertEquals(CaState.RECOVERY, s.info().caState());
            assertEquals(reduced, s.info().ssthresh());
        }
    }
}
