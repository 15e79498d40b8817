package dev.usnet.tcp;

import static dev.usnet.tcp.SegmentHarness.DUT_ADDR;
import static dev.usnet.tcp.SegmentHarness.DUT_MAC;
import static dev.usnet.tcp.SegmentHarness.DUT_PORT;
import static dev.usnet.tcp.SegmentHarness.MSS;
import static dev.usnet.tcp.SegmentHarness.PEER_ADDR;
import static dev.usnet.tcp.SegmentHarness.PEER_PORT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * ICMP errors about the socket's own segments, built by hand and injected as a router on the path would send
 * them (tcp_v4_err): a connect fails at once, an established connection only remembers the error, errors quoting
 * sequence numbers it never sent are ignored and counted, and fragmentation needed re-cuts what is in flight.
 */
class TcpIcmpErrTest {
    static final int ROUTER = Ipv4Addr.parse("198.18.0.254");

    /** The frame of the last TCP segment the socket sent (what an ICMP error quotes). */
    static byte[] lastTcpFrame(SegmentHarness h) {
        List<TestNet.Seen> seen = h.wire.received;
        for (int i = seen.size() - 1; i >= 0; i--) {
            byte[] f = seen.get(i).data();
            if (f.length > 34 && (f[EthernetFrame.HEADER_LEN + Ipv4Packet.PROTOCOL] & 0xff) == Ipv4Packet.PROTO_TCP) {
                return f;
            }
        }
        throw new AssertionError("the socket sent no TCP segment");
    }

    /** The frame of the first TCP segment the socket sent with relative sequence {@code relSeq} and data. */
    static byte[] dataFrame(SegmentHarness h, long relSeq) {
        for (TestNet.Seen s : h.wire.received) {
            byte[] f = s.data();
            ByteBuf b = Unpooled.wrappedBuffer(f);
            int ip = EthernetFrame.HEADER_LEN;
            if (b.getUnsignedByte(ip + Ipv4Packet.PROTOCOL) != Ipv4Packet.PROTO_TCP) {
                continue;
            }
            int t = ip + (b.getUnsignedByte(ip) & 0xf) * 4;
            if (b.getUnsignedInt(t + 4) == Seq.add(h.dutIss, relSeq)) {
                return f;
            }
        }
        throw new AssertionError("no segment at relative sequence " + relSeq);
    }

    /**
     * An ICMP error from {@link #ROUTER} to the socket's namespace quoting the IP header and the first
     * {@code quoteBytes} bytes after it of {@code offending} (a frame the socket sent).
     */
    static byte[] icmpError(int type, int code, int info, byte[] offending, int quoteBytes) {
        int ihl = (offending[EthernetFrame.HEADER_LEN] & 0xf) * 4;
        int quote = Math.min(ihl + quoteBytes, offending.length - EthernetFrame.HEADER_LEN);
        int icmpLen = IcmpPacket.HEADER_LEN + quote;
        int ipLen = Ipv4Packet.MIN_HEADER_LEN + icmpLen;
        ByteBuf b = Unpooled.buffer(EthernetFrame.HEADER_LEN + ipLen);
        b.writeMedium((int) (DUT_MAC >>> 24)).writeMedium((int) DUT_MAC);
        b.writeBytes(offending, 0, 6); // the socket's frame went to the next hop's MAC: the error comes from it
        b.writeShort(EthernetFrame.ETH_P_IP);
        int ip = b.writerIndex();
        b.writeByte(0x45).writeByte(0xc0).writeShort(ipLen).writeShort(0).writeShort(0)
                .writeByte(64).writeByte(Ipv4Packet.PROTO_ICMP).writeShort(0).writeInt(ROUTER).writeInt(DUT_ADDR);
        b.setShort(ip + Ipv4Packet.CHECKSUM, Checksum.compute(b, ip, Ipv4Packet.MIN_HEADER_LEN));
        int t = b.writerIndex();
        b.writeByte(type).writeByte(code).writeShort(0).writeInt(info);
        b.writeBytes(offending, EthernetFrame.HEADER_LEN, quote);
        b.setShort(t + IcmpPacket.CHECKSUM, Checksum.compute(b, t, icmpLen));
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }

