package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Buffer autotuning as Linux 3.18-4.3 do it (usnet.tcp.buffers=autotune, the default) against usnet's former
 * max-at-start (usnet.tcp.buffers=max).
 *
 * <p>The expected windows are worked out from the kernels' tcp_select_initial_window, tcp_init_buffer_space and
 * __tcp_select_window with the defaults (tcp_rmem 4096 87380 6291456, tcp_adv_win_scale 1, tcp_app_win 31,
 * MSS 1460): the SYN offers min(10 * 1460, 43690 / 1460 * 1460) = 14600, a SYN-ACK with timestamps 10 * 1448 = 14480;
 * the shift is 7 (6291456 >> 7 = 49152 fits 16 bits); the first later window is rcv_ssthresh rounded up to the
 * 128-byte scale unit, 14720 (header 115) and 14592 (header 114) — the "win 115" / "win 114" of tcpdump traces of
 * those kernels.
 */
class BufferAutotuneTest {
    private static final int MSS = 1448;
    /** tcp_fixup_rcvbuf for advmss 1460: 2 * SKB_TRUESIZE(1460 + 304) * 10, times 4 with tcp_moderate_rcvbuf. */
    private static final int FIXED_UP_RCVBUF = 2 * (1460 + 304 + 256 + 320) * 10 * 4;
    /** tcp_sndbuf_expand's per-segment memory for MSS 1460: roundup_pow_of_two(1460 + 304 + 320) + 256. */
    private static final int PER_MSS = 4096 + 256;

