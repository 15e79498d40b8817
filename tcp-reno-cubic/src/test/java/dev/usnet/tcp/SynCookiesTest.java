package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.TcpSegment;
import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * SYN cookies segment by segment (RFC 4987, Linux's syncookies.c): a listener whose SYN queue overflows answers
 * without state, the final ACK's cookie (MSS, period, keyed hash) and timestamp echo (window scale, SACK) make
 * the connection, and forged or expired cookies are counted and reset.
 */
class SynCookiesTest {
    private static final int SYN = TcpSegment.SYN;
    private static final int ACK = TcpSegment.ACK_FLAG;
    private static final long SEC = 1_000_000_000L;

    /** A listener with backlog 2 whose SYN queue is then full: three SYNs (2 + 1, "greater than") from other ports. */
    private static SegmentHarness overflowing(String... knobs) {
        SegmentHarness h = new SegmentHarness(knobs);
        h.backlog = 2;
        h.listen();
        fillSynQueue(h, 50_000);
        return h;
    }

    private static void fillSynQueue(SegmentHarness h, int firstPort) {
        for (int i = 0; i < 3; i++) {
            h.seg().from(firstPort + i).flags(SYN).seq(0).mss(1460).inject();
        }
        assertEquals(3, h.listener.synQueueLength());
        assertEquals(3, h.sent().size(), "each queued SYN answered by its child");
    }

    private static void linuxSyn(SegmentHarness h, int port) {
        PeerSyn.linux().applyTo(h.seg().from(port).flags(SYN).seq(0)).ts(h.peerTsNow(), 0).inject();
    }

    @Test
    void aFullSynQueueIsAnsweredWithACookieThatEncodesMssAndTheTimestampTheOptions() {
        try (SegmentHarness h = overflowing()) {
            int sockets = h.tcp.sockets().size();
            h.advance(1_234_567_000L);
            h.sent();
            linuxSyn(h, SegmentHarness.PEER_PORT);
            Sent sa = h.sentOne();
            assertTrue(sa.has(SYN) && sa.has(ACK), sa::toString);
            assertEquals(SegmentHarness.PEER_PORT, sa.peerPort());
            assertEquals(1, sa.ack());
            assertTrue(sa.hasMss() && sa.mss() == 1460 && sa.sackPermitted() && sa.hasTs() && sa.hasWscale(),
                    "the options a normal SYN-ACK offers");
            assertEquals(h.peerTsNow(), sa.tsEcr());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtSyncookiesSent));
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPReqQFullDoCookies));
            assertEquals(1, h.listener.cookiesSent());
            assertEquals(sockets, h.tcp.sockets().size(), "no state kept for the cookie");
            assertEquals(3, h.listener.synQueueLength());
            // The ISN is the cookie: the 4-tuple's hash gives back MSS 1460 (index 3) for the ACK that echoes it.
            SynCookies c = h.tcp.synCookies();
            assertEquals(1460, c.check(SegmentHarness.PEER_ADDR, SegmentHarness.DUT_ADDR, SegmentHarness.PEER_PORT,
                    SegmentHarness.DUT_PORT, Seq.add(h.dutIss, 1), Seq.add(SegmentHarness.PEER_ISN, 1), h.now()));
            assertEquals(0, c.check(SegmentHarness.PEER_ADDR, SegmentHarness.DUT_ADDR, SegmentHarness.PEER_PORT + 1,
                    SegmentHarness.DUT_PORT, Seq.add(h.dutIss, 1), Seq.add(SegmentHarness.PEER_ISN, 1), h.now()),
                    "another source port: the hash does not match");
            // The TS value less the connection's offset: the clock with window scale 7 and SACK in its low 6 bits.
            long ts = Seq.sub(sa.tsVal(), c.tsOffset(SegmentHarness.DUT_ADDR, SegmentHarness.PEER_ADDR));
            assertEquals(7 | SynCookies.TS_SACK, ts & 63);
            long clock = h.now() / 1_000_000L;
            assertTrue(ts <= clock && clock - ts < 64, "never ahead of the clock: " + ts + " vs " + clock);
        }
    }

    @Test
    void aValidFinalAckMakesTheConnectionWithTheOptionsTheTimestampCarried() {
        try (SegmentHarness h = overflowing()) {
            linuxSyn(h, SegmentHarness.PEER_PORT);
            Sent sa = h.sentOne();
            assertNull(h.accepted());
            h.seg().seq(1).ack(1).win(20).ts(h.peerTsNow(), sa.tsVal()).inject();
            TcpSock s = h.accepted();
            assertTrue(s != null && s.state() == TcpState.ESTABLISHED, "a connection from the cookie");
            assertEquals(1, h.dut.mib().get(Mib.TcpExtSyncookiesRecv));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtSyncookiesFailed));
            assertEquals(3, h.listener.synQueueLength(), "the cookie's connection never was in the SYN queue");
            TcpInfo info = s.info();
            assertTrue(info.timestamps() && info.sack());
            assertEquals(7, info.wscaleSnd(), "the peer's window scale, from the timestamp echo");
            assertEquals(sa.wscale(), info.wscaleRcv(), "ours, as the SYN-ACK offered it");
            assertEquals(1460 - 12, info.sndMss(), "the cookie's MSS less the timestamp option");
            h.sentNothing();
            // Window 20 << 7 = 2560 bytes: one full segment fits (unscaled, 20 bytes, nothing would).
            h.autoTs = true;
            h.lastDutTsVal = sa.tsVal();
            s.write(Unpooled.wrappedBuffer(new byte[10_000]), 0, 10_000);
            h.net.settle();
            List<Sent> out = h.sent();
            assertEquals(1, out.size(), () -> out + " " + s.info());
            assertEquals(1448, out.get(0).payload());
            assertEquals(1, out.get(0).seq(), "data starts right after the cookie");
            assertTrue(out.get(0).hasTs() && out.get(0).tsVal() - sa.tsVal() >= 0, "the timestamp clock goes on");
            // The peer's data and SACK work as on any connection.
            h.seg().seq(1).ack(1449).win(2000).payload(300).inject();
            assertEquals(300, h.bytesRead);
        }
    }

    @Test
    void aFinalAckCarryingDataIsTakenWithTheConnection() {
        try (SegmentHarness h = overflowing()) {
            linuxSyn(h, SegmentHarness.PEER_PORT);
            Sent sa = h.sentOne();
            h.seg().seq(1).ack(1).payload(500).ts(h.peerTsNow(), sa.tsVal()).inject();
            assertEquals(TcpState.ESTABLISHED, h.accepted().state());
            assertEquals(500, h.bytesRead);
        }
    }

    @Test
    void withoutTimestampsACookieKeepsOnlyTheMssRoundedDownToTheTable() {
        try (SegmentHarness h = overflowing()) {
            h.seg().flags(SYN).seq(0).mss(1400).wscale(7).sackOk().inject();
            Sent sa = h.sentOne();
            assertTrue(sa.hasMss(), sa::toString);
            assertFalse(sa.hasTs() || sa.sackPermitted() || sa.hasWscale(), "no room to keep SACK or window scale");
            h.seg().seq(1).ack(1).win(1000).inject();
            TcpInfo info = h.accepted().info();
            assertEquals(TcpState.ESTABLISHED, info.state());
            assertEquals(1300, info.sndMss(), "1400 is sent as the table's 1300");
            assertFalse(info.sack() || info.timestamps());
            assertEquals(-1, info.wscaleSnd());
        }
    }

    @Test
    void aForgedFinalAckIsCountedAsFailedAndReset() {
        try (SegmentHarness h = overflowing()) {
            linuxSyn(h, SegmentHarness.PEER_PORT);
            h.sentOne();
            int sockets = h.tcp.sockets().size();
            // Another port, a made-up acknowledgment number: not a cookie of ours.
            h.seg().from(61_000).seq(1).ack(777_777).inject();
            Sent rst = h.sentOne();
            assertTrue(rst.has(TcpSegment.RST), rst::toString);
            assertEquals(61_000, rst.peerPort());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtSyncookiesFailed));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtSyncookiesRecv));
            assertEquals(sockets, h.tcp.sockets().size());
            assertEquals(1, h.drops(DropReason.TCP_NO_SOCKET));
        }
    }

    @Test
    void aCookieIsGoodForTheNextMinuteButNotTheOneAfter() {
        try (SegmentHarness h = overflowing()) {
            linuxSyn(h, SegmentHarness.PEER_PORT);
            Sent a = h.sentOne();
            long issA = h.dutIss;
            linuxSyn(h, 50_100);
            Sent b = h.sentOne();
            long issB = h.dutIss;
            // 70 s later the counter has moved on once: B's cookie is still good.
            h.advance(70 * SEC);
            h.sent();
            h.dutIss = issB;
            h.seg().from(50_100).seq(1).ack(1).ts(h.peerTsNow(), b.tsVal()).inject();
            assertEquals(TcpState.ESTABLISHED, h.accepted().state());
            assertEquals(50_100, h.accepted().remotePort());
            // Keep the listener overflowing (the children above have timed out by now), then at 125 s, two periods on,
            // A's cookie is too old.
            h.advance(49 * SEC);
            fillSynQueue(h, 52_000);
            linuxSyn(h, 53_000);
            h.sentOne();
            h.advance(6 * SEC);
            h.sent();
            h.dutIss = issA;
            h.seg().seq(1).ack(1).ts(h.peerTsNow(), a.tsVal()).inject();
            Sent rst = h.sentOne();
            assertTrue(rst.has(TcpSegment.RST), rst::toString);
            assertEquals(1, h.dut.mib().get(Mib.TcpExtSyncookiesFailed));
            assertEquals(1, h.dut.mib().get(Mib.TcpExtSyncookiesRecv));
        }
    }

    @Test
    void withoutARecentOverflowAnAckIsNotCheckedAsACookie() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.listen();
            h.seg().seq(1).ack(1).inject();
            assertTrue(h.sentOne().has(TcpSegment.RST));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtSyncookiesFailed), "no cookie sent: nothing to check");
        }
    }

    @Test
    void syncookies2AnswersEverySynWithACookie() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_syncookies", "2")) {
            h.listen();
            linuxSyn(h, SegmentHarness.PEER_PORT);
            Sent sa = h.sentOne();
            assertEquals(0, h.listener.synQueueLength());
            assertEquals(0, h.tcp.sockets().size());
            assertEquals(1, h.dut.mib().get(Mib.TcpExtSyncookiesSent));
            h.advance(5 * SEC);
            h.sentNothing();
            h.seg().seq(1).ack(1).ts(h.peerTsNow(), sa.tsVal()).inject();
            assertEquals(TcpState.ESTABLISHED, h.accepted().state());
        }
    }

    @Test
    void syncookies0DropsTheSynWhenTheQueueIsFull() {
        try (SegmentHarness h = overflowing("net.ipv4.tcp_syncookies", "0")) {
            linuxSyn(h, SegmentHarness.PEER_PORT);
            h.sentNothing();
            assertEquals(1, h.dut.mib().get(Mib.TcpExtTCPReqQFullDrop));
            assertEquals(1, h.dut.mib().get(Mib.TcpExtListenDrops));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtListenOverflows), "the accept queue was not full");
            assertEquals(1, h.drops(DropReason.TCP_SYN_QUEUE_FULL));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtSyncookiesSent));
        }
    }

    @Test
    void aCookieAckFindingTheAcceptQueueFullIsDroppedWithoutAReset() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_syncookies", "2")) {
            h.backlog = 0;
            h.listener = h.tcp.listen(0, SegmentHarness.DUT_PORT, 0, null);
            // Backlog 0 still admits one connection (the "greater than"); the second finds the queue full.
            // Both SYNs are answered while the accept queue is empty (a SYN is refused when it is full).
            long[] iss = new long[2];
            long[] tsVal = new long[2];
            for (int i = 0; i < 2; i++) {
                linuxSyn(h, 51_000 + i);
                tsVal[i] = h.sentOne().tsVal();
                iss[i] = h.dutIss;
            }
            for (int i = 0; i < 2; i++) {
                h.dutIss = iss[i];
                h.seg().from(51_000 + i).seq(1).ack(1).ts(h.peerTsNow(), tsVal[i]).inject();
            }
            assertEquals(1, h.listener.acceptQueueLength());
            h.sentNothing();
            assertEquals(1, h.dut.mib().get(Mib.TcpExtListenOverflows));
            assertEquals(2, h.dut.mib().get(Mib.TcpExtSyncookiesRecv));
            assertEquals(1, h.drops(DropReason.TCP_LISTEN_OVERFLOW));
        }
    }

    @Test
    void theMssTableAndTheTimestampEncodingAreLinuxs() {
        assertEquals(0, SynCookies.mssIndex(100));
        assertEquals(0, SynCookies.mssIndex(1299));
        assertEquals(1, SynCookies.mssIndex(1300));
        assertEquals(2, SynCookies.mssIndex(1452));
        assertEquals(3, SynCookies.mssIndex(9000));
        // Options replace the low 6 bits; a value that would land ahead of the clock goes back one step of 64.
        assertEquals(64 * 100 + 0x1f, SynCookies.initTimestamp(64 * 100 + 40, false, 0, true));
        assertEquals(64 * 99 + 0x1f, SynCookies.initTimestamp(64 * 100 + 3, false, 0, true));
        assertEquals(64 * 100 + 2, SynCookies.initTimestamp(64 * 100 + 2, true, 2, false));
        assertEquals(SynCookies.OPT_TS | SynCookies.OPT_SACK | SynCookies.OPT_WSCALE | 7,
                SynCookies.decodeTimestamp(true, 0x17, true, true, true));
        assertEquals(SynCookies.OPT_TS, SynCookies.decodeTimestamp(true, 0x0f, true, true, true));
        assertEquals(SynCookies.REJECT, SynCookies.decodeTimestamp(true, 0x17, true, false, true), "SACK turned off since");
        assertEquals(SynCookies.REJECT, SynCookies.decodeTimestamp(true, 0x07, true, true, false));
        assertEquals(SynCookies.REJECT, SynCookies.decodeTimestamp(true, 0x0f, false, true, true));
        assertEquals(0, SynCookies.decodeTimestamp(false, 0, true, true, true));
    }

    @Test
    void sipHashMatchesThePublishedVectorAndItsWordForms() {
        long k0 = 0x0706050403020100L;
        long k1 = 0x0f0e0d0c0b0a0908L;
        byte[] msg = new byte[15];
        for (int i = 0; i < msg.length; i++) {
            msg[i] = (byte) i;
        }
        // SipHash paper, appendix A: key 00..0f, message 00..0e.
        assertEquals(0xa129ca6149be45e5L, SipHash.hash(k0, k1, msg));
        SplittableRandom r = new SplittableRandom(5);
        for (int n = 0; n < 200; n++) {
            int a = r.nextInt();
            int b = r.nextInt();
            int c = r.nextInt();
            int d = r.nextInt();
            byte[] m = new byte[16];
            int[] w = {a, b, c, d};
            for (int i = 0; i < 16; i++) {
                m[i] = (byte) (w[i / 4] >>> (8 * (i % 4)));
            }
            assertEquals(SipHash.hash(k0, k1, m), SipHash.hash4(k0, k1, a, b, c, d));
            assertEquals(SipHash.hash(k0, k1, java.util.Arrays.copyOf(m, 8)), SipHash.hash2(k0, k1, a, b));
        }
    }
}