    static void inject(SegmentHarness h, byte[] frame) {
        h.injectFrame(frame);
        h.net.settle();
    }

    /** Rewrites the quoted TCP sequence number of a frame the socket sent to relative {@code relSeq}. */
    static byte[] withSeq(SegmentHarness h, byte[] frame, long relSeq) {
        byte[] f = frame.clone();
        int t = EthernetFrame.HEADER_LEN + (f[EthernetFrame.HEADER_LEN] & 0xf) * 4;
        Unpooled.wrappedBuffer(f).setInt(t + 4, (int) Seq.add(h.dutIss, relSeq));
        return f;
    }

    @ParameterizedTest(name = "type {0} code {1} -> {2}")
    @CsvSource({
        "3, 0, ENETUNREACH", "3, 1, EHOSTUNREACH", "3, 2, ENOPROTOOPT", "3, 3, ECONNREFUSED", "3, 6, ENETUNREACH",
        "3, 7, EHOSTDOWN", "3, 9, ENETUNREACH", "3, 10, EHOSTUNREACH", "3, 13, EHOSTUNREACH", "11, 0, EHOSTUNREACH",
        "12, 0, EPROTO",
    })
    void anErrorAboutTheSynFailsTheConnectAtOnce(int type, int code, TcpError expected) {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, h.callbacks);
            h.net.settle();
            assertTrue(h.sentOne().has(dev.usnet.core.wire.TcpSegment.SYN));
            h.advance(3_000_000L);
            inject(h, icmpError(type, code, 0, lastTcpFrame(h), 8));
            assertEquals(expected, h.closedWith(), "the connect fails when the error arrives, not after tcp_syn_retries");
            assertEquals(expected, s.error());
            assertEquals(TcpState.CLOSED, s.state());
            assertEquals(1, h.dut.mib().get(Mib.TcpAttemptFails));
            assertEquals(0, h.dut.mib().get(Mib.TcpExtOutOfWindowIcmps));
            assertEquals(-1, s.write(Unpooled.wrappedBuffer(new byte[10]), 0, 10), "write after a failed connect");
            assertEquals(-1, s.read(Unpooled.buffer(10), 10), "read after a failed connect");
            h.advance(10_000_000_000L);
            h.sentNothing();
            assertTrue(h.tcp.sockets().isEmpty());
        }
    }

    @Test
    void anErrorQuotingASequenceNeverSentIsCountedAndIgnored() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, h.callbacks);
            h.net.settle();
            h.sentOne();
            byte[] syn = lastTcpFrame(h);
            // The SYN is iss..iss+1: iss+2 and iss-1 were never sent.
            inject(h, icmpError(3, 1, 0, withSeq(h, syn, 2), 8));
            inject(h, icmpError(3, 1, 0, withSeq(h, syn, -1), 8));
            assertEquals(2, h.dut.mib().get(Mib.TcpExtOutOfWindowIcmps));
            assertEquals(TcpState.SYN_SENT, s.state());
            assertNull(h.closedWith());
            assertEquals(TcpError.NONE, s.takeSoError());
            // The SYN's own sequence (iss) is in the window.
            inject(h, icmpError(3, 1, 0, syn, 8));
            assertEquals(TcpError.EHOSTUNREACH, h.closedWith());
        }
    }

    @Test
    void anEstablishedConnectionRemembersTheErrorAndReportsItWhenItTimesOut() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_retries2", "3")) {
            TcpSock s = h.flight(2);
            byte[] first = dataFrame(h, SegmentHarness.start(1));
            // Beyond snd_nxt: ignored.
            inject(h, icmpError(3, 1, 0, withSeq(h, first, SegmentHarness.end(2) + 1), 8));
            assertEquals(1, h.dut.mib().get(Mib.TcpExtOutOfWindowIcmps));
            assertEquals(TcpError.NONE, s.takeSoError());
            inject(h, icmpError(3, 1, 0, first, 8));
            assertEquals(TcpState.ESTABLISHED, s.state(), "a soft error does not end an established connection");
            assertNull(h.closedWith());
            assertEquals(TcpError.EHOSTUNREACH, s.takeSoError(), "SO_ERROR reads the soft error");
            assertEquals(TcpError.NONE, s.takeSoError(), "and clears it");
            inject(h, icmpError(3, 0, 0, first, 8));
            // Nothing is acknowledged: after tcp_retries2 timeouts the connection ends with the last error heard.
            h.advance(120_000_000_000L);
            assertEquals(TcpError.ENETUNREACH, h.closedWith());
            assertEquals(TcpError.ENETUNREACH, s.error());
        }
    }

    @Test
    void hostUnreachableForTheHeadOfATimeoutSeriesUndoesOneBackoffStep() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(1);
            // Run to the second timeout (a tail loss probe may come first): the RTO is doubled twice.
            for (int i = 0; i < 400 && s.info().backoff() < 2; i++) {
                h.advance(5_000_000L);
            }
            assertEquals(2, s.info().backoff());
            List<SegmentHarness.Sent> resent = h.sent();
            long rto = s.info().rtoUs() * 1000 / 4;
            long lastResend = resent.get(resent.size() - 1).at();
            h.advance(50_000_000L);
            inject(h, icmpError(3, 1, 0, dataFrame(h, 1), 8));
            assertEquals(1, s.info().backoff(), "one doubling taken back");
            assertEquals(rto * 2, s.info().rtoUs() * 1000);
            h.advance(2_000_000_000L);
            SegmentHarness.Sent next = h.sent().get(0);
            assertEquals(lastResend + 2 * rto, next.at(), "due one doubled RTO after the last resend, not two");
        }
    }

    @Test
    void aTimeoutWithoutIcmpErrorsIsStillEtimedout() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_retries2", "3")) {
            h.flight(2);
            h.advance(120_000_000_000L);
            assertEquals(TcpError.ETIMEDOUT, h.closedWith());
        }
    }

    @Test
    void withIpRecvErrTheErrorIsPendingAtOnceAndTheConnectionStays() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(1);
            s.setRecvErr(true);
            inject(h, icmpError(3, 3, 0, dataFrame(h, 1), 8));
            assertEquals(TcpState.ESTABLISHED, s.state());
            assertEquals(TcpError.ECONNREFUSED, s.takeSoError());
            assertEquals(TcpError.NONE, s.takeSoError(), "a pending error is read once and is not also soft");
        }
    }

    @Test
    void aListenersHalfOpenConnectionIsDroppedOnHostUnreachableAndKeptOnPortUnreachable() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.listenAndSendSyn(SegmentHarness.PeerSyn.linux());
            h.sentOne();
            byte[] synAck = lastTcpFrame(h);
            inject(h, icmpError(3, 3, 0, synAck, 8));
            assertEquals(1, h.tcp.sockets().size(), "port unreachable leaves a SYN-RECV child alone");
            inject(h, icmpError(3, 1, 0, withSeq(h, synAck, 1), 8));
            assertEquals(1, h.dut.mib().get(Mib.TcpExtOutOfWindowIcmps), "a SYN-RECV child's error must quote its ISS");
            assertEquals(1, h.tcp.sockets().size());
            inject(h, icmpError(3, 1, 0, synAck, 8));
            assertTrue(h.tcp.sockets().isEmpty(), "host unreachable drops it");
            assertEquals(1, h.dut.mib().get(Mib.TcpExtListenDrops));
            assertNull(h.accepted());
            h.advance(5_000_000_000L);
            h.sentNothing();
        }
    }

    @Test
    void anErrorForNoConnectionIsAnIcmpInError() {
        try (SegmentHarness h = new SegmentHarness()) {
            h.flight(1);
            byte[] f = dataFrame(h, 1).clone();
            // Another source port: nobody's segment.
            int t = EthernetFrame.HEADER_LEN + 20;
            Unpooled.wrappedBuffer(f).setShort(t, DUT_PORT + 1);
            long before = h.dut.mib().get(Mib.IcmpInErrors);
            inject(h, icmpError(3, 1, 0, f, 8));
            assertEquals(before + 1, h.dut.mib().get(Mib.IcmpInErrors));
        }
    }

    @Test
    void aQuoteShorterThanEightTransportBytesReachesNobody() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(1);
            inject(h, icmpError(3, 1, 0, dataFrame(h, 1), 4));
            assertEquals(1, h.dut.mib().get(Mib.IcmpInErrors));
            assertEquals(TcpError.NONE, s.takeSoError());
        }
    }

    /** The payload sizes of what the socket sent since the last look, and that they tile [from, to). */
    static List<SegmentHarness.Sent> assertTiles(List<SegmentHarness.Sent> sent, long from, long to) {
        long at = from;
        for (SegmentHarness.Sent s : sent) {
            assertEquals(at, s.seq(), sent::toString);
            at += s.payload();
        }
        assertEquals(to, at, sent::toString);
        return sent;
    }

    @Test
    void fragmentationNeededShrinksTheMssAndResendsWhatNoLongerFitsAtOnce() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(4);
            assertEquals(MSS, s.info().sndMss());
            long retransBefore = h.dut.mib().get(Mib.TcpRetransSegs);
            inject(h, icmpError(3, 4, 1000, dataFrame(h, 1), 8));
            // MTU 1000 less 20 (IP), 20 (TCP) and 12 (timestamps).
            int mss = 1000 - 52;
            assertEquals(mss, s.info().sndMss());
            assertEquals(1000, s.info().pmtu());
            List<SegmentHarness.Sent> re = assertTiles(h.sent(), 1, SegmentHarness.end(4));
            assertEquals(8, re.size(), re::toString);
            for (int i = 0; i < re.size(); i++) {
                assertEquals(i % 2 == 0 ? mss : MSS - mss, re.get(i).payload(), re::toString);
            }
            assertEquals(8, h.dut.mib().get(Mib.TcpRetransSegs) - retransBefore);
            assertEquals(TcpError.NONE, s.takeSoError(), "a usable path MTU is no error");
            for (byte[] f : h.wire.frames().subList(h.wire.frames().size() - 8, h.wire.frames().size())) {
                assertTrue((f[EthernetFrame.HEADER_LEN + Ipv4Packet.FRAG] & 0x40) != 0, "DF stays on");
                assertTrue(f.length - EthernetFrame.HEADER_LEN <= 1000);
            }

            // A report of a larger MTU never raises it: nothing is resent, the MSS stays.
            inject(h, icmpError(3, 4, 1400, dataFrame(h, 1), 8));
            h.sentNothing();
            assertEquals(mss, s.info().sndMss());

            // Everything acknowledged: new data goes out at the new MSS.
            h.seg().seq(1).ack(SegmentHarness.end(4)).win(65535).inject();
            h.write(s, 2000);
            List<SegmentHarness.Sent> fresh = assertTiles(h.sent(), SegmentHarness.end(4), SegmentHarness.end(4) + 2000);
            assertEquals(List.of(mss, mss, 2000 - 2 * mss), fresh.stream().map(SegmentHarness.Sent::payload).toList());
        }
    }

    @Test
    void aPathMtuBelowTheFloorIsClampedTo552AndSentWithoutDf() {
        try (SegmentHarness h = new SegmentHarness()) {
            TcpSock s = h.flight(1);
            inject(h, icmpError(3, 4, 296, dataFrame(h, 1), 8));
            assertEquals(552, s.info().pmtu());
            int mss = 552 - 52;
            assertEquals(mss, s.info().sndMss());
            List<SegmentHarness.Sent> re = assertTiles(h.sent(), 1, SegmentHarness.end(1));
            assertEquals(List.of(mss, mss, MSS - 2 * mss), re.stream().map(SegmentHarness.Sent::payload).toList());
            List<byte[]> frames = h.wire.frames();
            byte[] last = frames.get(frames.size() - 1);
            assertEquals(0, last[EthernetFrame.HEADER_LEN + Ipv4Packet.FRAG] & 0x40,
                    "a path MTU locked at the floor lets routers fragment (DF off)");
            assertEquals(TcpError.EMSGSIZE, s.takeSoError(), "the unbelievable report is remembered");
        }
    }
}
