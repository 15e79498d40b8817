package dev.usnet.core.ipv4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.route.Route;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ICMP errors reach the transport that sent the quoted datagram (icmp_unreach, icmp_socket_deliver), and
 * fragmentation needed feeds the path MTU that local output sizes by (__ip_rt_update_pmtu, ip_dont_fragment).
 */
class IcmpErrorDeliveryTest {
    static final long DUT_MAC = 0x0200_0000_0001L;
    static final long PEER_MAC = 0x0200_0000_0002L;
    static final int PROTO = 253;
    static final String DUT = "198.18.0.1";
    static final String FAR = "198.18.5.9";

    /** An L4 protocol that records the errors it hears. */
    static final class Recorder implements L4Protocol {
        final List<int[]> errs = new ArrayList<>();

        @Override
        public void rcv(Packet p) {
            p.release();
        }

        @Override
        public void err(int type, int code, int info, ByteBuf quoted, int off, int len) {
            // type, code, info, the quoted datagram's destination and protocol, the quote's length
            errs.add(new int[] {type, code, info, quoted.getInt(off + Ipv4Packet.DST),
                quoted.getUnsignedByte(off + Ipv4Packet.PROTOCOL), len});
        }
    }

    static final class Host implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack s = net.ns("dut");
        final TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
        final Recorder rec = new Recorder();

        Host() {
            TestNet.addr(s, w.dutEnd, DUT + "/24");
            s.neigh().addPermanent(w.dutEnd, Ipv4Addr.parse("198.18.0.2"), PEER_MAC);
            s.routes().add(new dev.usnet.core.route.Route(0, 0, dev.usnet.core.route.RouteType.UNICAST,
                    Ipv4Addr.parse("198.18.0.2"), w.dutEnd, 0, 0, false));
            s.ipInput().registerProtocol(PROTO, rec);
        }

        /** An ICMP error from the router 198.18.0.2 quoting a datagram of protocol 253 we sent to {@link #FAR}. */
        byte[] error(int type, int code, int rest, int quotedL4Bytes, long ethDst, String ipDst) {
            int quote = 20 + quotedL4Bytes;
            int icmpLen = 8 + quote;
            ByteBuf b = Unpooled.buffer(14 + 20 + icmpLen).writerIndex(14 + 20 + icmpLen);
            EthernetFrame.write(b, 0, ethDst, PEER_MAC, EthernetFrame.ETH_P_IP);
            int q = 14 + 20 + 8;
            Ipv4Packet.writeHeader(b, q, 0, 20 + 64, 7, Ipv4Packet.FLAG_DF, 63, PROTO, Ipv4Addr.parse(DUT),
                    Ipv4Addr.parse(FAR));
            b.setByte(14 + 20, type).setByte(14 + 21, code).setShort(14 + 22, 0).setInt(14 + 24, rest);
            b.setShort(14 + 22, Checksum.compute(b, 14 + 20, icmpLen));
            Ipv4Packet.writeHeader(b, 14, 0, 20 + icmpLen, 1, 0, 64, Ipv4Packet.PROTO_ICMP,
                    Ipv4Addr.parse("198.18.0.2"), Ipv4Addr.parse(ipDst));
            byte[] a = new byte[b.writerIndex()];
            b.getBytes(0, a);
            return a;
        }

        void inject(byte[] frame) {
            w.send(frame);
            net.settle();
        }

