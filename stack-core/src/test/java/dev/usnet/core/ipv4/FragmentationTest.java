package dev.usnet.core.ipv4;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FragmentationTest {

    /**
     * Sender → router → receiver where the router's outgoing MTU forces fragmentation: whatever the sizes, the
     * receiver's socket gets the very bytes that were sent, and every fragment fits the MTU with data
     * lengths in multiples of 8 except the last.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.MethodSource("sizes")
    void fragmentThenReassembleIsIdentity(int payload, int mtu, int secondMtu) {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack r = net.ns("r");
            NetStack b = net.ns("b");
            VethEnd[] ar = net.link(a, "eth0", "198.18.1.2/24", r, "r1", "198.18.1.1/24");
            VethEnd[] rb = net.link(r, "r2", "198.18.2.1/24", b, "eth0", "198.18.2.2/24");
            r.knobs().set("net.ipv4.ip_forward", "1");
            a.routes().add(IpRoutes.via("0.0.0.0/0", "198.18.1.1", ar[0]));
            b.routes().add(IpRoutes.via("0.0.0.0/0", "198.18.2.1", rb[1]));
            ar[0].setMtu(Math.max(mtu, secondMtu));
            ar[1].setMtu(Math.max(mtu, secondMtu));
            rb[0].setMtu(mtu);
            List<byte[]> wire = new ArrayList<>();
            rb[0].addTap((dev, p, tx, now) -> {
                if (tx && p.buf().getUnsignedShort(p.start() + 12) == 0x0800) {
                    byte[] f = new byte[p.length()];
                    p.buf().getBytes(p.start(), f);
                    wire.add(f);
                }
            });
            UdpSocket rx = b.udp().bind(0, 7000);
            List<byte[]> got = new ArrayList<>();
            rx.setReceiver((s, src, port, buf, off, len) -> {
                byte[] d = new byte[len];
                buf.getBytes(off, d);
                got.add(d);
            });
            byte[] data = new byte[payload];
            new java.util.Random(payload * 31L + mtu).nextBytes(data);
            UdpSocket tx = a.udp().bind(0, 0);
            assertTrue(tx.sendTo(Ipv4Addr.parse("198.18.2.2"), 7000, Unpooled.wrappedBuffer(data), 0, data.length));
            net.run(5_000_000_000L);
            assertEquals(1, got.size(), "datagram of " + payload + " over MTUs " + Math.max(mtu, secondMtu) + "/" + mtu);
            assertArrayEquals(data, got.get(0));
            for (int i = 0; i < wire.size(); i++) {
                byte[] f = wire.get(i);
                int total = Frames.u16(f, 16);
                assertTrue(total <= mtu, "fragment fits the MTU");
                boolean mf = (Frames.u16(f, 20) & 0x2000) != 0;
                if (mf) {
                    assertEquals(0, (total - 20) % 8, "non-last fragments carry multiples of 8");
                }
            }
        }
    }

    /** Edge sizes plus seeded random ones: payload 0..8000, MTUs 68..1500. */
    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> sizes() {
        List<org.junit.jupiter.params.provider.Arguments> l = new ArrayList<>();
        int[][] edges = {{0, 68, 68}, {1472, 1500, 1500}, {1473, 1500, 1500}, {1473, 1500, 576}, {8000, 68, 1500},
                {40, 68, 68}, {47, 68, 1500}, {49, 68, 68}, {3000, 1000, 1006}, {1200, 576, 577}};
        for (int[] e : edges) {
            l.add(org.junit.jupiter.params.provider.Arguments.of(e[0], e[1], e[2]));
        }
        java.util.Random rnd = new java.util.Random(791);
        for (int i = 0; i < 40; i++) {
            l.add(org.junit.jupiter.params.provider.Arguments.of(rnd.nextInt(8001), 68 + rnd.nextInt(1433), 68 + rnd.nextInt(1433)));
        }
        return l.stream();
    }

    @Test
    void overlappingFragmentsDiscardTheDatagramButDuplicatesAreIgnored() {
        try (TestNet net = new TestNet()) {
            NetStack b = net.ns("b");
            TestNet.Wire w = net.wire(b, "eth0", 0x0200_0000_0b01L);
            TestNet.addr(b, w.dutEnd, "198.18.2.2/24");
            UdpSocket rx = b.udp().bind(0, 2000);
            int[] got = {0};
            rx.setReceiver((s, src, port, buf, off, len) -> got[0]++);
            byte[] whole = Frames.udp(0x0200_0000_0a01L, 0x0200_0000_0b01L, "198.18.2.9", "198.18.2.2", 64, 40, 77, false);
            byte[][] parts = split(whole, 24);
            w.send(parts[0]);
            w.send(parts[0]);
            w.send(parts[1]);
            net.settle();
            assertEquals(1, got[0], "duplicate fragment ignored");
            byte[][] again = split(Frames.udp(0x0200_0000_0a01L, 0x0200_0000_0b01L, "198.18.2.9", "198.18.2.2", 64, 40, 78, false), 24);
            byte[] overlap = again[1].clone();
            overlap[20] = 0;
            overlap[21] = 2;
            Frames.fixIpChecksum(overlap);
            w.send(again[0]);
            w.send(overlap);
            w.send(again[1]);
            net.settle();
            assertEquals(1, got[0]);
            assertTrue(b.drops().get(DropReason.IP_REASM_OVERLAP) >= 2);
        }
    }

    @Test
    void incompleteDatagramTimesOutWithIcmpWhenTheFirstFragmentArrived() {
        try (TestNet net = new TestNet()) {
            NetStack b = net.ns("b");
            TestNet.Wire w = net.wire(b, "eth0", 0x0200_0000_0b01L);
            TestNet.addr(b, w.dutEnd, "198.18.2.2/24");
            b.neigh().addPermanent(w.dutEnd, Ipv4Addr.parse("198.18.2.9"), 0x0200_0000_0a01L);
            byte[][] parts = split(Frames.udp(0x0200_0000_0a01L, 0x0200_0000_0b01L, "198.18.2.9", "198.18.2.2", 64, 40, 5, false), 24);
            w.send(parts[0]);
            net.run(29_000_000_000L);
            assertEquals(0, w.received.size());
            net.run(2_000_000_000L);
            assertEquals(1, w.received.size());
            byte[] icmp = w.received.get(0).data();
            assertEquals(11, icmp[34]);
            assertEquals(1, icmp[35], "fragment reassembly time exceeded");
            assertEquals(1, b.mib().get(Mib.IpReasmTimeout));
        }
    }

    @Test
    void aFragmentFloodIsBoundedByIpfragHighThreshUntilTimeoutsFreeTheMemory() {
        try (TestNet net = new TestNet()) {
            NetStack b = net.ns("b");
            TestNet.Wire w = net.wire(b, "eth0", 0x0200_0000_0b01L);
            TestNet.addr(b, w.dutEnd, "198.18.2.2/24");
            UdpSocket rx = b.udp().bind(0, 2000);
            int[] got = {0};
            rx.setReceiver((s, src, port, buf, off, len) -> got[0]++);
            long high = 64 * 1024;
            b.knobs().set("net.ipv4.ipfrag_high_thresh", Long.toString(high));
            b.knobs().set("net.ipv4.ipfrag_time", "5");
            // Incomplete datagrams, each its own queue: first fragments only.
            for (int id = 0; id < 1000; id++) {
                w.send(split(Frames.udp(0x0200_0000_0a01L, 0x0200_0000_0b01L, "198.18.2.9", "198.18.2.2", 64, 40, id,
                        false), 24)[0]);
            }
            net.settle();
            long perQueue = IpDefrag.QUEUE_TRUESIZE + 14 + 20 + 24 + IpDefrag.FRAG_TRUESIZE_OVERHEAD;
            long queues = b.ipDefrag().pending();
            assertTrue(b.ipDefrag().memory() <= high + perQueue, "memory " + b.ipDefrag().memory());
            assertEquals(high / perQueue + 1, queues, "queues until the memory went above the ceiling");
            assertEquals(1000 - queues, b.drops().get(DropReason.IP_REASM_LIMIT));
            assertEquals(1000 - queues, b.mib().get(Mib.IpReasmFails));
            // Above the ceiling even a complete datagram is refused (nothing is evicted early).
            byte[][] whole = split(Frames.udp(0x0200_0000_0a01L, 0x0200_0000_0b01L, "198.18.2.9", "198.18.2.2", 64, 40,
                    5000, false), 24);
            w.send(whole[0]);
            w.send(whole[1]);
            net.settle();
            assertEquals(0, got[0]);
            // ipfrag_time frees it all; each expired queue counts ReasmTimeout and ReasmFails.
            net.run(6_000_000_000L);
            assertEquals(0, b.ipDefrag().pending());
            assertEquals(0, b.ipDefrag().memory());
            assertEquals(queues, b.mib().get(Mib.IpReasmTimeout));
            assertEquals(queues, b.drops().get(DropReason.IP_REASM_TIMEOUT));
            w.send(whole[0]);
            w.send(whole[1]);
            net.settle();
            assertEquals(1, got[0], "reassembly works again");
        }
    }

    @Test
    void anOverlapCountsReasmOverlapsNotReasmFails() {
        try (TestNet net = new TestNet()) {
            NetStack b = net.ns("b");
            TestNet.Wire w = net.wire(b, "eth0", 0x0200_0000_0b01L);
            TestNet.addr(b, w.dutEnd, "198.18.2.2/24");
            byte[][] p = split(Frames.udp(0x0200_0000_0a01L, 0x0200_0000_0b01L, "198.18.2.9", "198.18.2.2", 64, 40, 9,
                    false), 24);
            byte[] overlap = p[1].clone();
            overlap[21] = 2;
            Frames.fixIpChecksum(overlap);
            w.send(p[0]);
            w.send(overlap);
            net.settle();
            assertEquals(1, b.mib().get(Mib.IpExtReasmOverlaps));
            assertEquals(0, b.mib().get(Mib.IpReasmFails));
            assertEquals(0, b.ipDefrag().pending());
            assertEquals(0, b.ipDefrag().memory());
        }
    }

    /** Splits an unfragmented UDP frame's IP payload at {@code at} (a multiple of 8) into two fragments. */
    static byte[][] split(byte[] f, int at) {
        int ipLen = Frames.u16(f, 16);
        int dataLen = ipLen - 20;
        byte[] a = new byte[14 + 20 + at];
        byte[] b = new byte[14 + 20 + dataLen - at];
        System.arraycopy(f, 0, a, 0, a.length);
        System.arraycopy(f, 0, b, 0, 34);
        System.arraycopy(f, 34 + at, b, 34, dataLen - at);
        a[16] = (byte) ((20 + at) >> 8);
        a[17] = (byte) (20 + at);
        a[20] = 0x20;
        a[21] = 0;
        b[16] = (byte) ((20 + dataLen - at) >> 8);
        b[17] = (byte) (20 + dataLen - at);
        b[20] = (byte) ((at / 8) >> 8);
        b[21] = (byte) (at / 8);
        Frames.fixIpChecksum(a);
        Frames.fixIpChecksum(b);
        return new byte[][] {a, b};
    }
}
