package dev.usnet.core.neigh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A neighbour table of 16-byte addresses, as NDP's will be, driven by a made-up protocol: addresses that share their
 * low 64 bits and differ only in the high 64 stay separate entries through lookup, delete, flushDevice and the
 * forced GC, and print in IPv6 text.
 */
class NeighSixteenByteKeyTest {
    static final long OUR_MAC = 0x02_00_00_00_00_01L;
    static final long SEC = 1_000_000_000L;
    // 2001:db8:1::5 and 2001:db8:2::5: the same low 64 bits.
    static final long HI_A = 0x2001_0db8_0001_0000L;
    static final long HI_B = 0x2001_0db8_0002_0000L;
    static final long LO = 5;

    static final class SixteenByteOps implements NeighOps {
        final List<Neighbour> solicited = new ArrayList<>();

        @Override
        public int keyLength() {
            return 16;
        }

        @Override
        public int ethertype() {
            return 0x86dd;
        }

        @Override
        public long mapWithoutAsking(Device dev, long hi, long lo) {
            return RESOLVE;
        }

        @Override
        public void solicit(Neighbour n, boolean unicast, Packet last) {
            solicited.add(n);
        }

        @Override
        public void reportUnreachable(Packet p) {}
    }

    @Test
    void addressesDifferingOnlyInTheHighHalfAreDistinctEntries() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            Device eth0 = net.wire(s, "eth0", OUR_MAC).dutEnd;
            NeighTable t = new NeighTable(s, new SixteenByteOps());
            assertEquals(16, t.keyLength());
            Neighbour a = t.eventNs(eth0, HI_A, LO, 0x0200_0000_000aL);
            Neighbour b = t.eventNs(eth0, HI_B, LO, 0x0200_0000_000bL);
            assertNotSame(a, b);
            assertEquals(2, t.size());
            assertSame(a, t.lookup(eth0, HI_A, LO));
            assertSame(b, t.lookup(eth0, HI_B, LO));
            assertNull(t.lookup(eth0, 0, LO), "::5 is neither");
            assertEquals(0x0200_0000_000aL, a.mac());
            assertEquals(0x0200_0000_000bL, b.mac());
            assertEquals(16, a.addrLength());
            assertEquals(HI_A, a.addrHi());
            assertEquals(LO, a.addrLo());
            assertEquals("2001:db8:1::5", a.address());
            assertEquals("2001:db8:1::5 dev eth0 lladdr 02:00:00:00:00:0a STALE", a.toString());
            assertThrows(IllegalStateException.class, a::ip, "a 16-byte entry has no IPv4 address");
            assertThrows(IllegalStateException.class, () -> t.lookup(eth0, 5), "nor does its table take one");
            assertEquals(List.of(a, b), t.list(), "listed by address");

