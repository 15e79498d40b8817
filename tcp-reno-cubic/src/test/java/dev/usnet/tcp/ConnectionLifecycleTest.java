package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.TcpSegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A connection's life at its edges as Linux lives it: the retransmitted SYN that restarts the SYN-ACK timer, the
 * reset connection that stays in the accept queue, the reset in CLOSE-WAIT that is a broken pipe, and the
 * per-connection rate limit on challenge ACKs.
 */
class ConnectionLifecycleTest {
    private static final long MS = 1_000_000L;

    @Test
    void aRetransmittedSynIsAnsweredAtOnceAndRestartsTheSynAckTimer() {
        try (SegmentHarness h = new SegmentHarness()) {
            SegmentHarness.PeerSyn syn = new SegmentHarness.PeerSyn(1000, 7, true, false, 32000);
            h.listenAndSendSyn(syn);
            h.sentOne();
            h.advance(300 * MS);
            syn.applyTo(h.seg().flags(TcpSegment.SYN).seq(0)).inject();
            SegmentHarness.Sent again = h.sentOne();
            assertTrue(again.has(TcpSegment.SYN) && again.has(TcpSegment.ACK_FLAG), again::toString);
            long resentAt = again.at();
            // Without the restart the timer would fire 1 s after the first SYN-ACK, 700 ms from here.
            h.advance(990 * MS);
            h.sentNothing();
            h.advance(20 * MS);
            SegmentHarness.Sent timeout = h.sentOne();
            assertEquals(1000 * MS, timeout.at() - resentAt, 1 * MS);
        }
    }

    @Test
    void aSecondRetransmittedSynWithinHalfASecondIsNotAnswered() {
        try (SegmentHarness h = new SegmentHarness()) {
            SegmentHarness.PeerSyn syn = new SegmentHarness.PeerSyn(1000, 7, true, false, 32000);
            h.listenAndSendSyn(syn);
            h.sentOne();
            h.advance(100 * MS);
            syn.applyTo(h.seg().flags(TcpSegment.SYN).seq(0)).inject();
            h.sentOne();
            h.advance(100 * MS);
            syn.applyTo(h.seg().flags(TcpSegment.SYN).seq(0)).inject();
            h.sentNothing();
        }
    }

    @Test
    void aConnectionResetInTheAcceptQueueIsStillAcceptedAndReportsTheReset() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpListener l = h.tcp.listen(0, SegmentHarness.DUT_PORT, 0, null);
            h.seg().flags(TcpSegment.SYN).seq(0).mss(1000).win(32000).inject();
            SegmentHarness.Sent synAck = h.sentOne();
            assertTrue(synAck.has(TcpSegment.SYN), synAck::toString);
            h.seg().seq(1).ack(1).win(500).inject();
            assertEquals(1, l.acceptQueueLength());
            h.seg().flags(TcpSegment.RST | TcpSegment.ACK_FLAG).seq(1).ack(1).win(500).inject();
            assertEquals(1, l.acceptQueueLength(), "the dead connection keeps its place");
            // The queue (backlog 0 admits one) is full: a new SYN is dropped without an answer.
            h.seg().flags(TcpSegment.SYN).seq(1000).mss(1000).win(32000).inject();
            h.sentNothing();
            TcpSock child = l.accept();
            assertNotNull(child);
            assertEquals(TcpState.CLOSED, child.state());
            assertEquals(TcpError.ECONNRESET, child.error());
            assertNull(l.accept());
        }
    }

    @Test
    void tcpMaxsegLowersTheAnnouncedMssAndCapsTheSegmentsSent() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.tcp.connect(SegmentHarness.DUT_ADDR, SegmentHarness.DUT_PORT, SegmentHarness.PEER_ADDR,
                    SegmentHarness.PEER_PORT, h.callbacks, sk -> sk.setUserMss(700));
            h.net.settle();
            SegmentHarness.Sent syn = h.sentOne();
            assertTrue(syn.hasMss());
            assertEquals(700, syn.mss());
            h.seg().flags(TcpSegment.SYN | TcpSegment.ACK_FLAG).seq(0).ack(1).mss(1460).win(30000).inject();
            assertEquals(TcpState.ESTABLISHED, s.state());
            assertEquals(700, s.info().sndMss(), "the peer's 1460 is capped");
        }
    }

    @Test
    void aResetInCloseWaitIsABrokenPipe() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(new SegmentHarness.PeerSyn(1000, 7, true, false, 32000));
            h.seg().flags(TcpSegment.FIN | TcpSegment.ACK_FLAG).seq(1).ack(1).win(500).inject();
            h.sent();
            assertEquals(TcpState.CLOSE_WAIT, s.state());
            h.seg().flags(TcpSegment.RST | TcpSegment.ACK_FLAG).seq(2).ack(1).win(500).inject();
            assertEquals(TcpError.EPIPE, h.closedWith());
        }
    }

    @Test
    void challengeAcksAreLimitedToOnePerHalfSecond() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(new SegmentHarness.PeerSyn(1000, 7, true, false, 32000));
            h.advance(100 * MS);
            h.sent();
            h.seg().flags(TcpSegment.RST | TcpSegment.ACK_FLAG).seq(5001).ack(1).win(500).inject();
            List<SegmentHarness.Sent> first = h.sent();
            assertEquals(1, first.size(), first::toString);
            assertEquals(1, first.get(0).ack());
            h.advance(100 * MS);
            h.seg().flags(TcpSegment.RST | TcpSegment.ACK_FLAG).seq(6001).ack(1).win(500).inject();
            h.sentNothing();
            h.advance(500 * MS);
            h.seg().flags(TcpSegment.RST | TcpSegment.ACK_FLAG).seq(7001).ack(1).win(500).inject();
            assertEquals(1, h.sent().size(), "answered again after 500 ms");
        }
    }
}
