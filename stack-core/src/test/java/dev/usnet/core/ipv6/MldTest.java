package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The MLD listener answering queries as Linux (what the router6-mld fixture recorded, and the timers around it). */
class MldTest {
    private static final long DUT_MAC = 0x02_00_00_00_70_01L;
    private static final long Q_MAC = 0x02_00_00_00_71_09L;
    private static final Ipv6Addr Q_LL = Ipv6Addr.parse("fe80::71:9");
    private static final Ipv6Addr DUT_LL = Ipv6Addr.parse("fe80::ff:fe00:7001");
    private static final Ipv6Addr GLOBAL = Ipv6Addr.parse("2001:db8:71::1");
    private static final Ipv6Addr LL_SN = Ipv6Addr.parse("ff02::1:ff00:7001");
    private static final Ipv6Addr ANYCAST_SN = Ipv6Addr.parse("ff02::1:ff00:0");
    private static final Ipv6Addr GLOBAL_SN = Ipv6Addr.parse("ff02::1:ff00:1");
    private static final long MS = 1_000_000L;
    private static final long SEC = 1_000_000_000L;

    private record Rig(TestNet net, NetStack s, TestNet.Wire w) implements AutoCloseable {
        static Rig of(boolean forwarding, boolean dad) {
            TestNet net = new TestNet();
            NetStack s = net.ns("dut");
            s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            s.knobs().set("net.ipv6.conf.default.accept_dad", dad ? "1" : "0");
            s.knobs().set("net.ipv6.conf.default.forwarding", forwarding ? "1" : "0");
            TestNet.Wire w = net.wire(s, "r1", DUT_MAC);
            s.ipv6().addAddress(w.dutEnd, GLOBAL, 64, false);
            net.run(SEC);
            w.clear();
            return new Rig(net, s, w);
        }

        /** Sends {@code frame}, runs {@code nanos}, and returns the MLD messages the DUT sent meanwhile. */
        List<byte[]> exchange(byte[] frame, long nanos) {
            w.clear();
            w.send(frame);
            net.run(nanos);
            List<byte[]> out = new ArrayList<>();
            for (byte[] f : w.frames()) {
                int t = mldType(f);
                if (t == Icmpv6Packet.MLD_REPORT || t == Icmpv6Packet.MLD2_REPORT || t == Icmpv6Packet.MLD_DONE) {
                    out.add(f);
                }
            }
            return out;
        }

        @Override
        public void close() {
            net.close();
        }
    }

    /** The ICMPv6 type after a hop-by-hop header, or -1. */
    private static int mldType(byte[] f) {
        if (f.length < 14 + 40 + 8 + 4 || (f[12] & 0xff) != 0x86 || (f[13] & 0xff) != 0xdd || f[20] != 0
                || (f[54] & 0xff) != 58) {
            return -1;
        }
        return f[62] & 0xff;
    }

    private static Ipv6Addr addr(byte[] f, int off) {
        ByteBuffer b = ByteBuffer.wrap(f);
        return new Ipv6Addr(b.getLong(off), b.getLong(off + 8));
    }

