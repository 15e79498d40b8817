package dev.usnet.tcp;

import static dev.usnet.tcp.SegmentHarness.MSS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where the PSH flag goes, as Linux puts it: on the last segment of each round of transmission — the tail of a
 * write, and the last segment of a train that cwnd, the peer's window or Nagle cut short — and never on a bare FIN.
 */
class PushFlagTest {
    /** Only the last segment of {@code flight} carries PSH. */
    private static void onlyLastPushed(List<Sent> flight) {
        for (int i = 0; i < flight.size() - 1; i++) {
            assertFalse(flight.get(i).has(TcpSegment.PSH), "segment " + i + " of " + flight);
        }
        assertTrue(flight.getLast().has(TcpSegment.PSH), flight::toString);
    }

    @Test
    void aTrainCutShortByTheInitialWindowEndsWithPsh() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.write(s, 20 * MSS);
            List<Sent> first = h.sent();
            assertEquals(10, first.size(), first::toString);
            onlyLastPushed(first);
            // One ACK in slow start releases two more: again the last of them is pushed, though data remains.
            h.seg().seq(1).ack(SegmentHarness.end(1)).inject();
            List<Sent> next = h.sent();
            assertEquals(2, next.size(), next::toString);
            onlyLastPushed(next);
        }
    }

    @Test
    void aTrainCutShortByThePeersWindowEndsWithPshWhenItEndsAWholeChunk() {
        try (SegmentHarness h = new SegmentHarness()) {
            // The handshake's ACK offers 46 << 7 = 5888 bytes: four full segments fit, the fifth does not.
            TcpSock s = h.accept(new PeerSyn(1460, 7, true, true, 46));
            h.write(s, 8 * MSS);
            List<Sent> flight = h.sent();
            assertEquals(4, flight.size(), flight::toString);
            onlyLastPushed(flight);
        }
    }

    @Test
    void aTrainCutShortOnALoneSegmentCarriesNoPsh() {
        try (SegmentHarness h = new SegmentHarness()) {
            // 40 << 7 = 5120 bytes: three full segments, the last a chunk of its own (tcp_min_tso_segs is 2).
            TcpSock s = h.accept(new PeerSyn(1460, 7, true, true, 40));
            h.write(s, 8 * MSS);
            List<Sent> flight = h.sent();
            assertEquals(3, flight.size(), flight::toString);
            assertTrue(flight.stream().noneMatch(x -> x.has(TcpSegment.PSH)), flight::toString);
        }
    }

    @Test
    void fullSegmentsSentAheadOfATailNagleHoldsEndWithPsh() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.write(s, 100);
            assertTrue(h.sentOne().has(TcpSegment.PSH));
            // Small data is unacknowledged: two full segments leave, the 500-byte tail waits for the ACK.
            h.write(s, 2 * MSS + 500);
            List<Sent> flight = h.sent();
            assertEquals(2, flight.size(), flight::toString);
            onlyLastPushed(flight);
            h.seg().seq(1).ack(101).inject();
            Sent tail = h.sentOne();
            assertEquals(500, tail.payload());
            assertTrue(tail.has(TcpSegment.PSH), tail::toString);
        }
    }

    @Test
    void aBareFinCarriesNoPsh() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            s.shutdownOutput();
            h.net.settle();
            Sent fin = h.sentOne();
            assertTrue(fin.has(TcpSegment.FIN) && fin.has(TcpSegment.ACK_FLAG), fin::toString);
            assertFalse(fin.has(TcpSegment.PSH), fin::toString);
        }
    }

    @Test
    void aFinOnTheLastDataIsPushed() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1).win(0).inject();
            h.write(s, 500);
            s.shutdownOutput();
            h.net.settle();
            h.sentNothing();
            h.seg().seq(1).ack(1).win(500).inject();
            Sent last = h.sentOne();
            assertEquals(500, last.payload());
            assertTrue(last.has(TcpSegment.FIN) && last.has(TcpSegment.PSH), last::toString);
        }
    }

    @Test
    void closingSendsATailNagleHeldTogetherWithTheFin() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.write(s, 100);
            h.sentOne();
            h.write(s, 500);
            h.sentNothing();
            // tcp_nagle_test lets the segment with the final FIN go whatever is unacknowledged.
            s.close();
            h.net.settle();
            Sent last = h.sentOne();
            assertEquals(500, last.payload());
            assertTrue(last.has(TcpSegment.FIN) && last.has(TcpSegment.PSH), last::toString);
        }
    }

    @Test
    void aRetransmissionIsPushedAsTheOriginalWas() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.write(s, 500);
            assertTrue(h.sentOne().has(TcpSegment.PSH));
            // Nothing is acknowledged: the retransmission (a tail loss probe or the RTO) resends the same segment.
            List<Sent> again = List.of();
            for (int i = 0; i < 20 && again.isEmpty(); i++) {
                h.advance(100_000_000L);
                again = h.sent();
            }
            assertFalse(again.isEmpty(), "retransmitted");
            Sent r = again.getFirst();
            assertEquals(1, r.seq());
            assertTrue(r.has(TcpSegment.PSH), r::toString);
        }
    }
}
