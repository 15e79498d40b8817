package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The send and receive windows at their edges: window scaling (RFC 7323) and zero-window probing. */
class WindowTest {
    private static final int MSS = 1448;

    @Test
    void theWindowOfASynAckIsNeverScaledThoughLaterOnesAre() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.connect(new PeerSyn(1460, 7, true, true, 1000));
            assertEquals(1000, s.info().sndWnd(), "the SYN-ACK's window is taken as it is");
            h.seg().seq(1).ack(1).win(1000).inject();
            assertEquals(1000L << 7, s.info().sndWnd(), "from then on the peer's shift applies");
        }
    }

    @Test
    void aShiftAbove14IsTakenAs14() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(new PeerSyn(1460, 15, true, true, 1));
            assertEquals(14, s.info().wscaleSnd());
            assertEquals(1L << 14, s.info().sndWnd(), "the handshake's ACK already carries a scaled window");
            h.seg().seq(1).ack(1).win(3).inject();
            assertEquals(3L << 14, s.info().sndWnd());
        }
    }

    @Test
    void withoutThePeersWscaleNeitherSideScales() {
        // buffers=max: the window is the whole free buffer, so the 65535 cap shows (autotuned, rcv_ssthresh keeps
        // it far below; BufferAutotuneTest checks those windows).
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.buffers", "max")) {
            h.listenAndSendSyn(new PeerSyn(1460, -1, true, true, 65535));
            Sent synAck = h.sentOne();
            assertFalse(synAck.hasWscale(), "a SYN-ACK offers window scaling only to a SYN that did");
            TcpSock s = h.completeHandshake(synAck, 65535);
            assertEquals(-1, s.info().wscaleSnd());
            assertEquals(-1, s.info().wscaleRcv());
            h.seg().seq(1).ack(1).payload(1000).inject();
            h.advance(300_000_000L);
            Sent a = h.sent().getLast();
            assertEquals(1001, a.ack());
            assertEquals(65535, a.window(), "an unscaled window is capped at 65535 bytes, however large the buffer");
        }
    }

    @Test
    void ourShiftIsTheSmallestThatFitsTheLargestReceiveBufferAndOurWindowsUseIt() {
        // buffers=max: the SYN-ACK and later windows are the whole buffer (autotuned they are 10 segments and
        // rcv_ssthresh; BufferAutotuneTest checks those). The shift follows tcp_rmem max either way.
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_rmem", "4096 87380 262144", "usnet.tcp.buffers", "max")) {
            h.listenAndSendSyn(PeerSyn.linux());
            Sent synAck = h.sentOne();
            // 262144 bytes do not fit 65535 << 2 (262140): the shift is 3.
            assertTrue(synAck.hasWscale());
            assertEquals(3, synAck.wscale());
            assertEquals(65160, synAck.window(), "the SYN-ACK offers whole segments of the MSS timestamps leave");
            h.completeHandshake(synAck, 65535);
            h.readOnData = false;
            h.seg().seq(1).ack(1).payload(1000).inject();
            h.advance(300_000_000L);
            Sent a = h.sent().getLast();
            assertEquals((262144 - 1000) >> 3, a.window(), "the free buffer (1000 bytes unread), in units of 2^3 bytes");
        }
    }

    @Test
    void anAckAsOldAsTheLastUpdateMayCloseTheWindowButNotShrinkIt() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            assertEquals(65535L << 7, s.info().sndWnd());
            h.seg().seq(1).ack(1).win(100).inject();
            assertEquals(65535L << 7, s.info().sndWnd(), "same SEG.SEQ and SEG.ACK: a smaller window is ignored");
            h.seg().seq(1).ack(1).win(0).inject();
            assertEquals(0, s.info().sndWnd(), "but closing it to zero is taken (tcp_may_update_window)");
        }
    }

    @Test
    void aClosedWindowIsProbedWithBackoffAndDataFlowsWhenItOpens() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            h.seg().seq(1).ack(1).win(0).inject();
            h.write(s, 20_000);
            h.sentNothing();
            // The probe timer starts at the RTO (200 ms floor) and doubles (icsk_backoff); an ACK that leaves the
            // window closed re-arms it from its arrival (tcp_ack_probe).
            long[] expectedGaps = {200_000_000L, 400_000_000L, 800_000_000L};
            long last = h.now();
            for (long gap : expectedGaps) {
                h.advance(gap - 1_000_000L);
                h.sentNothing();
                h.advance(2_000_000L);
                Sent probe = h.sentOne();
                assertTrue(probe.has(TcpSegment.ACK_FLAG) && probe.payload() == 0, probe::toString);
                assertEquals(0, probe.seq(), "a zero-window probe carries snd_una - 1, already acknowledged");
                assertEquals(gap, probe.at() - last, 10_000L);
                // The peer answers each probe: still no room.
                h.seg().seq(1).ack(1).win(0).inject();
                last = h.now();
                h.sentNothing();
            }
            // The window opens to 100 << 7 = 12800 bytes: eight full segments fit, the ninth would not.
            h.seg().seq(1).ack(1).win(100).inject();
            List<Sent> data = h.sent();
            assertEquals(8, data.size(), data::toString);
            assertEquals(8 * MSS, data.stream().mapToInt(Sent::payload).sum());
            assertEquals(1, data.getFirst().seq());
        }
    }
}
