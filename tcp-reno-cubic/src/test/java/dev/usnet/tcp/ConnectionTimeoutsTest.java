package dev.usnet.tcp;

import static dev.usnet.tcp.SegmentHarness.DUT_ADDR;
import static dev.usnet.tcp.SegmentHarness.DUT_PORT;
import static dev.usnet.tcp.SegmentHarness.PEER_ADDR;
import static dev.usnet.tcp.SegmentHarness.PEER_PORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.TcpSegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When a connection gives up or tries again (tcp_write_timeout, tcp_retransmit_timer): the SYN's timeouts with and
 * without Linux 6.5's linear start, TCP_SYNCNT, TCP_USER_TIMEOUT on data and on zero-window probes, the RTO a
 * connection starts with when its handshake gave no RTT sample, and the quick SYN retry after an unacceptable ACK.
 */
class ConnectionTimeoutsTest {
    private static final long MS = 1_000_000L;
    private static final long S = 1_000 * MS;

    /** The times (from the first) of the SYNs a connect sends in {@code nanos} without an answer. */
    private static List<Long> synTimes(SegmentHarness h, long nanos) {
        h.tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, h.callbacks);
        h.net.settle();
        h.advance(nanos);
        List<SegmentHarness.Sent> sent = h.sent();
        long first = sent.get(0).at();
        return sent.stream().peek(p -> assertTrue(p.has(TcpSegment.SYN), p::toString))
                .map(p -> Math.round((double) (p.at() - first) / MS)).toList();
    }

    @Test
    void synTimeoutsDoubleFromTheFirstWithoutLinearTimeouts() {
        try (SegmentHarness h = new SegmentHarness()) {
            assertEquals(List.of(0L, 1000L, 3000L, 7000L, 15000L), synTimes(h, 20 * S));
        }
    }

    @Test
    void linearTimeoutsKeepTheFirstFourRetriesAtOneSecond() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_syn_linear_timeouts", "4")) {
            assertEquals(List.of(0L, 1000L, 2000L, 3000L, 4000L, 5000L, 7000L, 11000L), synTimes(h, 12 * S));
        }
    }

    @Test
    void withLinearTimeoutsConnectFailsAtTheDoublingDeadlineOfTcpSynRetries() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_syn_linear_timeouts", "4",
                "net.ipv4.tcp_syn_retries", "2")) {
            // 2 retries of a doubling 1 s timer end at 1 + 2 + 4 = 7 s; the linear ones fit 5 retries before it.
            assertEquals(List.of(0L, 1000L, 2000L, 3000L, 4000L, 5000L), synTimes(h, 6900 * MS));
            assertNull(h.closedWith());
            h.advance(200 * MS);
            assertEquals(TcpError.ETIMEDOUT, h.closedWith());
            h.sentNothing();
        }
    }

    @Test
    void tcpSyncntOverridesTheSysctl() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, h.callbacks);
            s.setSynRetries(1);
            h.advance(2900 * MS);
            assertEquals(2, h.sent().size(), "the SYN and one retry");
            assertNull(h.closedWith());
            h.advance(200 * MS);
            assertEquals(TcpError.ETIMEDOUT, h.closedWith(), "after 1 + 2 s");
        }
    }

    @Test
    void aHandshakeWithoutAnRttSampleStartsWithAThreeSecondRto() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, h.callbacks);
            h.net.settle();
            h.advance(1050 * MS);
            assertEquals(2, h.sent().size(), "the SYN was retransmitted");
            // No timestamps: Karn's rule leaves the retransmitted SYN without an RTT sample.
            h.seg().flags(TcpSegment.SYN | TcpSegment.ACK_FLAG).seq(0).ack(1).mss(1460).win(65535).inject();
            assertEquals(TcpState.ESTABLISHED, s.state());
            assertEquals(3_000_000L, s.info().rtoUs());
        }
    }

    @Test
    void anUnacceptableAckInSynSentBringsTheSynBackAfterTwoJiffies() {
        try (SegmentHarness h = new SegmentHarness("usnet.hz", "250")) {
            h.tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, h.callbacks);
            h.net.settle();
            h.sentOne();
            h.advance(100 * MS);
            h.seg().flags(TcpSegment.RST | TcpSegment.ACK_FLAG).seq(0).ack(999).win(0).inject();
            h.advance(7 * MS);
            h.sentNothing();
            h.advance(2 * MS);
            SegmentHarness.Sent syn = h.sentOne();
            assertTrue(syn.has(TcpSegment.SYN) && !syn.has(TcpSegment.ACK_FLAG), syn::toString);
            assertNull(h.closedWith(), "a RST with a bad ACK is ignored");
        }
    }

    @Test
    void userTimeoutEndsRetransmissionAtItsDeadlineWithoutARst() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(1);
            s.setUserTimeoutMs(1000);
            // Run to the first retransmission: the deadline counts from it.
            long firstRetransmit = -1;
            while (firstRetransmit < 0) {
                h.advance(10 * MS);
                for (SegmentHarness.Sent p : h.sent()) {
                    firstRetransmit = p.at();
                }
            }
            h.advance(firstRetransmit + 990 * MS - h.now());
            assertNull(h.closedWith());
            h.sent();
            h.advance(20 * MS);
            assertEquals(TcpError.ETIMEDOUT, h.closedWith(), "the RTO is clamped to the deadline");
            for (SegmentHarness.Sent p : h.sent()) {
                assertTrue(!p.has(TcpSegment.RST), "no RST when the user timeout expires: " + p);
            }
        }
    }

    @Test
    void userTimeoutEndsZeroWindowProbing() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(SegmentHarness.PeerSyn.linux());
            s.setUserTimeoutMs(1000);
            h.seg().seq(1).ack(1).win(0).inject();
            h.write(s, 1000);
            long firstProbe = -1;
            while (firstProbe < 0) {
                h.advance(10 * MS);
                for (SegmentHarness.Sent p : h.sent()) {
                    firstProbe = p.at();
                }
            }
            h.advance(firstProbe + 990 * MS - h.now());
            assertNull(h.closedWith(), "probing goes on before the deadline");
            h.advance(20 * MS);
            assertEquals(TcpError.ETIMEDOUT, h.closedWith(), "the probe after the deadline is the abort instead");
        }
    }
}
