package dev.usnet.core.conntrack;

import static dev.usnet.core.conntrack.CtRouter.A1;
import static dev.usnet.core.conntrack.CtRouter.A2;
import static dev.usnet.core.conntrack.CtRouter.NO_OPTS;
import static dev.usnet.core.conntrack.CtRouter.synOpts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.TcpSegment;
import org.junit.jupiter.api.Test;

/** TCP through a tracking router: the handshake, the close, window checks, pick-up and resets. */
class TcpConntrackTest {
    static final int SYN = TcpSegment.SYN;
    static final int ACK = TcpSegment.ACK_FLAG;
    static final int FIN = TcpSegment.FIN;
    static final int RST = TcpSegment.RST;

    /** SYN 1000 → SYN/ACK 5000 → ACK, window scale 7 both ways. */
    static ConntrackEntry handshake(CtRouter t) {
        t.fromH1(t.tcp12(40000, 80, 1000, 0, SYN, 64240, synOpts(7), 0));
        t.fromH2(t.tcp21(80, 40000, 5000, 1001, SYN | ACK, 65160, synOpts(7), 0));
        t.fromH1(t.tcp12(40000, 80, 1001, 5001, ACK, 502, NO_OPTS, 0));
        return t.last().ct();
    }

    @Test
    void theHandshakeGoesNewThenReplyThenEstablishedAndTheEntryIsAssured() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.tcp12(40000, 80, 1000, 0, SYN, 64240, synOpts(7), 0));
            CtRouter.Seen syn = t.last();
            assertEquals(IpConntrackInfo.NEW, syn.ctinfo());
            assertEquals(TcpConntrack.SYN_SENT, syn.tcpState());
            ConntrackEntry ct = syn.ct();
            assertTrue(ct.confirmed(), "confirmed at postrouting once the SYN left");
            assertEquals(1, t.table().count());
            assertEquals("tcp      6 120 SYN_SENT src=198.18.1.2 dst=198.18.2.2 sport=40000 dport=80 [UNREPLIED] "
                    + "src=198.18.2.2 dst=198.18.1.2 sport=80 dport=40000 mark=0 use=1", ct.describe(t.now()));

            t.fromH2(t.tcp21(80, 40000, 5000, 1001, SYN | ACK, 65160, synOpts(7), 0));
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());
            assertSame(ct, t.last().ct());
            assertEquals(TcpConntrack.SYN_RECV, ct.tcpState());
            assertEquals(60, ct.secondsLeft(t.now()));
            assertTrue(ct.hasStatus(IpConntrackStatus.SEEN_REPLY));
            assertFalse(ct.hasStatus(IpConntrackStatus.ASSURED));

            t.fromH1(t.tcp12(40000, 80, 1001, 5001, ACK, 502, NO_OPTS, 0));
            assertEquals(IpConntrackInfo.ESTABLISHED, t.last().ctinfo());
            assertEquals(TcpConntrack.ESTABLISHED, ct.tcpState());
            assertTrue(ct.hasStatus(IpConntrackStatus.ASSURED));
            assertEquals("tcp      6 432000 ESTABLISHED src=198.18.1.2 dst=198.18.2.2 sport=40000 dport=80 "
                    + "src=198.18.2.2 dst=198.18.1.2 sport=80 dport=40000 [ASSURED] mark=0 use=1", ct.describe(t.now()));
            t.net.run(1_500_000_000L);
            assertEquals(431998, ct.secondsLeft(t.now()), "seconds left, rounded down");
            assertEquals(3, t.w2.received.size() + t.w1.received.size(), "every segment was forwarded");
            assertEquals(0, t.core.stats().invalid());
        }
    }

    @Test
    void dataUnacknowledgedShortensTheTimeoutAndTheCloseWalksTheStates() {
        try (CtRouter t = new CtRouter()) {
            ConntrackEntry ct = handshake(t);
            t.fromH1(t.tcp12(40000, 80, 1001, 5001, ACK, 502, NO_OPTS, 100));
            assertEquals(300, ct.secondsLeft(t.now()), "unacknowledged data: tcp_timeout_unacknowledged");
            t.fromH2(t.tcp21(80, 40000, 5001, 1101, ACK, 509, NO_OPTS, 0));
            assertEquals(432000, ct.secondsLeft(t.now()));
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());

            t.fromH1(t.tcp12(40000, 80, 1101, 5001, FIN | ACK, 502, NO_OPTS, 0));
            assertEquals(TcpConntrack.FIN_WAIT, ct.tcpState());
            assertEquals(120, ct.secondsLeft(t.now()));
            t.fromH2(t.tcp21(80, 40000, 5001, 1102, ACK, 509, NO_OPTS, 0));
            assertEquals(TcpConntrack.CLOSE_WAIT, ct.tcpState());
            assertEquals(60, ct.secondsLeft(t.now()));
            t.fromH2(t.tcp21(80, 40000, 5001, 1102, FIN | ACK, 509, NO_OPTS, 0));
            assertEquals(TcpConntrack.LAST_ACK, ct.tcpState());
            assertEquals(30, ct.secondsLeft(t.now()));
            t.fromH1(t.tcp12(40000, 80, 1102, 5002, ACK, 502, NO_OPTS, 0));
            assertEquals(TcpConntrack.TIME_WAIT, ct.tcpState());
            assertEquals(120, ct.secondsLeft(t.now()));
            assertTrue(ct.describe(t.now()).startsWith("tcp      6 120 TIME_WAIT src="), ct.describe(t.now()));

            // A new SYN on the same ports after the close: the old entry goes, a new one starts.
            t.fromH1(t.tcp12(40000, 80, 90000, 0, SYN, 64240, synOpts(7), 0));
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo());
            assertNotNull(t.last().ct());
            assertTrue(t.last().ct() != ct, "a fresh entry");
            assertEquals(1, t.table().count());
            assertEquals(TcpConntrack.SYN_SENT, t.last().tcpState());
        }
    }

    @Test
    void aSynReusingTheTuplesOfAnOpenEntryIsIgnoredUntilItsSynAckResyncs() {
        try (CtRouter t = new CtRouter()) {
            ConntrackEntry ct = handshake(t);
            long left = ct.secondsLeft(t.now());
            // The client restarted and reuses its port with a new initial sequence far from the old one.
            t.fromH1(t.tcp12(40000, 80, 700_000, 0, SYN, 29200, synOpts(2), 0));
            assertSame(ct, t.last().ct(), "let through on the old entry");
            assertEquals(TcpConntrack.ESTABLISHED, ct.tcpState(), "ignored: no state change");
            assertEquals(left, ct.secondsLeft(t.now()), "nor a new timeout");
            t.fromH2(t.tcp21(80, 40000, 9_000_000, 700_001, SYN | ACK, 28960, synOpts(2), 0));
            assertEquals(TcpConntrack.SYN_RECV, ct.tcpState(), "the answer proves the new connection");
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());
            t.fromH1(t.tcp12(40000, 80, 700_001, 9_000_001, ACK, 229, NO_OPTS, 0));
            assertEquals(TcpConntrack.ESTABLISHED, ct.tcpState());
            t.fromH1(t.tcp12(40000, 80, 700_001, 9_000_001, ACK, 229, NO_OPTS, 500));
            assertSame(ct, t.last().ct(), "data of the new connection is in its window");
            assertEquals(0, t.core.stats().invalid());
        }
    }

    @Test
    void aSegmentBeyondTheWindowIsInvalidUnlessBeLiberal() {
        try (CtRouter t = new CtRouter()) {
            ConntrackEntry ct = handshake(t);
            int far = 1001 + 10_000_000;
            t.fromH1(t.tcp12(40000, 80, far, 5001, ACK, 502, NO_OPTS, 100));
            assertNull(t.last().ct(), "ct state invalid: no entry");
            assertEquals(1, t.core.stats().invalid());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.TCP_OUT_OF_WINDOW));
            assertEquals(3, t.w2.received.size(), "an invalid packet is not dropped by tracking itself");
            // Acknowledging data never sent is out of window too.
            t.fromH2(t.tcp21(80, 40000, 5001, 1001 + 500_000, ACK, 509, NO_OPTS, 0));
            assertNull(t.last().ct());
            assertEquals(2, t.core.stats().byReason(ConntrackInvalid.TCP_OUT_OF_WINDOW));

            t.r.knobs().set("net.netfilter.nf_conntrack_tcp_be_liberal", "1");
            t.fromH1(t.tcp12(40000, 80, far, 5001, ACK, 502, NO_OPTS, 100));
            assertSame(ct, t.last().ct());
            assertEquals(IpConntrackInfo.ESTABLISHED, t.last().ctinfo());
            assertEquals(2, t.core.stats().invalid());
        }
    }

    @Test
    void aMidStreamSegmentIsPickedUpOnlyWithTcpLoose() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.tcp12(40001, 80, 777, 888, ACK, 500, NO_OPTS, 10));
            ConntrackEntry ct = t.last().ct();
            assertNotNull(ct);
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo());
            assertEquals(TcpConntrack.ESTABLISHED, ct.tcpState());
            assertEquals(300, ct.secondsLeft(t.now()), "not the established timeout before an answer");
            assertFalse(ct.hasStatus(IpConntrackStatus.ASSURED));
            t.fromH2(t.tcp21(80, 40001, 888, 787, ACK, 500, NO_OPTS, 0));
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());
            assertFalse(ct.hasStatus(IpConntrackStatus.ASSURED), "the answer itself does not assure");
            t.fromH1(t.tcp12(40001, 80, 787, 888, ACK, 500, NO_OPTS, 0));
            assertEquals(IpConntrackInfo.ESTABLISHED, t.last().ctinfo());
            assertTrue(ct.hasStatus(IpConntrackStatus.ASSURED), "seen both ways, then acknowledged: assured");
            assertEquals(432000, ct.secondsLeft(t.now()));

            t.r.knobs().set("net.netfilter.nf_conntrack_tcp_loose", "0");
            t.fromH1(t.tcp12(40002, 80, 777, 888, ACK, 500, NO_OPTS, 10));
            assertNull(t.last().ct());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.TCP_NOT_SYN));
            // A SYN/ACK never starts a connection.
            t.fromH1(t.tcp12(40003, 80, 777, 888, SYN | ACK, 500, NO_OPTS, 0));
            assertNull(t.last().ct());
            assertEquals(2, t.table().count() + 1, "only the picked-up connection is in the table");
        }
    }

    @Test
    void aResetAnsweringTheSynRemovesTheEntryAndBadFlagsOrChecksumsAreInvalid() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.tcp12(40000, 81, 1000, 0, SYN, 64240, synOpts(7), 0));
            assertEquals(1, t.table().count());
            t.fromH2(t.tcp21(81, 40000, 0, 1001, RST | ACK, 0, NO_OPTS, 0));
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());
            assertEquals(0, t.table().count(), "connection refused: nothing kept");

            t.fromH1(t.tcp12(40000, 82, 1000, 0, SYN | FIN, 64240, NO_OPTS, 0));
            assertNull(t.last().ct());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.TCP_BAD_FLAGS));

            byte[] f = t.tcp12(40000, 83, 1000, 0, SYN, 64240, NO_OPTS, 0);
            f[14 + 20 + 16] ^= 0x55;
            t.fromH1(f);
            assertNull(t.last().ct());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.BAD_CHECKSUM));
            t.r.knobs().set("net.netfilter.nf_conntrack_checksum", "0");
            t.fromH1(f);
            assertNotNull(t.last().ct(), "not verified with nf_conntrack_checksum 0");
            assertEquals(A1, t.last().ct().tuple(ConntrackEntry.ORIGINAL).src());
            assertEquals(A2, t.last().ct().tuple(ConntrackEntry.ORIGINAL).dst());
        }
    }

    @Test
    void aResetBelowThePeersAcknowledgementIsInvalidUnlessTcpIgnoreInvalidRst() {
        try (CtRouter t = new CtRouter()) {
            ConntrackEntry ct = handshake(t);
            // H2 acknowledged up to 1001: a RST from H1 at 900 is one Linux marks invalid.
            t.fromH1(t.tcp12(40000, 80, 900, 0, RST, 0, NO_OPTS, 0));
            assertNull(t.last().ct());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.TCP_BAD_RST));
            assertEquals(TcpConntrack.ESTABLISHED, ct.tcpState());
            t.r.knobs().set("net.netfilter.nf_conntrack_tcp_ignore_invalid_rst", "1");
            t.fromH1(t.tcp12(40000, 80, 900, 0, RST, 0, NO_OPTS, 0));
            assertSame(ct, t.last().ct());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.TCP_BAD_RST));
            assertEquals(TcpConntrack.ESTABLISHED, ct.tcpState(), "not exact: kept for a challenge ACK");
        }
    }
}
