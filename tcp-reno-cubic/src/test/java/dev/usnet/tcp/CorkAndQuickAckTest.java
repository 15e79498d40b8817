package dev.usnet.tcp;

import static dev.usnet.tcp.SegmentHarness.MSS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** TCP_CORK, send()'s MSG_MORE and TCP_QUICKACK, as Linux's tcp_sock_set_cork, tcp_push and tcp_sock_set_quickack. */
class CorkAndQuickAckTest {
    private static void send(SegmentHarness h, TcpSock s, int n, boolean more) {
        assertEquals(n, s.write(Unpooled.wrappedBuffer(new byte[n]), 0, n, more));
        h.net.settle();
    }

    @Test
    void corkHoldsPartialSegmentsSendsFullOnesAndUncorkingSendsTheRest() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            s.setCork(true);
            h.write(s, 600);
            h.write(s, 600);
            // Nothing is in flight, so Nagle alone would have sent the first write at once.
            h.sentNothing();
            h.write(s, 600);
            Sent full = h.sentOne();
            assertEquals(MSS, full.payload());
            assertFalse(full.has(TcpSegment.PSH), "the corked tail keeps the push mark: " + full);
            s.setCork(false);
            h.net.settle();
            Sent rest = h.sentOne();
            assertEquals(1800 - MSS, rest.payload());
            assertTrue(rest.has(TcpSegment.PSH), rest::toString);
        }
    }

    @Test
    void msgMoreHoldsThePartialTailUntilAWriteWithoutIt() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            send(h, s, 300, true);
            send(h, s, 300, true);
            h.sentNothing();
            send(h, s, 300, false);
            Sent all = h.sentOne();
            assertEquals(900, all.payload());
            assertTrue(all.has(TcpSegment.PSH), all::toString);
        }
    }

    @Test
    void quickAckOffDelaysTheAckOfALoneSegmentBy40ms() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            s.setQuickAck(false);
            long t0 = h.now();
            h.seg().seq(1).ack(1).payload(200).inject();
            h.sentNothing();
            h.advance(39_000_000L);
            h.sentNothing();
            h.advance(2_000_000L);
            Sent ack = h.sentOne();
            assertEquals(201, ack.ack());
            assertEquals(40_000_000L, ack.at() - t0, 1_000_000L);
        }
    }

    @Test
    void withoutQuickAckOffTheFirstDataIsAcknowledgedAtOnce() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1).payload(200).inject();
            assertEquals(201, h.sentOne().ack());
        }
    }

    @Test
    void quickAckOnSendsAnOwedAckAtOnce() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            s.setQuickAck(false);
            h.seg().seq(1).ack(1).payload(200).inject();
            h.sentNothing();
            s.setQuickAck(true);
            h.net.settle();
            assertEquals(201, h.sentOne().ack());
        }
    }

    @Test
    void aFinOnAnOpenConnectionIsAcknowledgedByTheDelayedAckTimer() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.accept(PeerSyn.linux());
            long t0 = h.now();
            h.seg().flags(TcpSegment.FIN | TcpSegment.ACK_FLAG | TcpSegment.PSH).seq(1).ack(1).payload(200).inject();
            // tcp_fin enters ping-pong mode: no quick ACK, the 40 ms timer (or a reply) acknowledges it.
            h.sentNothing();
            h.advance(41_000_000L);
            Sent ack = h.sentOne();
            assertEquals(202, ack.ack());
            assertEquals(40_000_000L, ack.at() - t0, 1_000_000L);
        }
    }
}