            assertTrue(t.delete(eth0, HI_A, LO));
            assertNull(t.lookup(eth0, HI_A, LO));
            assertSame(b, t.lookup(eth0, HI_B, LO), "deleting one leaves the other");
            assertEquals(1, t.size());
            t.close();
        }
    }

    @Test
    void flushDeviceRemovesOnlyThatDevicesEntries() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            Device eth0 = net.wire(s, "eth0", OUR_MAC).dutEnd;
            Device eth1 = net.wire(s, "eth1", OUR_MAC + 1).dutEnd;
            NeighTable t = new NeighTable(s, new SixteenByteOps());
            t.eventNs(eth0, HI_A, LO, 0x0200_0000_000aL);
            t.eventNs(eth0, HI_B, LO, 0x0200_0000_000bL);
            t.addPermanent(eth1, HI_A, LO, 0x0200_0000_000cL);
            Neighbour kept = t.eventNs(eth1, HI_B, LO, 0x0200_0000_000dL);
            assertEquals(4, t.size());
            t.flushDevice(eth0);
            assertEquals(2, t.size());
            assertNull(t.lookup(eth0, HI_A, LO));
            assertNull(t.lookup(eth0, HI_B, LO));
            assertEquals(NudState.PERMANENT, t.lookup(eth1, HI_A, LO).state());
            assertSame(kept, t.lookup(eth1, HI_B, LO));
            assertEquals(1, t.flush(null), "flush spares the permanent entry");
            assertEquals(1, t.size());
            t.close();
        }
    }

    @Test
    void theForcedGcRemovesTheOldestSixteenByteEntries() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            s.knobs().set("net.ipv4.neigh.default.gc_thresh2", "2");
            s.knobs().set("net.ipv4.neigh.default.gc_thresh3", "4");
            Device eth0 = net.wire(s, "eth0", OUR_MAC).dutEnd;
            NeighTable t = new NeighTable(s, new SixteenByteOps());
            // Four entries, pairwise equal in their low halves; the first two are the oldest.
            t.eventNs(eth0, HI_A, LO, 0x0200_0000_000aL);
            t.eventNs(eth0, HI_B, LO, 0x0200_0000_000bL);
            net.run(SEC);
            t.eventNs(eth0, HI_A, LO + 1, 0x0200_0000_000cL);
            t.eventNs(eth0, HI_B, LO + 1, 0x0200_0000_000dL);
            assertEquals(4, t.size());
            net.run(6 * SEC);
            // At gc_thresh3 a new entry forces a GC down to gc_thresh2, oldest first.
            assertNotNull(t.eventNs(eth0, HI_A, LO + 2, 0x0200_0000_000eL));
            assertTrue(t.forcedGcRuns() > 0);
            assertNull(t.lookup(eth0, HI_A, LO));
            assertNull(t.lookup(eth0, HI_B, LO));
            assertNotNull(t.lookup(eth0, HI_A, LO + 1));
            assertNotNull(t.lookup(eth0, HI_B, LO + 1));
            assertNotNull(t.lookup(eth0, HI_A, LO + 2));
            assertEquals(3, t.size());
            t.close();
        }
    }

    @Test
    void resolvesA16ByteNextHopThroughTheProtocol() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            Device eth0 = net.wire(s, "eth0", OUR_MAC).dutEnd;
            SixteenByteOps ops = new SixteenByteOps();
            NeighTable t = new NeighTable(s, ops);
            Packet p = Packet.allocate(dev.usnet.core.buf.Buffers.HEADROOM, 14 + 40);
            p.buf().writerIndex(p.start() + 14 + 40);
            t.output(eth0, HI_B, LO, p);
            net.settle();
            assertEquals(1, ops.solicited.size());
            assertEquals(HI_B, ops.solicited.get(0).addrHi());
            assertEquals(NudState.INCOMPLETE, t.lookup(eth0, HI_B, LO).state());
            assertNull(t.lookup(eth0, HI_A, LO));
            t.close();
        }
    }

    @Test
    void aFourByteTableRefusesAddressesThatDoNotFit() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            Device eth0 = net.wire(s, "eth0", OUR_MAC).dutEnd;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> s.neigh().addPermanent(eth0, HI_A, LO, 0x0200_0000_000aL));
            assertTrue(e.getMessage().contains("2001:db8:1::5"), e.getMessage());
        }
    }

    @Test
    void ipv6TextFollowsRfc5952() {
        assertEquals("::", NeighAddress.format(16, 0, 0));
        assertEquals("::1", NeighAddress.format(16, 0, 1));
        assertEquals("fe80::1:2", NeighAddress.format(16, 0xfe80_0000_0000_0000L, 0x0000_0000_0001_0002L));
        // Two runs of two zero groups: the first is shortened.
        assertEquals("2001:db8::1:0:0:1", NeighAddress.format(16, 0x2001_0db8_0000_0000L, 0x0001_0000_0000_0001L));
        assertEquals("2001:0:0:1::1", NeighAddress.format(16, 0x2001_0000_0000_0001L, 1));
        assertEquals("1:2:3:4:5:6:7:8", NeighAddress.format(16, 0x0001_0002_0003_0004L, 0x0005_0006_0007_0008L));
        assertEquals("198.18.0.1", NeighAddress.format(4, 0, 0xc612_0001L));
    }
}