    /** The groups of an MLDv2 report's records, checking each is an is-exclude of no source. */
    private static List<Ipv6Addr> records(byte[] f) {
        int n = ((f[62 + 6] & 0xff) << 8) | (f[62 + 7] & 0xff);
        List<Ipv6Addr> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int r = 62 + 8 + 20 * i;
            assertEquals(2, f[r] & 0xff, "MODE_IS_EXCLUDE");
            assertEquals(0, ((f[r + 2] & 0xff) << 8) | (f[r + 3] & 0xff), "no source");
            l.add(addr(f, r + 4));
        }
        return l;
    }

    private static byte[] query(Ipv6Addr src, Ipv6Addr dst, byte[] msg) {
        ByteBuffer b = ByteBuffer.allocate(14 + 40 + 8 + msg.length);
        long mac = 0x3333_0000_0000L | (dst.lo() & 0xffff_ffffL);
        b.putShort((short) (mac >>> 32)).putInt((int) mac).putShort((short) (Q_MAC >>> 32)).putInt((int) Q_MAC);
        b.putShort((short) 0x86dd).putInt(0x6000_0000).putShort((short) (8 + msg.length)).put((byte) 0).put((byte) 1);
        b.putLong(src.hi()).putLong(src.lo()).putLong(dst.hi()).putLong(dst.lo());
        b.put(new byte[] {58, 0, 5, 2, 0, 0, 1, 0}).put(msg);
        byte[] f = b.array();
        Icmpv6Packet.fillChecksum(Unpooled.wrappedBuffer(f), 14, 62, msg.length);
        return f;
    }

    private static byte[] v2Query(int mrcMs, Ipv6Addr group, int qrv, int qqic) {
        return ByteBuffer.allocate(28).put((byte) 130).put((byte) 0).putShort((short) 0).putShort((short) mrcMs)
                .putShort((short) 0).putLong(group.hi()).putLong(group.lo()).put((byte) qrv).put((byte) qqic)
                .putShort((short) 0).array();
    }

    private static byte[] v1Message(int type, int maxDelayMs, Ipv6Addr group) {
        return ByteBuffer.allocate(24).put((byte) type).put((byte) 0).putShort((short) 0)
                .putShort((short) maxDelayMs).putShort((short) 0).putLong(group.hi()).putLong(group.lo()).array();
    }

    private static byte[] generalV2(int mrcMs) {
        return query(Q_LL, Ipv6Addr.ALL_NODES, v2Query(mrcMs, Ipv6Addr.ANY, 2, 125));
    }

    private static void assertWellFormedReport(byte[] f, Ipv6Addr src, Ipv6Addr dst) {
        assertEquals(1, f[21] & 0xff, "hop limit 1");
        assertEquals(src, addr(f, 22));
        assertEquals(dst, addr(f, 38));
        assertEquals(List.of(58, 0, 5, 2, 0, 0, 1, 0), List.of(f[54] & 0xff, f[55] & 0xff, f[56] & 0xff,
                f[57] & 0xff, f[58] & 0xff, f[59] & 0xff, f[60] & 0xff, f[61] & 0xff), "router alert (MLD), PadN");
        ByteBuf b = Unpooled.wrappedBuffer(f);
        int len = f.length - 62;
        long sum = Ipv6Packet.pseudoHeaderSum(b, 14, len, Ipv6Packet.NEXTHDR_ICMPV6);
        assertEquals(0, Checksum.finish(Checksum.add(b, 62, len, sum)), "ICMPv6 checksum");
        long mac = 0x3333_0000_0000L | (dst.lo() & 0xffff_ffffL);
        assertEquals(mac, ByteBuffer.wrap(f).getLong(0) >>> 16, "to the group's 33:33 MAC");
    }

    @Test
    void aGeneralQueryIsAnsweredWithOneReportOfEveryGroupInLinuxsOrder() {
        try (Rig r = Rig.of(true, false)) {
            List<byte[]> out = r.exchange(generalV2(1), 50 * MS);
            assertEquals(1, out.size());
            byte[] f = out.getFirst();
            assertEquals(Icmpv6Packet.MLD2_REPORT, mldType(f));
            assertWellFormedReport(f, DUT_LL, Ipv6Addr.ALL_MLDV2_ROUTERS);
            assertEquals(List.of(LL_SN, ANYCAST_SN, GLOBAL_SN, Ipv6Addr.ALL_ROUTERS), records(f),
                    "solicited-node groups (link-local, subnet-router anycast, global), all routers; never ff02::1");
        }
    }

    @Test
    void aHostReportsNoRouterGroups() {
        try (Rig r = Rig.of(false, false)) {
            List<byte[]> out = r.exchange(generalV2(1), 50 * MS);
            assertEquals(List.of(LL_SN, GLOBAL_SN), records(out.getFirst()));
        }
    }

    @Test
    void theAnswerComesWithinTheMaximumResponseDelay() {
        try (Rig r = Rig.of(true, false)) {
            r.w.clear();
            r.w.send(generalV2(1000));
            r.net.run(SEC + 2 * 4 * MS);
            List<TestNet.Seen> seen = r.w.received;
            assertEquals(1, seen.stream().filter(x -> mldType(x.data()) == Icmpv6Packet.MLD2_REPORT).count(),
                    "one answer within 1 s + 2 jiffies, not one per group");
        }
    }

    @Test
    void groupSpecificQueriesAnswerOnlyReportedGroups() {
        try (Rig r = Rig.of(true, false)) {
            List<byte[]> out = r.exchange(query(Q_LL, Ipv6Addr.ALL_ROUTERS, v2Query(1, Ipv6Addr.ALL_ROUTERS, 2, 125)),
                    50 * MS);
            assertEquals(1, out.size());
            assertEquals(List.of(Ipv6Addr.ALL_ROUTERS), records(out.getFirst()));
            assertEquals(0, r.exchange(query(Q_LL, Ipv6Addr.ALL_NODES, v2Query(1, Ipv6Addr.ALL_NODES, 2, 125)),
                    50 * MS).size(), "ff02::1 is never reported");
        }
    }

    @Test
    void anMldv1QuerierSwitchesToMldv1UntilRobustnessTimesQueryIntervalPlusResponseInterval() {
        try (Rig r = Rig.of(true, false)) {
            r.exchange(generalV2(1), 50 * MS);
            List<byte[]> v1 = r.exchange(query(Q_LL, Ipv6Addr.ALL_NODES, v1Message(130, 1, Ipv6Addr.ANY)), 50 * MS);
            assertEquals(4, v1.size(), "one MLDv1 report per group");
            List<Ipv6Addr> groups = new ArrayList<>();
            for (byte[] f : v1) {
                assertEquals(Icmpv6Packet.MLD_REPORT, mldType(f));
                Ipv6Addr g = addr(f, 62 + 8);
                assertWellFormedReport(f, DUT_LL, g);
                groups.add(g);
            }
            assertTrue(groups.containsAll(List.of(LL_SN, ANYCAST_SN, GLOBAL_SN, Ipv6Addr.ALL_ROUTERS)), groups.toString());
            List<byte[]> still = r.exchange(generalV2(1), 50 * MS);
            assertEquals(4, still.size(), "an MLDv2 query is answered in MLDv1 while the MLDv1 querier counts");
            assertTrue(still.stream().allMatch(f -> mldType(f) == Icmpv6Packet.MLD_REPORT));
            // qrv 2 x qi 125 s + qri (the last MLDv2 query's 1 ms, one jiffy).
            r.net.run(250 * SEC);
            List<byte[]> back = r.exchange(generalV2(1), 50 * MS);
            assertEquals(1, back.size());
            assertEquals(Icmpv6Packet.MLD2_REPORT, mldType(back.getFirst()), "back to MLDv2");
        }
    }

    @Test
    void forceMldVersionPinsTheVersion() {
        try (Rig r = Rig.of(true, false)) {
            r.s.knobs().set("net.ipv6.conf.r1.force_mld_version", "2");
            assertEquals(0, r.exchange(query(Q_LL, Ipv6Addr.ALL_NODES, v1Message(130, 1, Ipv6Addr.ANY)), 50 * MS).size(),
                    "MLDv2 only: MLDv1 queries are ignored");
            r.s.knobs().set("net.ipv6.conf.all.force_mld_version", "1");
            List<byte[]> out = r.exchange(generalV2(1), 50 * MS);
            assertEquals(4, out.size(), "a non-zero all wins: MLDv1 reports");
            assertTrue(out.stream().allMatch(f -> mldType(f) == Icmpv6Packet.MLD_REPORT));
        }
    }

    @Test
    void aQueryFromANonLinkLocalSourceIsIgnored() {
        try (Rig r = Rig.of(true, false)) {
            assertEquals(0, r.exchange(query(Ipv6Addr.parse("2001:db8:71::9"), Ipv6Addr.ALL_NODES,
                    v2Query(1, Ipv6Addr.ANY, 2, 125)), 50 * MS).size());
            assertEquals(1, r.s.drops().get(DropReason.IPV6_MLD_BAD_QUERY));
        }
    }

    @Test
    void anotherListenersMldv1ReportSuppressesOurs() {
        try (Rig r = Rig.of(true, false)) {
            r.w.clear();
            r.w.send(query(Q_LL, Ipv6Addr.ALL_NODES, v1Message(130, 10_000, Ipv6Addr.ANY)));
            r.net.settle();
            r.w.send(query(Ipv6Addr.parse("fe80::99"), Ipv6Addr.ALL_ROUTERS,
                    v1Message(Icmpv6Packet.MLD_REPORT, 0, Ipv6Addr.ALL_ROUTERS)));
            r.net.run(11 * SEC);
            List<Ipv6Addr> reported = new ArrayList<>();
            for (byte[] f : r.w.frames()) {
                if (mldType(f) == Icmpv6Packet.MLD_REPORT) {
                    reported.add(addr(f, 62 + 8));
                }
            }
            assertEquals(3, reported.size(), reported.toString());
            assertTrue(!reported.contains(Ipv6Addr.ALL_ROUTERS), "ff02::2 was answered by someone else");
        }
    }

    @Test
    void withoutAUsableLinkLocalAddressReportsComeFromTheUnspecifiedAddress() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("dut");
            s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            TestNet.Wire w = net.wire(s, "r1", DUT_MAC);
            net.settle();
            w.clear();
            w.send(generalV2(1));
            net.run(20 * MS);
            byte[] f = w.frames().stream().filter(x -> mldType(x) == Icmpv6Packet.MLD2_REPORT && (x[70] & 0xff) == 2)
                    .findFirst().orElseThrow();
            assertEquals(Ipv6Addr.ANY, addr(f, 22), "the link-local address is still tentative");
            assertEquals(List.of(LL_SN), records(f));
        }
    }

    /** The record types and groups of an MLDv2 report, as "type group" strings. */
    private static List<String> typedRecords(byte[] f) {
        int n = ((f[62 + 6] & 0xff) << 8) | (f[62 + 7] & 0xff);
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int r = 62 + 8 + 20 * i;
            l.add((f[r] & 0xff) + " " + addr(f, r + 4));
        }
        return l;
    }

    @Test
    void linkUpIsReportedInRobustnessManyStateChangeReportsTheFirstTwoJiffiesAfter() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("dut");
            s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
            s.knobs().set("net.ipv6.conf.default.forwarding", "1");
            TestNet.Wire w = net.wire(s, "r1", DUT_MAC);
            net.settle();
            long up = s.now();
            s.ipv6().mld().sync(w.dutEnd);
            net.run(2 * SEC);
            List<TestNet.Seen> reports = w.received.stream()
                    .filter(x -> mldType(x.data()) == Icmpv6Packet.MLD2_REPORT).toList();
            assertEquals(2, reports.size(), "mld_qrv 2: the change is reported twice");
            assertEquals(up + 2 * MS, reports.get(0).at(), "two jiffies (HZ 1000) after link up");
            assertTrue(reports.get(1).at() - reports.get(0).at() <= SEC + 2 * MS,
                    "the retransmission within mldv2_unsolicited_report_interval (+2 jiffies)");
            for (TestNet.Seen x : reports) {
                assertWellFormedReport(x.data(), DUT_LL, Ipv6Addr.ALL_MLDV2_ROUTERS);
                assertEquals(List.of("4 " + LL_SN, "4 " + Ipv6Addr.ALL_ROUTERS), typedRecords(x.data()),
                        "change-to-exclude of no source for each group joined, ff02::1 never");
            }
            w.clear();
            s.ipv6().addAddress(w.dutEnd, GLOBAL, 64, false);
            s.ipv6().mld().sync(w.dutEnd);
            net.run(2 * SEC);
            List<byte[]> joins = w.frames().stream().filter(x -> mldType(x) == Icmpv6Packet.MLD2_REPORT).toList();
            assertEquals(2, joins.size());
            assertEquals(List.of("4 " + ANYCAST_SN, "4 " + GLOBAL_SN), typedRecords(joins.getFirst()),
                    "only the groups the new address joined");
            w.clear();
            s.knobs().set("net.ipv6.conf.r1.forwarding", "0");
            s.ipv6().mld().sync(w.dutEnd);
            net.run(2 * SEC);
            List<byte[]> leaves = w.frames().stream().filter(x -> mldType(x) == Icmpv6Packet.MLD2_REPORT).toList();
            assertEquals(2, leaves.size());
            assertEquals(List.of("3 " + ANYCAST_SN, "3 " + Ipv6Addr.ALL_ROUTERS), typedRecords(leaves.getFirst()),
                    "a leave is a change-to-include of no source");
        }
    }

    @Test
    void inMldv1AJoinIsReportedAtOnceAndOnceMoreAndALeaveSendsADone() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("dut");
            s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
            s.knobs().set("net.ipv6.conf.default.force_mld_version", "1");
            TestNet.Wire w = net.wire(s, "r1", DUT_MAC);
            net.run(SEC);
            s.ipv6().mld().sync(w.dutEnd);
            net.run(10 * SEC);
            w.clear();
            s.knobs().set("net.ipv6.conf.r1.forwarding", "1");
            s.ipv6().mld().sync(w.dutEnd);
            net.settle();
            List<byte[]> now = w.frames().stream().filter(x -> mldType(x) == Icmpv6Packet.MLD_REPORT
                    && addr(x, 62 + 8).equals(Ipv6Addr.ALL_ROUTERS)).toList();
            assertEquals(1, now.size(), "reported at once");
            assertEquals(Ipv6Addr.ALL_ROUTERS, addr(now.getFirst(), 62 + 8));
            assertWellFormedReport(now.getFirst(), DUT_LL, Ipv6Addr.ALL_ROUTERS);
            net.run(10 * SEC);
            assertEquals(2, w.frames().stream().filter(x -> mldType(x) == Icmpv6Packet.MLD_REPORT
                            && addr(x, 62 + 8).equals(Ipv6Addr.ALL_ROUTERS)).count(),
                    "and once more within mldv1_unsolicited_report_interval (10 s)");
            w.clear();
            s.knobs().set("net.ipv6.conf.r1.forwarding", "0");
            s.ipv6().mld().sync(w.dutEnd);
            net.settle();
            byte[] done = w.frames().stream().filter(x -> mldType(x) == Icmpv6Packet.MLD_DONE).findFirst().orElseThrow();
            assertWellFormedReport(done, DUT_LL, Ipv6Addr.ALL_ROUTERS);
            assertEquals(Ipv6Addr.ALL_ROUTERS, addr(done, 62 + 8));
        }
    }

    @Test
    void maximumResponseAndQueryIntervalCodesAreExponentialFrom32768And128() {
        assertEquals(1000, Mld.mrcMillis(1000));
        assertEquals(0x1000L << 10, Mld.mrcMillis(0xf000));
        assertEquals(125, Mld.qqicSeconds(125));
        assertEquals(0x10L << 3, Mld.qqicSeconds(0x80));
    }
}
