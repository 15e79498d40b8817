package dev.usnet.core.conntrack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.wire.IcmpPacket;
import org.junit.jupiter.api.Test;

/** UDP's two timeouts and expiry on the virtual clock; ICMP queries, and errors related to what they quote. */
class UdpIcmpConntrackTest {
    static final long S = 1_000_000_000L;

    @Test
    void udpIsUnrepliedThenRepliedThenAStreamAfterTwoSeconds() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.udp12(5000, 5001, 10));
            ConntrackEntry ct = t.last().ct();
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo());
            assertEquals("udp      17 30 src=198.18.1.2 dst=198.18.2.2 sport=5000 dport=5001 [UNREPLIED] "
                    + "src=198.18.2.2 dst=198.18.1.2 sport=5001 dport=5000 mark=0 use=1", ct.describe(t.now()));
            t.net.run(S / 2);
            t.fromH2(t.udp21(5001, 5000, 10));
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());
            assertSame(ct, t.last().ct());
            assertEquals(30, ct.secondsLeft(t.now()), "answered at once: still the short timeout");
            assertFalse(ct.hasStatus(IpConntrackStatus.ASSURED));
            assertEquals("udp      17 30 src=198.18.1.2 dst=198.18.2.2 sport=5000 dport=5001 "
                    + "src=198.18.2.2 dst=198.18.1.2 sport=5001 dport=5000 mark=0 use=1", ct.describe(t.now()));
            t.net.run(2 * S);
            t.fromH1(t.udp12(5000, 5001, 10));
            assertEquals(IpConntrackInfo.ESTABLISHED, t.last().ctinfo());
            assertEquals(120, ct.secondsLeft(t.now()));
            assertTrue(ct.hasStatus(IpConntrackStatus.ASSURED), "still going after 2 s: a stream");

            // Expiry by the collector alone, no lookup: gone within a second of the deadline.
            t.net.run(119 * S);
            assertEquals(1, t.table().count());
            t.net.run(S + S / 10);
            assertEquals(0, t.table().count());
            assertTrue(t.table().entries().isEmpty());
        }
    }

    @Test
    void anUnansweredFlowExpiresAfterUdpTimeoutAndTheNextPacketIsNewAgain() {
        try (CtRouter t = new CtRouter()) {
            t.r.knobs().set("net.netfilter.nf_conntrack_udp_timeout", "10");
            t.fromH1(t.udp12(6000, 53, 20));
            ConntrackEntry first = t.last().ct();
            assertEquals(10, first.secondsLeft(t.now()));
            t.net.run(9 * S);
            t.fromH1(t.udp12(6000, 53, 20));
            assertSame(first, t.last().ct(), "refreshed by the second datagram");
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo(), "still unanswered: NEW");
            t.net.run(10 * S + 1);
            t.fromH1(t.udp12(6000, 53, 20));
            assertNotNull(t.last().ct());
            assertTrue(t.last().ct() != first, "the old entry expired");
            assertEquals(1, t.table().count());
        }
    }

    @Test
    void withAccountingTheListingCountsPacketsAndBytesPerDirection() {
        try (CtRouter t = new CtRouter()) {
            t.r.knobs().set("net.netfilter.nf_conntrack_acct", "1");
            t.fromH1(t.udp12(5000, 5001, 10));
            t.fromH1(t.udp12(5000, 5001, 20));
            t.fromH2(t.udp21(5001, 5000, 100));
            ConntrackEntry ct = t.last().ct();
            assertEquals("udp      17 30 src=198.18.1.2 dst=198.18.2.2 sport=5000 dport=5001 packets=2 bytes=86 "
                    + "src=198.18.2.2 dst=198.18.1.2 sport=5001 dport=5000 packets=1 bytes=128 mark=0 use=1",
                    ct.describe(t.now()));
        }
    }

    @Test
    void anEchoAndItsReplyAreOneConnectionAndAStrayReplyIsInvalid() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.echo12(IcmpPacket.ECHO, 0x1234, 1));
            ConntrackEntry ct = t.last().ct();
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo());
            t.fromH2(t.echo21(IcmpPacket.ECHO_REPLY, 0x1234, 1));
            assertSame(ct, t.last().ct());
            assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, t.last().ctinfo());
            assertEquals("icmp     1 30 src=198.18.1.2 dst=198.18.2.2 type=8 code=0 id=4660 "
                    + "src=198.18.2.2 dst=198.18.1.2 type=0 code=0 id=4660 mark=0 use=1", ct.describe(t.now()));
            t.fromH1(t.echo12(IcmpPacket.ECHO, 0x1234, 2));
            assertEquals(IpConntrackInfo.ESTABLISHED, t.last().ctinfo());

            t.fromH2(t.echo21(IcmpPacket.ECHO_REPLY, 0x999, 1));
            assertNull(t.last().ct());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.ICMP_NO_NEW));
            assertEquals(1, t.table().count());
        }
    }

    @Test
    void anIcmpErrorQuotingATrackedDatagramIsRelatedAndAnUnmatchedOneCountsAsError() {
        try (CtRouter t = new CtRouter()) {
            byte[] query = t.udp12(5353, 53, 30);
            t.fromH1(query);
            ConntrackEntry ct = t.last().ct();
            t.fromH2(t.error21(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, query));
            assertSame(ct, t.last().ct());
            assertEquals(IpConntrackInfo.RELATED_REPLY, t.last().ctinfo(), "travels the answer's way");
            assertFalse(ct.hasStatus(IpConntrackStatus.SEEN_REPLY), "an error is no answer");
            assertEquals(1, t.table().count(), "the error starts no connection of its own");

            // An error about the answer travels the original way: RELATED.
            byte[] answer = t.udp21(53, 5353, 30);
            t.fromH2(answer);
            byte[] quote = java.util.Arrays.copyOfRange(answer, 14, 14 + 28);
            t.fromH1(t.ip(CtRouter.H1, CtRouter.R1, CtRouter.A1, CtRouter.A2, 1,
                    CtRouter.icmp(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0, quote), 0));
            assertSame(ct, t.last().ct());
            assertEquals(IpConntrackInfo.RELATED, t.last().ctinfo());

            t.fromH2(t.error21(IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, t.udp12(5354, 53, 30)));
            assertNull(t.last().ct());
            assertEquals(1, t.core.stats().error());
            assertEquals(1, t.core.stats().byReason(ConntrackInvalid.ICMP_ERROR_UNMATCHED));
        }
    }
}
