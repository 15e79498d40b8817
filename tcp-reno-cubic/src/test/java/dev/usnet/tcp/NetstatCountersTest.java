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
 * The TcpExt counters {@code netstat -s} prints for loss recovery, each provoked by a scripted peer where Linux
 * counts it: fast and slow-start retransmits, the timeout classes, reordering detected by SACK, FACK and
 * timestamps, partial undo, delayed ACKs and quick-ack activations. Segments are numbered as in
 * {@link RecoveryPathsTest}: segment i covers [1 + 1448 (i - 1), 1 + 1448 i).
 */
class NetstatCountersTest {

    private static long mib(SegmentHarness h, Mib m) {
        return h.dut.mib().get(m);
    }

    @Test
    void aLostSegmentResentInRecoveryIsAFastRetransmit() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.flight(10);
            h.seg().seq(1).ack(1).sack(start(5), end(5)).inject();
            assertEquals(start(1), h.sentOne().seq());
            assertEquals(1, mib(h, Mib.TcpExtTCPFastRetrans), "netstat: 1 fast retransmits");
            assertEquals(1, mib(h, Mib.TcpExtTCPSackRecovery));
            assertEquals(0, mib(h, Mib.TcpExtTCPSlowStartRetrans));
        }
    }

    @Test
    void inRecoveryWithNothingNewToSendAHoleBelowTheHighestSackIsForwardRetransmitted() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.flight(10);
            // All ten segments are out and nothing more is written. Each duplicate ACK SACKs more; FACK marks lost
            // what lies more than 3 segments below the highest SACK, and PRR lets one retransmission out per ACK.
            int[][] acks = {{5, 5}, {5, 6}, {5, 7}, {5, 7, 9, 9}, {5, 7, 9, 10}};
            int[] resent = {1, 2, 3, 4, 8};
            for (int i = 0; i < acks.length; i++) {
                int[] a = acks[i];
                var seg = h.seg().seq(1).ack(1);
                for (int b = 0; b < a.length; b += 2) {
                    seg.sack(start(a[b]), end(a[b + 1]));
                }
                seg.inject();
                assertEquals(start(resent[i]), h.sentOne().seq(), "after ACK " + i);
            }
            // 1-4 were marked lost; 8 lies within 3 segments of the highest SACK (10), so it is not, and goes out as
            // a forward retransmission once nothing new can be sent.
            assertEquals(4, mib(h, Mib.TcpExtTCPFastRetrans));
            assertEquals(1, mib(h, Mib.TcpExtTCPForwardRetrans));
        }
    }

    @Test
    void afterAnRtoResentSegmentsAreSlowStartRetransmitsAndOnlyTheFirstTimeoutOfASeriesCounts() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_sack", "0")) {
            TcpSock s = h.flight(2);
            long rto = s.info().rtoUs() * 1000;
            h.advance(rto + 1_000_000L);
            assertEquals(start(1), h.sentOne().seq(), "the RTO resends the head");
            h.advance(2 * rto + 1_000_000L);
            assertEquals(start(1), h.sentOne().seq(), "backed off, again");
            assertEquals(2, s.info().timeouts());
            assertEquals(1, mib(h, Mib.TcpExtTCPTimeouts), "the second timeout of the series is not counted");
            h.seg().seq(1).ack(end(1)).inject();
            assertEquals(start(2), h.sent().getFirst().seq());
            assertEquals(1, mib(h, Mib.TcpExtTCPSlowStartRetrans), "segment 2, resent in Loss");
            assertEquals(0, mib(h, Mib.TcpExtTCPFastRetrans), "RTO retransmissions are no fast retransmits");
        }
    }

    @Test
    void aTimeoutDuringSackRecoveryIsASackFailureNotATimeout() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            h.seg().seq(1).ack(1).sack(start(5), end(5)).inject();
            assertEquals(CaState.RECOVERY, s.info().caState());
            h.advance(s.info().rtoUs() * 1000 + 50_000_000L);
            assertEquals(1, s.info().timeouts());
            assertEquals(1, mib(h, Mib.TcpExtTCPSackFailures));
            assertEquals(0, mib(h, Mib.TcpExtTCPTimeouts));
        }
    }

    @Test
    void aHoleFilledByTheOriginalIsReorderingDetectedBySackWithoutFack() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_fack", "0")) {
            TcpSock s = h.flight(10);
            // Segment 10 first: one SACKed segment is not enough for RFC 6675 to call 1-9 lost.
            h.seg().seq(1).ack(1).sack(start(10), end(10)).inject();
            assertEquals(CaState.DISORDER, s.info().caState());
            // Then 1-9, never retransmitted: they were 10 segments out of order.
            h.seg().seq(1).ack(end(10)).inject();
            assertEquals(1, mib(h, Mib.TcpExtTCPSACKReorder));
            assertEquals(10, s.info().reordering(), "tcp_update_reordering raised the degree");
            assertEquals(0, mib(h, Mib.TcpExtTCPFastRetrans));
        }
    }

    @Test
    void aLateSackBelowTheHighestIsReorderingDetectedByFackAndSwitchesFackOff() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            h.seg().seq(1).ack(1).sack(start(8), end(8)).inject();
            assertEquals(start(1), h.sentOne().seq());
            assertTrue(s.recovery.detector() instanceof FackDetector);
            // Segment 2, never retransmitted, is SACKed late: 8 - 1 = 7 segments of reordering.
            h.seg().seq(1).ack(1).sack(start(2), end(8)).inject();
            assertEquals(1, mib(h, Mib.TcpExtTCPFACKReorder));
            assertEquals(0, mib(h, Mib.TcpExtTCPSACKReorder));
            assertEquals(7, s.info().reordering());
            assertTrue(s.recovery.detector() instanceof Rfc6675Detector, "tcp_disable_fack: RFC 6675 judges from now on");
        }
    }

    @Test
    void aPartialAckEchoingTheOriginalTimestampIsAPartialUndoAndTimestampReordering() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(10);
            long originalTs = h.lastDutTsVal;
            h.advance(5_000_000L);
            h.seg().seq(1).ack(1).sack(start(5), end(5)).inject();
            Sent rtx = h.sentOne();
            assertTrue(rtx.tsVal() > originalTs);
            // Segments 1-3 arrive as originals: a partial ACK (below high_seq) echoing their timestamp.
            h.seg().seq(1).ack(end(3)).ts(h.peerTsNow(), originalTs).inject();
            assertEquals(1, mib(h, Mib.TcpExtTCPPartialUndo));
            assertEquals(0, mib(h, Mib.TcpExtTCPFullUndo));
            assertEquals(1, mib(h, Mib.TcpExtTCPTSReorder), "fackets_out 5 + 3 acked > reordering 3");
            // Recovery is over; segment 5 is still SACKed above the hole, so Disorder (tcp_try_keep_open).
            assertEquals(CaState.DISORDER, s.info().caState());
        }
    }

    @Test
    void delayedAcksCountTheAcksTheTimerSentAndQuickAckActivationsTheDuplicatesReceived() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(PeerSyn.linux());
            long seq = 1;
            long timerAcks = 0;
            for (int i = 0; i < 20; i++) {
                long at = h.now();
                h.seg().seq(seq).ack(1).payload(100).inject();
                seq += 100;
                h.advance(100_000_000L);
                for (Sent a : h.sent()) {
                    if (a.at() - at >= 40_000_000L) {
                        timerAcks++;
                    }
                }
            }
            assertTrue(timerAcks > 0, "some ACKs waited for the delayed-ACK timer");
            assertEquals(timerAcks, mib(h, Mib.TcpExtDelayedACKs), "netstat: N delayed acks sent");
            // A retransmission of data already received: acknowledged at once, and quick-ack mode is entered.
            long before = h.now();
            h.seg().seq(seq - 100).ack(1).payload(100).inject();
            List<Sent> dup = h.sent();
            assertEquals(1, dup.size());
            assertEquals(before, dup.getFirst().at(), "at once");
            assertEquals(1, mib(h, Mib.TcpExtDelayedACKLost), "netstat: Quick ack mode was activated 1 times");
        }
    }
}