        @Override
        public void close() {
            net.close();
        }
    }

    @Test
    void fragmentationNeededReachesTheSenderWithTheNextHopMtu() {
        try (Host h = new Host()) {
            // The unused half of the field is not part of the MTU.
            h.inject(h.error(3, 4, 0xabcd_0000 | 1200, 8, DUT_MAC, DUT));
            assertEquals(1, h.rec.errs.size());
            int[] e = h.rec.errs.get(0);
            assertEquals(List.of(3, 4, 1200, Ipv4Addr.parse(FAR), PROTO, 28),
                    List.of(e[0], e[1], e[2], e[3], e[4], e[5]));
        }
    }

    @Test
    void eachTypeCarriesItsInfo() {
        try (Host h = new Host()) {
            h.inject(h.error(12, 0, 20 << 24, 8, DUT_MAC, DUT));
            h.inject(h.error(11, 0, 0x1234, 8, DUT_MAC, DUT));
            h.inject(h.error(3, 13, 0x1234, 8, DUT_MAC, DUT));
            h.inject(h.error(5, 1, Ipv4Addr.parse("198.18.0.3"), 8, DUT_MAC, DUT));
            assertEquals(4, h.rec.errs.size());
            assertEquals(20, h.rec.errs.get(0)[2], "parameter problem: the pointer");
            assertEquals(0, h.rec.errs.get(1)[2], "time exceeded: nothing");
            assertEquals(0, h.rec.errs.get(2)[2], "unreachable other than frag needed: nothing");
            assertEquals(Ipv4Addr.parse("198.18.0.3"), h.rec.errs.get(3)[2], "redirect: the gateway");
        }
    }

    @Test
    void whatCannotBeAttributedReachesNobody() {
        try (Host h = new Host()) {
            h.inject(h.error(4, 0, 0, 8, DUT_MAC, DUT));
            h.inject(h.error(3, 16, 0, 8, DUT_MAC, DUT));
            assertTrue(h.rec.errs.isEmpty(), "source quench and unknown unreachable codes are heard by nobody");
            long inErrors = h.s.mib().get(Mib.IcmpInErrors);
            h.inject(h.error(3, 1, 0, 4, DUT_MAC, DUT));
            assertEquals(inErrors + 1, h.s.mib().get(Mib.IcmpInErrors), "a quote without 8 transport bytes");
            h.inject(h.error(3, 1, 0, 8, 0xffff_ffff_ffffL, "198.18.0.255"));
            assertEquals(inErrors + 2, h.s.mib().get(Mib.IcmpInErrors), "an error sent to a broadcast address");
            assertTrue(h.rec.errs.isEmpty());
        }
    }

    /** Sends a local datagram of {@code l4Len} bytes to {@link #FAR} with DF; returns the frames that left. */
    static List<byte[]> sendLocal(Host h, int l4Len, boolean df) {
        int before = h.w.received.size();
        Packet p = IpOutput.allocate(l4Len);
        Route rt = h.s.ipOutput().routeOutput(Ipv4Addr.parse(FAR));
        h.s.ipOutput().sendLocal(p, rt, Ipv4Addr.parse(DUT), Ipv4Addr.parse(FAR), PROTO, 0, 64, df);
        h.net.settle();
        List<byte[]> out = new ArrayList<>();
        for (byte[] f : h.w.frames().subList(before, h.w.received.size())) {
            if ((f[14 + Ipv4Packet.PROTOCOL] & 0xff) == PROTO) {
                out.add(f);
            }
        }
        return out;
    }

    @Test
    void thePathMtuOnlyFallsHasAFloorAndLapses() {
        try (Host h = new Host()) {
            IpOutput out = h.s.ipOutput();
            int far = Ipv4Addr.parse(FAR);
            Route rt = out.routeOutput(far);
            assertEquals(1500, out.pathMtu(rt, far));
            assertEquals(1300, out.updatePmtu(rt, far, 1300));
            assertEquals(1300, out.updatePmtu(rt, far, 1400), "never raised by an ICMP message");
            assertEquals(1300, out.pathMtu(rt, far));
            assertEquals(1500, out.pathMtu(rt, Ipv4Addr.parse("198.18.6.1")), "per destination");

            // A DF datagram that no longer fits is refused locally, with fragmentation needed to ourselves.
            long unreach = h.s.mib().get(Mib.IcmpOutDestUnreachs);
            assertTrue(sendLocal(h, 1400, true).isEmpty());
            assertEquals(unreach + 1, h.s.mib().get(Mib.IcmpOutDestUnreachs));
            List<byte[]> fits = sendLocal(h, 1280, true);
            assertEquals(1, fits.size());
            assertTrue((Frames.u16(fits.get(0), 14 + Ipv4Packet.FRAG) & Ipv4Packet.FLAG_DF) != 0);
            // Without DF it is fragmented to the path MTU.
            List<byte[]> frags = sendLocal(h, 1400, false);
            assertEquals(2, frags.size());
            assertEquals(1300, Frames.u16(frags.get(0), 14 + Ipv4Packet.TOTAL_LEN));

            // Below the floor: 552, locked, and DF is dropped so routers may fragment.
            assertEquals(552, out.updatePmtu(rt, far, 296));
            List<byte[]> locked = sendLocal(h, 500, true);
            assertEquals(1, locked.size());
            assertEquals(0, Frames.u16(locked.get(0), 14 + Ipv4Packet.FRAG) & Ipv4Packet.FLAG_DF);

            // net.ipv4.route.mtu_expires (600 s) later the device's MTU applies again.
            h.net.run(601_000_000_000L);
            assertEquals(1500, out.pathMtu(rt, far));
            assertEquals(1, sendLocal(h, 1400, true).size());
        }
    }
}
