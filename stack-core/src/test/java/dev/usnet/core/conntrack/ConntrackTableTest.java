package dev.usnet.core.conntrack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The table: full-table early drop and drop, fragments, the NAT helpers, listing and flushing. */
class ConntrackTableTest {
    @Test
    void aFullTableEvictsUnassuredEntriesNearTheNewTuple() {
        try (CtRouter t = new CtRouter()) {
            t.r.knobs().set("net.netfilter.nf_conntrack_max", "2");
            t.r.knobs().set("net.netfilter.nf_conntrack_buckets", "1");
            t.fromH1(t.udp12(7001, 53, 1));
            t.fromH1(t.udp12(7002, 53, 1));
            assertEquals(2, t.table().count());
            t.fromH1(t.udp12(7003, 53, 1));
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo());
            assertEquals(7003, t.last().ct().tuple(ConntrackEntry.ORIGINAL).srcPort());
            assertEquals(2, t.core.stats().earlyDrop(), "every unassured entry of the bucket goes");
            assertEquals(1, t.table().count());
            assertEquals(3, t.w2.received.size());
        }
    }

    @Test
    void aFullTableOfAssuredEntriesDropsTheNewPacket() {
        try (CtRouter t = new CtRouter()) {
            t.r.knobs().set("net.netfilter.nf_conntrack_max", "2");
            t.r.knobs().set("net.netfilter.nf_conntrack_buckets", "1");
            for (int port = 40000; port < 40002; port++) {
                t.fromH1(t.tcp12(port, 80, 1000, 0, TcpSegment.SYN, 64240, CtRouter.NO_OPTS, 0));
                t.fromH2(t.tcp21(80, port, 5000, 1001, TcpSegment.SYN | TcpSegment.ACK_FLAG, 65160, CtRouter.NO_OPTS, 0));
                t.fromH1(t.tcp12(port, 80, 1001, 5001, TcpSegment.ACK_FLAG, 502, CtRouter.NO_OPTS, 0));
                assertTrue(t.last().ct().hasStatus(IpConntrackStatus.ASSURED));
            }
            int before = t.w2.received.size();
            int seenBefore = t.seen.size();
            t.fromH1(t.tcp12(40002, 80, 1000, 0, TcpSegment.SYN, 64240, CtRouter.NO_OPTS, 0));
            assertEquals(before, t.w2.received.size(), "the SYN was dropped");
            assertEquals(seenBefore, t.seen.size(), "dropped before forwarding");
            assertEquals(1, t.core.stats().drop());
            assertEquals(0, t.core.stats().earlyDrop());
            assertEquals(1, t.r.drops().get(DropReason.NETFILTER_DROP));
            assertEquals(2, t.table().count());
            // Packets of the connections already tracked still pass.
            t.fromH1(t.tcp12(40000, 80, 1001, 5001, TcpSegment.ACK_FLAG, 502, CtRouter.NO_OPTS, 10));
            assertEquals(IpConntrackInfo.ESTABLISHED, t.last().ctinfo());
        }
    }

    @Test
    void fragmentsAreReassembledBeforeTrackingAndTheWholeDatagramIsTracked() {
        try (CtRouter t = new CtRouter()) {
            byte[] udp = CtRouter.udpDatagram(CtRouter.A1, CtRouter.A2, 9000, 9001, 100);
            byte[] head = Arrays.copyOfRange(udp, 0, 64);
            byte[] tail = Arrays.copyOfRange(udp, 64, udp.length);
            t.fromH1(t.ip(CtRouter.H1, CtRouter.R1, CtRouter.A1, CtRouter.A2, Ipv4Packet.PROTO_UDP, tail, 64 / 8, 4242));
            assertTrue(t.seen.isEmpty(), "the second fragment waits");
            assertEquals(0, t.table().count());
            t.fromH1(t.ip(CtRouter.H1, CtRouter.R1, CtRouter.A1, CtRouter.A2, Ipv4Packet.PROTO_UDP, head,
                    Ipv4Packet.FLAG_MF, 4242));
            assertEquals(1, t.seen.size());
            ConntrackEntry ct = t.last().ct();
            assertNotNull(ct, "tracked as a whole datagram, the ports read from the first fragment");
            assertEquals(9000, ct.tuple(ConntrackEntry.ORIGINAL).srcPort());
            assertEquals(1, t.w2.received.size());
            assertEquals(14 + 20 + 108, t.w2.received.getFirst().data().length, "forwarded whole");
            assertEquals(0, t.core.stats().invalid());
        }
    }

    @Test
    void natHelpersInvertTuplesFindTakenRepliesAndAlterAnUnconfirmedReply() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.udp12(5000, 5001, 1));
            ConntrackEntry ct = t.last().ct();
            ConntrackTuple orig = ct.tuple(ConntrackEntry.ORIGINAL);
            ConntrackTuple inv = new ConntrackTuple();
            assertTrue(ConntrackTable.invert(orig, inv));
            assertTrue(inv.equals(ct.tuple(ConntrackEntry.REPLY)));
            assertEquals(inv.hash(7), ct.tuple(ConntrackEntry.REPLY).hash(7));

            // Another host's flow that NAT would map onto H1:5000 collides with the entry's reply.
            ConntrackTuple candidate = ConntrackTuple.of(17, CtRouter.A1, CtRouter.A2, 5000, 5001);
            assertTrue(t.table().tupleTaken(candidate, null));
            assertFalse(t.table().tupleTaken(candidate, ct), "its own entry does not count");
            assertFalse(t.table().tupleTaken(ConntrackTuple.of(17, CtRouter.A1, CtRouter.A2, 5002, 5001), null));

            ConntrackTupleHash h = t.table().find(inv);
            assertEquals(ConntrackEntry.REPLY, h.direction());
            assertTrue(h.entry() == ct);
            assertThrows(IllegalStateException.class, () -> t.table().alterReply(ct, inv));

            ConntrackTuple icmp = new ConntrackTuple().setIcmp(1, 2, 77, 8, 0);
            assertTrue(ConntrackTable.invert(icmp, inv));
            assertEquals(0, inv.icmpType());
            assertEquals(77, inv.icmpId());
            assertFalse(ConntrackTable.invert(new ConntrackTuple().setIcmp(1, 2, 77, 3, 0), inv));
        }
    }

    @Test
    void aConfirmationClashJoinsAnIdenticalUdpEntryAndFailsForTcp() {
        try (CtRouter t = new CtRouter()) {
            ConntrackTable table = t.table();
            ConntrackTuple o = ConntrackTuple.of(17, CtRouter.A1, CtRouter.A2, 1111, 53);
            ConntrackTuple r = new ConntrackTuple();
            ConntrackTable.invert(o, r);
            // Two first packets of one flow, both tracked before either was confirmed.
            ConntrackEntry first = table.allocate(o, r, false, 0);
            ConntrackEntry second = table.allocate(o, r, false, 0);
            ConntrackCore.refresh(first, table, 30_000_000_000L);
            ConntrackCore.refresh(second, table, 30_000_000_000L);
            assertSame(first, table.confirm(first));
            assertSame(first, table.confirm(second), "the later packet joins the entry in the table");
            assertEquals(1, t.core.stats().clashResolve());

            ConntrackTuple to = ConntrackTuple.of(6, CtRouter.A1, CtRouter.A2, 2222, 80);
            ConntrackTuple tr = new ConntrackTuple();
            ConntrackTable.invert(to, tr);
            ConntrackEntry a = table.allocate(to, tr, false, 0);
            ConntrackEntry b = table.allocate(to, tr, false, 0);
            ConntrackCore.refresh(a, table, 120_000_000_000L);
            ConntrackCore.refresh(b, table, 120_000_000_000L);
            assertSame(a, table.confirm(a));
            assertNull(table.confirm(b));
            assertEquals(1, t.core.stats().insertFailed());
            assertEquals(1, t.core.stats().drop());
            assertEquals(2, table.count());
        }
    }

    @Test
    void aChainTooLongRefusesTheInsert() {
        try (CtRouter t = new CtRouter()) {
            t.r.knobs().set("net.netfilter.nf_conntrack_buckets", "1");
            for (int port = 1000; port < 1100; port++) {
                t.fromH1(t.udp12(port, 53, 1));
            }
            long refused = t.core.stats().chainTooLong();
            assertTrue(refused > 0, "100 entries in one bucket");
            assertEquals(refused, t.core.stats().insertFailed());
            assertEquals(100 - refused, t.table().count());
            assertEquals(refused, t.r.drops().get(DropReason.NETFILTER_DROP));
            // Both tuples of every entry share the one chain: at most 80 nodes, 40 entries, fit.
            assertTrue(t.table().count() <= 41 && t.table().count() >= 25, "count " + t.table().count());
        }
    }

    @Test
    void anExpiredEntryMetByALookupIsRemovedThere() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.udp12(5000, 5001, 1));
            ConntrackEntry ct = t.last().ct();
            ConntrackTuple orig = new ConntrackTuple().copyFrom(ct.tuple(ConntrackEntry.ORIGINAL));
            // Its deadline passed and the collector has not come yet.
            ct.timeout = t.now() - 1;
            assertEquals(1, t.table().count());
            assertNull(t.table().lookup(orig));
            assertEquals(0, t.table().count());
            assertTrue(ct.hasStatus(IpConntrackStatus.DYING));
            t.fromH1(t.udp12(5000, 5001, 1));
            assertTrue(t.last().ct() != ct);
            assertEquals(IpConntrackInfo.NEW, t.last().ctinfo());
        }
    }

    @Test
    void deleteFlushAndListing() {
        try (CtRouter t = new CtRouter()) {
            t.fromH1(t.udp12(5000, 5001, 1));
            t.fromH1(t.udp12(5002, 5001, 1));
            t.fromH1(t.echo12(8, 1, 1));
            assertEquals(3, t.table().entries().size());
            assertEquals(1, t.table().deleteIf(e -> e.protocol() == 1));
            assertEquals(2, t.table().count());
            ConntrackEntry e = t.table().entries().getFirst();
            assertTrue(t.table().delete(e));
            assertFalse(t.table().delete(e));
            assertNull(t.table().lookup(e.tuple(ConntrackEntry.ORIGINAL)));
            assertEquals(1, t.table().flush());
            assertEquals(0, t.table().count());
            assertEquals("cpu=0   \tfound=0 invalid=0 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 "
                    + "search_restart=0 clash_resolve=0 chaintoolong=0 ", t.core.stats().describe());
        }
    }
}
