package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import org.junit.jupiter.api.Test;

/**
 * The checks every segment of a synchronized connection passes, one injected segment at a time: PAWS
 * (RFC 7323), the sequence window, and RFC 5961's answers to resets and SYNs.
 */
class TcpInputValidationTest {
    private static final int ACK = TcpSegment.ACK_FLAG;

    @Test
    void pawsDropsASegmentWithAnOlderTimestampAndAnswersWithADuplicateAck() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.advance(5_000_000L);
            h.seg().seq(1).ack(1).payload(100).ts(5000, h.lastDutTsVal).inject();
            assertEquals(100, h.bytesRead);
            h.advance(1_000_000_000L);
            h.sent();
            // Same sequence space further on, but a timestamp from before the last one: an old duplicate.
            h.seg().seq(101).ack(1).payload(100).ts(4000, h.lastDutTsVal).inject();
            assertEquals(100, h.bytesRead, "the PAWS-rejected data is not delivered");
            assertEquals(1, h.dut.mib().get(Mib.TcpExtPAWSEstab));
            assertEquals(1, h.drops(DropReason.TCP_OLD_SEGMENT));
            Sent dup = h.sentOne();
            assertTrue(dup.has(ACK) && dup.payload() == 0);
            assertEquals(101, dup.ack(), "the duplicate ACK still acknowledges what was received in order");
            assertEquals(TcpState.ESTABLISHED, s.state());
            // A fresh timestamp for the same data is accepted.
            h.seg().seq(101).ack(1).payload(100).ts(5001, h.lastDutTsVal).inject();
            assertEquals(200, h.bytesRead);
        }
    }

    @Test
    void aResetInsideTheWindowButNotAtRcvNxtGetsAChallengeAckAndTheConnectionStays() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().flags(TcpSegment.RST).seq(1 + 5000).inject();
            assertEquals(TcpState.ESTABLISHED, s.state());
            assertNull(h.closedWith());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPChallengeACK));
            Sent challenge = h.sentOne();
            assertTrue(challenge.has(ACK) && !challenge.has(TcpSegment.RST));
            assertEquals(1, challenge.ack(), "the challenge ACK tells the peer the exact sequence to reset with");
        }
    }

    @Test
    void aResetAtRcvNxtClosesTheConnectionWithEconnreset() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().flags(TcpSegment.RST).seq(1).inject();
            assertEquals(TcpState.CLOSED, s.state());
            assertEquals(TcpError.ECONNRESET, h.closedWith());
            assertEquals(1, h.dut.mib().get(Mib.TcpEstabResets));
            h.sentNothing();
        }
    }

    @Test
    void aResetOutsideTheWindowIsDroppedWithoutAnAnswer() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            // Below rcv_nxt, and beyond the advertised window.
            h.seg().flags(TcpSegment.RST).seq(-10).inject();
            h.seg().flags(TcpSegment.RST).seq(1 + (50L << 20)).inject();
            assertEquals(TcpState.ESTABLISHED, s.state());
            assertEquals(2, h.drops(DropReason.TCP_OUT_OF_WINDOW));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtTCPChallengeACK));
            h.sentNothing();
        }
    }

    @Test
    void aSynOnAnEstablishedConnectionGetsAChallengeAckNotAReset() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().flags(TcpSegment.SYN).seq(1).mss(1460).inject();
            assertEquals(TcpState.ESTABLISHED, s.state());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPChallengeACK));
            Sent a = h.sentOne();
            assertTrue(a.has(ACK) && !a.has(TcpSegment.RST) && !a.has(TcpSegment.SYN), a::toString);
        }
    }

    @Test
    void dataBeyondTheWindowIsDroppedAndAnsweredWithTheCurrentAck() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().seq(1 + (50L << 20)).ack(1).payload(500).inject();
            assertEquals(0, h.bytesRead);
            assertEquals(1, h.drops(DropReason.TCP_OUT_OF_WINDOW));
            Sent a = h.sentOne();
            assertEquals(1, a.ack());
            assertEquals(0, a.sackBlocks(), "nothing was queued, so nothing is SACKed");
            assertEquals(TcpState.ESTABLISHED, s.state());
        }
    }

    @Test
    void anAckOfDataNeverSentIsAnsweredAndItsSegmentDropped() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1 + 10_000).payload(10).inject();
            assertEquals(0, h.bytesRead, "the segment carrying the bogus ACK is not accepted");
            assertEquals(1, h.drops(DropReason.TCP_INVALID_ACK));
            assertEquals(1, h.sentOne().ack());
        }
    }

    @Test
    void aRetransmissionOfDataAlreadyReceivedIsAnsweredAtOnceWithADsack() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1).payload(1000).inject();
            h.advance(300_000_000L);
            h.sent();
            h.seg().seq(1).ack(1).payload(1000).inject();
            Sent a = h.sentOne();
            assertEquals(1001, a.ack());
            assertEquals(1, a.sackBlocks(), a::toString);
            assertEquals(1, a.sackStart()[0], "D-SACK reports the duplicate range (RFC 2883)");
            assertEquals(1001, a.sackEnd()[0]);
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPDSACKOldSent));
            assertEquals(1, h.drops(DropReason.TCP_OLD_DATA));
        }
    }

    @Test
    void outOfOrderDataIsSackedAndTheHoleFilledAcksEverything() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(PeerSyn.linux());
            h.seg().seq(1001).ack(1).payload(1000).inject();
            Sent a = h.sentOne();
            assertEquals(1, a.ack());
            assertEquals(1, a.sackBlocks());
            assertEquals(1001, a.sackStart()[0]);
            assertEquals(2001, a.sackEnd()[0]);
            h.seg().seq(1).ack(1).payload(1000).inject();
            Sent b = h.sentOne();
            assertEquals(2001, b.ack(), "filling the hole acknowledges the queued segment too, at once");
            assertEquals(0, b.sackBlocks());
            assertEquals(2000, h.bytesRead);
        }
    }

    /** After the peer's FIN (CLOSE-WAIT) new data is dropped, not read past the end of the stream. */
    @Test
    void dataAfterThePeersFinIsDroppedNotRead() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1).payload(100).flags(TcpSegment.ACK_FLAG | TcpSegment.FIN).inject();
            assertEquals(TcpState.CLOSE_WAIT, s.state());
            assertEquals(100, h.bytesRead);
            long dropped = h.drops(DropReason.TCP_OUT_OF_WINDOW);
            h.seg().seq(102).ack(1).payload(50).flags(TcpSegment.ACK_FLAG | TcpSegment.FIN).inject();
            h.seg().seq(102).ack(1).payload(50).inject();
            assertEquals(100, h.bytesRead, "nothing past the FIN reaches the application");
            assertEquals(dropped + 2, h.drops(DropReason.TCP_OUT_OF_WINDOW));
            // A retransmission of the last data and the FIN is old data: D-SACKed, not read again.
            h.sent();
            h.seg().seq(51).ack(1).payload(50).flags(TcpSegment.ACK_FLAG | TcpSegment.FIN).inject();
            assertEquals(100, h.bytesRead);
            Sent dup = h.sentOne();
            assertEquals(1, dup.sackBlocks(), dup::toString);
        }
    }

    /** A connection reset with unread data its application never closes is released with the namespace. */
    @Test
    void aResetConnectionsUnreadDataIsReleasedWhenTheNamespaceCloses() {
        long live = dev.usnet.core.testing.LeakGuard.liveBuffers();
        try (SegmentHarness h = new SegmentHarness()) {
            h.readOnData = false;
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1).payload(500).inject();
            h.seg().seq(501).ack(1).flags(TcpSegment.RST).inject();
            assertEquals(TcpState.CLOSED, s.state());
            assertEquals(TcpError.ECONNRESET, s.error());
        }
        assertEquals(live, dev.usnet.core.testing.LeakGuard.liveBuffers(), "no buffer left after the namespace closed");
    }

}