    @Test
    void theSynOffersTenSegmentsAndTheFirstAckRcvSsthreshRoundedToTheScale() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.tcp.connect(SegmentHarness.DUT_ADDR, SegmentHarness.DUT_PORT, SegmentHarness.PEER_ADDR,
                    SegmentHarness.PEER_PORT, h.callbacks);
            h.net.settle();
            Sent syn = h.sentOne();
            assertEquals(14600, syn.window(), "10 * MSS 1460: a fresh connect() knows of no timestamps yet");
            assertEquals(7, syn.wscale());
            h.seg().flags(TcpSegment.SYN | TcpSegment.ACK_FLAG).seq(0).ack(1).mss(1460).wscale(7).sackOk().win(65535)
                    .ts(h.peerTsNow(), syn.tsVal()).inject();
            Sent ack = h.sentOne();
            assertEquals(115, ack.window(), "rcv_ssthresh 14600 rounded up to 128 bytes: 115 << 7 = 14720");
            assertEquals(FIXED_UP_RCVBUF, s.receiveBufferBytes(), "tcp_fixup_rcvbuf at establishment");
            assertEquals(2 * 10 * PER_MSS, s.sendBufferBytes(), "tcp_sndbuf_expand at establishment: 2 * 10 * 4352");
            // window_clamp = tcp_full_space less one segment (tcp_init_buffer_space).
            assertEquals(FIXED_UP_RCVBUF / 2 - 1460, s.windowClamp());
        }
    }

    @Test
    void aPeerWithoutWindowScalingClampsTheWindowTo64KiB() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.connect(new PeerSyn(1460, -1, true, true, 65535));
            assertEquals(65535, s.windowClamp(), "tcp_rcv_synsent_state_process: min(window_clamp, 65535)");
            assertEquals(-1, s.info().wscaleRcv());
        }
    }

    @Test
    void theSynAckOffersTenSegmentsOfTheMssTimestampsLeave() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.listenAndSendSyn(PeerSyn.linux());
            Sent synAck = h.sentOne();
            assertEquals(14480, synAck.window());
            assertEquals(7, synAck.wscale());
            TcpSock s = h.completeHandshake(synAck, 65535);
            h.seg().seq(1).ack(1).payload(100).inject();
            h.advance(300_000_000L);
            assertEquals(114, h.sent().getLast().window(), "rcv_ssthresh 14480 rounded up: 114 << 7 = 14592");
            assertEquals(14480, s.rcvSsthresh(), "a 100-byte segment (< 128) does not grow rcv_ssthresh");
        }
        try (SegmentHarness h = new SegmentHarness()) {
            h.listenAndSendSyn(new PeerSyn(1460, 7, true, false, 65535));
            assertEquals(14600, h.sentOne().window(), "without timestamps: 10 * 1460");
        }
    }

    @Test
    void rcvSsthreshOpensByTwoSegmentsPerFullSegmentReceived() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.accept(PeerSyn.linux());
            for (int i = 0; i < 3; i++) {
                h.seg().seq(1 + i * MSS).ack(1).payload(MSS).inject();
            }
            assertEquals(14480 + 3 * 2 * 1460, s.rcvSsthresh(), "tcp_grow_window: + 2 * advmss per skb");
        }
    }

    @Test
    void withBuffersMaxEverySocketStartsAtTheMaximumAndNeverChanges() {
        try (SegmentHarness h = new SegmentHarness("usnet.tcp.buffers", "max")) {
            h.listenAndSendSyn(PeerSyn.linux());
            Sent synAck = h.sentOne();
            assertEquals(65160, synAck.window(), "the whole 16-bit window in segments, as before autotuning");
            TcpSock s = h.completeHandshake(synAck, 65535);
            assertEquals(6291456, s.receiveBufferBytes());
            assertEquals(4194304, s.sendBufferBytes());
        }
        try (TcpPair pair = new TcpPair(3)) {
            pair.set("usnet.tcp.buffers", "max");
            Bulk b = Bulk.run(pair, 1 << 20);
            assertTrue(b.done, "transfer finished");
            assertEquals(List.of(6291456), b.rcvbufSteps, "the receive buffer never moves");
            assertEquals(4194304, b.client.sendBufferBytes());
        }
    }

    @Test
    void theReceiveBufferGrowsPerRttUnderABulkFlowAndStopsAtTcpRmemMax() {
        try (TcpPair pair = new TcpPair(4)) {
            pair.set("net.ipv4.tcp_rmem", "4096 87380 524288").link(1_000_000_000L, 500_000);
            Bulk b = Bulk.run(pair, 3 << 20);
            assertTrue(b.done, "transfer finished");
            assertEquals(FIXED_UP_RCVBUF, b.rcvbufSteps.getFirst(), "established at tcp_fixup_rcvbuf's size");
            assertEquals(524288, b.rcvbufSteps.getLast(), "stops at tcp_rmem[2]");
            assertTrue(b.rcvbufSteps.size() >= 3, () -> "grows in steps, one per receiver RTT: " + b.rcvbufSteps);
            for (int i = 1; i < b.rcvbufSteps.size(); i++) {
                assertTrue(b.rcvbufSteps.get(i) > b.rcvbufSteps.get(i - 1), "only grows");
            }
            // The receiver's RTT (1 ms here) is measured in jiffies (HZ 1000): one step per jiffy at most.
            for (int i = 1; i < b.rcvbufStepTimes.size() - 1; i++) {
                assertTrue(b.rcvbufStepTimes.get(i + 1) / 1_000_000L > b.rcvbufStepTimes.get(i) / 1_000_000L,
                        () -> "at most once per RTT: " + b.rcvbufStepTimes);
            }
        }
    }

    @Test
    void theSendBufferGrowsWithCwndWhileTheWriterWaitsForRoom() {
        try (TcpPair pair = new TcpPair(5)) {
            pair.link(1_000_000_000L, 500_000);
            Bulk b = Bulk.run(pair, 3 << 20);
            assertTrue(b.done, "transfer finished");
            int sndbuf = b.client.sendBufferBytes();
            assertTrue(sndbuf > 2 * 10 * PER_MSS, () -> "grew from 87040 to " + sndbuf);
            assertEquals(0, sndbuf % (2 * PER_MSS), "2 * cwnd * 4352 (below tcp_wmem max)");
            assertTrue(sndbuf / (2 * PER_MSS) <= b.maxCwnd, () -> "follows cwnd (max " + b.maxCwnd + "): " + sndbuf);
            assertTrue(b.maxQueued <= b.maxSndbuf, "written but unacknowledged bytes never exceed sk_sndbuf");
        }
    }

    @Test
    void soRcvbufAndSoSndbufLockAutotuningOff() {
        try (TcpPair pair = new TcpPair(6)) {
            pair.link(1_000_000_000L, 500_000);
            Bulk b = Bulk.run(pair, 1 << 20, 65536, 32768);
            assertTrue(b.done, "transfer finished");
            assertEquals(List.of(131072), b.rcvbufSteps, "SO_RCVBUF 65536 doubled, never autotuned");
            assertEquals(65536, b.client.sendBufferBytes(), "SO_SNDBUF 32768 doubled, never expanded");
            assertTrue(b.maxQueued <= 65536, () -> "queued " + b.maxQueued);
        }
    }

    /** A bulk transfer client -> server, sampling the buffers after every event. */
    private static final class Bulk {
        final List<Integer> rcvbufSteps = new ArrayList<>();
        final List<Long> rcvbufStepTimes = new ArrayList<>();
        TcpSock client;
        TcpSock server;
        long maxCwnd;
        long maxQueued;
        int maxSndbuf;
        boolean done;

        static Bulk run(TcpPair pair, int bytes) {
            return run(pair, bytes, 0, 0);
        }

        static Bulk run(TcpPair pair, int bytes, int soRcvbuf, int soSndbuf) {
            Bulk b = new Bulk();
            TcpPair.HashingSink sink = new TcpPair.HashingSink();
            pair.serverTcp.listen(0, 5001, 8, c -> {
                if (soRcvbuf > 0) {
                    c.setReceiveBufferSize(soRcvbuf);
                }
                b.server = c;
                c.setCallbacks(sink);
            });
            TcpPair.BulkSender sender = new TcpPair.BulkSender(TcpPair.randomBytes(bytes, 1), 65536);
            b.client = pair.clientTcp.connect(0, 0, TcpPair.SERVER, 5001, sender, s -> {
                if (soSndbuf > 0) {
                    s.setSendBufferSize(soSndbuf);
                }
            });
            long limit = pair.now() + 60_000_000_000L;
            while (!sink.eof && pair.now() < limit) {
                long next = pair.net.sched.nextEventTime();
                if (next < 0) {
                    break;
                }
                pair.net.sched.runUntil(Math.max(next, pair.net.sched.nanoTime()));
                if (b.server != null) {
                    int rb = b.server.receiveBufferBytes();
                    if (b.rcvbufSteps.isEmpty() || b.rcvbufSteps.getLast() != rb) {
                        b.rcvbufSteps.add(rb);
                        b.rcvbufStepTimes.add(pair.now());
                    }
                }
                b.maxCwnd = Math.max(b.maxCwnd, b.client.cwnd());
                b.maxSndbuf = Math.max(b.maxSndbuf, b.client.sendBufferBytes());
                b.maxQueued = Math.max(b.maxQueued, b.client.sendBuf.size() + Seq.sub(b.client.sndNxt, b.client.sndUna));
            }
            b.done = sink.eof && sink.bytes == bytes;
            return b;
        }
    }
}
