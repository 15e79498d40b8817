package dev.usnet.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Icmpv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** IPv6 multicast snooping as the Linux bridge does it by default (the behaviour the bridge-mld fixture recorded). */
class BridgeMulticastTest {
    private static final long A = 0x0200_0000_2a01L;
    private static final long B = 0x0200_0000_2b02L;
    private static final long R = 0x0200_0000_2d04L;
    private static final long LL_HI = 0xfe80_0000_0000_0000L;
    private static final long G1_HI = 0xff05_0000_0000_0000L;
    private static final long G1_LO = 0x0db8_0001L;
    private static final long G2_LO = 0x0db8_0002L;
    private static final long MS = 1_000_000L;

    private static final class Rig implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack ns = net.ns("br");
        final Bridge br = new Bridge("br0", 0x0200_0000_00fdL);
        final TestNet.Wire[] p = new TestNet.Wire[4];

        Rig() {
            ns.register(br);
            for (int i = 0; i < 4; i++) {
                p[i] = net.wire(ns, "p" + (i + 1), 0x0200_0000_0a01L + i);
                br.addPort(p[i].dutEnd);
            }
            br.setUp(true);
        }

        /** Sends on port index {@code in} and says which ports (1-based) got a copy, e.g. "[1, 4]". */
        String send(int in, byte[] frame) {
            for (TestNet.Wire w : p) {
                w.clear();
            }
            p[in - 1].send(frame);
            net.settle();
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < 4; i++) {
                if (!p[i].received.isEmpty()) {
                    sb.append(sb.length() > 1 ? ", " : "").append(i + 1);
                }
            }
            return sb.append("]").toString();
        }

        @Override
        public void close() {
            net.close();
        }
    }

    // Frame builders: Ethernet to 33:33 + the group's last 32 bits, IPv6, optional hop-by-hop router alert.

    private static byte[] ipv6(long srcMac, long srcHi, long srcLo, long dstHi, long dstLo, boolean routerAlert,
                               int next, byte[] payload, boolean fixIcmpChecksum) {
        int hbh = routerAlert ? 8 : 0;
        ByteBuffer b = ByteBuffer.allocate(14 + 40 + hbh + payload.length);
        long dstMac = 0x3333_0000_0000L | (dstLo & 0xffff_ffffL);
        b.putShort((short) (dstMac >>> 32)).putInt((int) dstMac);
        b.putShort((short) (srcMac >>> 32)).putInt((int) srcMac);
        b.putShort((short) 0x86dd);
        b.putInt(0x6000_0000).putShort((short) (hbh + payload.length)).put((byte) (routerAlert ? 0 : next))
                .put((byte) 1);
        b.putLong(srcHi).putLong(srcLo).putLong(dstHi).putLong(dstLo);
        if (routerAlert) {
            b.put((byte) next).put((byte) 0).put(new byte[] {5, 2, 0, 0, 1, 0});
        }
        b.put(payload);
        byte[] f = b.array();
        if (fixIcmpChecksum) {
            ByteBuf buf = Unpooled.wrappedBuffer(f);
            Icmpv6Packet.fillChecksum(buf, 14, 14 + 40 + hbh, payload.length);
        }
        return f;
    }

    private static byte[] mld(long srcMac, long srcHi, long srcLo, long dstHi, long dstLo, byte[] msg) {
        return ipv6(srcMac, srcHi, srcLo, dstHi, dstLo, true, 58, msg, true);
    }

    private static byte[] v1(int type, int maxDelayMs, long gHi, long gLo) {
        return ByteBuffer.allocate(24).put((byte) type).put((byte) 0).putShort((short) 0)
                .putShort((short) maxDelayMs).putShort((short) 0).putLong(gHi).putLong(gLo).array();
    }

    private static byte[] v2Report(int recordType, long gHi, long gLo) {
        return ByteBuffer.allocate(28).put((byte) 143).put((byte) 0).putShort((short) 0).putShort((short) 0)
                .putShort((short) 1).put((byte) recordType).put((byte) 0).putShort((short) 0)
                .putLong(gHi).putLong(gLo).array();
    }

    private static byte[] v2Query(int mrc, long gHi, long gLo) {
        return ByteBuffer.allocate(28).put((byte) 130).put((byte) 0).putShort((short) 0).putShort((short) mrc)
                .putShort((short) 0).putLong(gHi).putLong(gLo).putInt(0).array();
    }

    private static byte[] udp(long srcMac, long dstHi, long dstLo) {
        byte[] udp = new byte[32];
        udp[1] = 1;
        udp[3] = 2;
        udp[5] = 32;
        return ipv6(srcMac, LL_HI, srcMac & 0xffff, dstHi, dstLo, false, 17, udp, false);
    }

    private static byte[] report(long mac, long gHi, long gLo) {
        return mld(mac, LL_HI, mac & 0xffff, 0xff02_0000_0000_0000L, 0x16, v2Report(4, gHi, gLo));
    }

    private static byte[] generalQuery(int mrcMs) {
        return mld(R, LL_HI, 0x2d, 0xff02_0000_0000_0000L, 1, v2Query(mrcMs, 0, 0));
    }

    @Test
    void withoutAQuerierEverythingFloodsButGroupsAreLearned() {
        try (Rig r = new Rig()) {
            assertEquals("[2, 3, 4]", r.send(1, report(A, G1_HI, G1_LO)), "the report itself floods");
            MdbEntry g1 = r.br.multicast().mdb().get(G1_HI, G1_LO);
            assertTrue(g1 != null && g1.hasMember(r.br.port(r.p[0].dutEnd), r.ns.now()), "G1 learned on p1");
            assertEquals("[1, 3, 4]", r.send(2, udp(B, G1_HI, G1_LO)));
            assertEquals("[1, 3, 4]", r.send(2, udp(B, G1_HI, G2_LO)));
            assertFalse(r.br.multicast().querierExists(r.ns.now()));
        }
    }

    @Test
    void aQueryMakesARouterPortAndTheTableDecidesAfterTheMaxResponseDelay() {
        try (Rig r = new Rig()) {
            r.send(1, report(A, G1_HI, G1_LO));
            assertEquals("[1, 2, 3]", r.send(4, generalQuery(500)), "the query floods");
            assertTrue(r.br.multicast().isRouterPort(r.br.port(r.p[3].dutEnd), r.ns.now()));
            assertEquals("[1, 3, 4]", r.send(2, udp(B, G1_HI, G1_LO)), "within the query's 500 ms: still flooded");
            r.net.run(600 * MS);
            assertTrue(r.br.multicast().querierExists(r.ns.now()));
            assertEquals("[1, 4]", r.send(2, udp(B, G1_HI, G1_LO)), "registered: member and router port");
            assertEquals("[4]", r.send(2, udp(B, G1_HI, G2_LO)), "unregistered: router port only");
            assertEquals("[4]", r.send(2, udp(B, 0xff02_0000_0000_0000L, 0xfb)), "link-local groups too");
            assertEquals("[1, 3, 4]", r.send(2, udp(B, 0xff02_0000_0000_0000L, 1)), "ff02::1 always floods");
            assertEquals("[4]", r.send(1, udp(A, G1_HI, G1_LO)), "never back to the member's own ingress");
            assertEquals("[1]", r.send(4, udp(R, G1_HI, G1_LO)), "from the router port: the member only");
            assertEquals("[2, 3, 4]", r.send(1, report(A, G1_HI, G1_LO)), "MLDv2 reports flood");
            assertEquals("[4]", r.send(3, mld(0x0200_0000_2c03L, LL_HI, 0x2c, G1_HI, G2_LO,
                    v1(131, 0, G1_HI, G2_LO))), "MLDv1 reports go to router ports only");
            assertEquals("[3, 4]", r.send(2, udp(B, G1_HI, G2_LO)), "G2 registered on p3 by the v1 report");
            r.net.run(BridgeMulticast.QUERIER_INTERVAL_NANOS);
            assertFalse(r.br.multicast().querierExists(r.ns.now()), "the other querier timed out");
            assertEquals("[1, 3, 4]", r.send(2, udp(B, G1_HI, G1_LO)), "flooding again");
        }
    }

    @Test
    void leavesAreIgnoredWhileAnotherQuerierExistsAndShortenMembershipOtherwise() {
        try (Rig r = new Rig()) {
            BridgePort p1 = r.br.port(r.p[0].dutEnd);
            r.send(1, report(A, G1_HI, G1_LO));
            r.send(1, mld(A, LL_HI, 0x2a, 0xff02_0000_0000_0000L, 0x16, v2Report(3, G1_HI, G1_LO)));
            long until = r.br.multicast().mdb().get(G1_HI, G1_LO).memberUntil(p1);
            assertEquals(r.ns.now() + 2_000_000_000L, until, "no querier: last_member_count x last_member_interval");
            r.net.run(2_100 * MS);
            r.send(1, report(A, G1_HI, G1_LO));
            r.send(4, generalQuery(500));
            r.net.run(600 * MS);
            assertEquals("[2, 3, 4]", r.send(1, mld(A, LL_HI, 0x2a, 0xff02_0000_0000_0000L, 0x16,
                    v2Report(3, G1_HI, G1_LO))), "the leave floods");
            assertEquals("[1, 4]", r.send(2, udp(B, G1_HI, G1_LO)), "with a querier the bridge keeps the member");
            r.send(4, mld(R, LL_HI, 0x2d, G1_HI, G1_LO, v2Query(100, G1_HI, G1_LO)));
            assertEquals(r.ns.now() + 200 * MS, r.br.multicast().mdb().get(G1_HI, G1_LO).memberUntil(p1),
                    "a group-specific query: last_member_count x its delay");
        }
    }

    @Test
    void brokenMulticastIpv6IsDroppedUnicastIsNotExamined() {
        try (Rig r = new Rig()) {
            byte[] bad = report(A, G1_HI, G2_LO);
            bad[bad.length - 20] ^= 1;
            assertEquals("[]", r.send(2, bad), "bad MLD checksum");
            assertNull(r.br.multicast().mdb().get(G1_HI, G2_LO), "and nothing learned from it");
            assertEquals("[]", r.send(3, mld(0x0200_0000_2c03L, 0x2001_0db8_0000_0000L, 0x2c,
                    0xff02_0000_0000_0000L, 1, v2Query(500, 0, 0))), "query from a global source");
            byte[] longer = udp(B, G1_HI, G1_LO);
            longer[14 + 5] = (byte) 200;
            assertEquals("[]", r.send(2, longer), "payload length past the frame");
            assertEquals(3, r.ns.drops().get(DropReason.BRIDGE_MCAST_INVALID));
            byte[] unicast = udp(B, 0x2001_0db8_0000_0000L, 0x2e);
            unicast[14 + 5] = (byte) 200;
            unicast[0] = 0x02;
            assertEquals("[1, 3, 4]", r.send(2, unicast), "a unicast frame is not checked");
            assertFalse(r.br.multicast().querierExists(r.ns.now()), "the bad query elected nobody");
        }
    }

    @Test
    void snoopingOffFloodsWhateverWasHeard() {
        try (Rig r = new Rig()) {
            r.br.multicast().setEnabled(false);
            r.send(1, report(A, G1_HI, G1_LO));
            r.send(4, generalQuery(500));
            r.net.run(600 * MS);
            assertEquals("[1, 3, 4]", r.send(2, udp(B, G1_HI, G1_LO)));
            assertEquals(0, r.br.multicast().mdb().size());
        }
    }

    @Test
    void theBridgesOwnReportsMakeItAListenerNotAPort() {
        try (Rig r = new Rig()) {
            byte[] own = report(0x0200_0000_00fdL, G1_HI, G2_LO);
            ByteBuf b = Unpooled.wrappedBuffer(own);
            assertEquals(BridgeMulticast.Verdict.FLOOD, r.br.multicast().receive(b, 14, own.length - 14, null,
                    r.ns.now()), "an MLDv2 report to ff02::16 floods");
            MdbEntry g = r.br.multicast().mdb().get(G1_HI, G2_LO);
            assertTrue(g != null && g.hostJoined(r.ns.now()), "host_joined");
            for (TestNet.Wire w : r.p) {
                assertFalse(g.hasMember(r.br.port(w.dutEnd), r.ns.now()));
            }
        }
    }

    @Test
    void maxResponseCodeIsExponentialFrom32768() {
        assertEquals(1000, BridgeMulticast.mrcMillis(1000));
        assertEquals((0x0fff | 0x1000) << 3, BridgeMulticast.mrcMillis(0x8fff));
        assertEquals(0x1000L << 10, BridgeMulticast.mrcMillis(0xf000));
    }

    @Test
    void portDownForgetsItsGroupsAndRouterStatus() {
        try (Rig r = new Rig()) {
            BridgePort p4 = r.br.port(r.p[3].dutEnd);
            r.send(4, report(R, G1_HI, G1_LO));
            r.send(4, generalQuery(500));
            r.p[3].dutEnd.setUp(false);
            assertFalse(r.br.multicast().isRouterPort(p4, r.ns.now()));
            assertNull(r.br.multicast().mdb().get(G1_HI, G1_LO));
            assertEquals(Arrays.asList(), r.br.multicast().mdb().entries());
        }
    }
}
