package dev.usnet.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VethTest {

    @Test
    void peerReceivesTheSamePacketObjectWithoutACopy() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            List<Packet> seen = new ArrayList<>();
            List<Object> bufs = new ArrayList<>();
            pair[1].setRxHandler((dev, p) -> {
                seen.add(p);
                bufs.add(p.buf());
                p.release();
                return true;
            });
            Packet p = Packet.allocate(Buffers.HEADROOM, 60);
            p.buf().writeZero(60);
            Object sentBuf = p.buf();
            pair[0].transmit(p);
            net.settle();
            assertEquals(1, seen.size());
            assertSame(p, seen.get(0));
            assertSame(sentBuf, bufs.get(0));
            assertEquals(1, pair[0].stats().txPackets);
            assertEquals(1, pair[1].stats().rxPackets);
            assertEquals(60, pair[1].stats().rxBytes);
        }
    }

    @Test
    void framesAbovePeerMtuAreDroppedAndCounted() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            pair[1].setMtu(1000);
            Packet p = Packet.allocate(Buffers.HEADROOM, 1100);
            p.buf().writeZero(1100);
            pair[0].transmit(p);
            net.settle();
            assertEquals(0, pair[1].stats().rxPackets);
            assertEquals(1, pair[1].stats().rxDropped);
            assertEquals(1, a.drops().get(DropReason.PKT_TOO_BIG));
        }
    }

    @Test
    void downPeerMeansNoCarrier() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            pair[1].setUp(false);
            Packet p = Packet.allocate(Buffers.HEADROOM, 60);
            p.buf().writeZero(60);
            pair[0].transmit(p);
            net.settle();
            assertEquals(1, pair[0].stats().txDropped);
            assertEquals(1, a.drops().get(DropReason.DEV_DOWN));
        }
    }

    /**
     * The etun bug: switching tx-checksumming off did not really switch it off. With it on, usnet leaves UDP
     * checksums partial on the wire (the peer trusts them); off, every datagram carries a complete checksum;
     * and switching it back and forth takes effect each time.
     */
    @Test
    void txChecksummingCanBeSwitchedOnAndReallyOffAgain() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", "198.18.0.1/24", b, "veth1", "198.18.0.2/24");
            b.neigh().addPermanent(pair[1], Ipv4Addr.parse("198.18.0.1"), pair[0].mac());
            a.neigh().addPermanent(pair[0], Ipv4Addr.parse("198.18.0.2"), pair[1].mac());
            List<Boolean> wireChecksumValid = new ArrayList<>();
            pair[0].addTap((dev, p, tx, now) -> {
                if (tx) {
                    int ip = p.start() + 14;
                    int udp = ip + 20;
                    int len = p.length() - 34;
                    long ph = Checksum.pseudoHeader(p.buf().getInt(ip + 12), p.buf().getInt(ip + 16), 17, len);
                    wireChecksumValid.add(Checksum.finish(Checksum.add(p.buf(), udp, len, ph)) == 0);
                }
            });
            UdpSocket rx = b.udp().bind(0, 9000);
            List<String> got = new ArrayList<>();
            rx.setReceiver((s, src, port, buf, off, len) -> got.add(buf.toString(off, len, java.nio.charset.StandardCharsets.US_ASCII)));
            UdpSocket tx = a.udp().bind(0, 0);
            int dst = Ipv4Addr.parse("198.18.0.2");
            var data = Unpooled.copiedBuffer("hello", java.nio.charset.StandardCharsets.US_ASCII);
            boolean[] settings = {false, true, false, true, false};
            for (boolean on : settings) {
                pair[0].setTxChecksumOffload(on);
                assertTrue(tx.sendTo(dst, 9000, data, 0, 5));
                net.settle();
            }
            assertEquals(List.of(true, false, true, false, true), wireChecksumValid,
                    "off must mean complete checksums on the wire, every time it is switched off");
            assertEquals(5, got.size(), "the receiver accepts partial (offloaded) and complete checksums alike");
            assertEquals(0, b.mib().get(dev.usnet.core.stats.Mib.UdpInCsumErrors));
        }
    }
}
