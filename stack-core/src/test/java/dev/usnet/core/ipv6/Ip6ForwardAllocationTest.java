package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.util.ResourceLeakDetector;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * The forwarding path of IPv6 allocates nothing per packet: a router between two tester ends forwards a batch of
 * prepared frames (made before measuring); the heap allocation of the whole run, both namespaces' receive paths
 * included, stays below one object per packet, as for an equal batch forwarded over IPv4.
 */
class Ip6ForwardAllocationTest {
    private static final int BATCH = 2000;
    private static final long R_IN = 0x02_00_00_00_00_01L;
    private static final long R_OUT = 0x02_00_00_00_00_02L;
    private static final long H1 = 0x02_00_00_00_00_0aL;
    private static final long H2 = 0x02_00_00_00_00_0bL;

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private record Router(TestNet net, NetStack r, VethEnd hostIn) {}

    private static Router router(TestNet net) {
        NetStack r = net.ns("r");
        NetStack h = net.ns("h");
        r.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        r.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        r.knobs().set("net.ipv6.conf.all.forwarding", "1");
        r.knobs().set("net.ipv4.ip_forward", "1");
        VethEnd[] in = VethEnd.createPair(r, "r1", R_IN, h, "h1", H1);
        VethEnd[] out = VethEnd.createPair(r, "r2", R_OUT, h, "h2", H2);
        for (VethEnd[] p : new VethEnd[][] {in, out}) {
            p[1].setRxHandler((dev, pkt) -> {
                pkt.release();
                return true;
            });
            p[0].setUp(true);
            p[1].setUp(true);
        }
        r.ipv6().addAddress(in[0], Ipv6Addr.parse("2001:db8:1::1"), 64, false);
        r.ipv6().addAddress(out[0], Ipv6Addr.parse("2001:db8:2::1"), 64, false);
        Ipv6Addr h2 = Ipv6Addr.parse("2001:db8:2::2");
        r.ipv6().neigh().addPermanent(out[0], h2.hi(), h2.lo(), H2);
        TestNet.addr(r, in[0], "198.18.1.1/24");
        TestNet.addr(r, out[0], "198.18.2.1/24");
        r.neigh().addPermanent(out[0], dev.usnet.core.wire.Ipv4Addr.parse("198.18.2.2"), H2);
        return new Router(net, r, in[1]);
    }

    private static Packet v6Frame() {
        int len = EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + 16;
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        var b = p.buf();
        int s = p.start();
        b.writerIndex(s + len);
        EthernetFrame.write(b, s, R_IN, H1, EthernetFrame.ETH_P_IPV6);
        Ipv6Addr src = Ipv6Addr.parse("2001:db8:1::2");
        Ipv6Addr dst = Ipv6Addr.parse("2001:db8:2::2");
        Ipv6Packet.writeHeader(b, s + 14, 0, 0, 16, 59, 64, src.hi(), src.lo(), dst.hi(), dst.lo());
        return p;
    }

    private static Packet v4Frame() {
        int len = EthernetFrame.HEADER_LEN + 20 + 16;
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        var b = p.buf();
        int s = p.start();
        b.writerIndex(s + len);
        EthernetFrame.write(b, s, R_IN, H1, EthernetFrame.ETH_P_IP);
        dev.usnet.core.wire.Ipv4Packet.writeHeader(b, s + 14, 0, 36, 1, 0, 64, 253,
                dev.usnet.core.wire.Ipv4Addr.parse("198.18.1.2"), dev.usnet.core.wire.Ipv4Addr.parse("198.18.2.2"));
        return p;
    }

    /** Bytes allocated while {@code BATCH} prepared frames are sent, forwarded and received. */
    private static long forwardBatch(Router rt, boolean v6) {
        Packet[] frames = new Packet[BATCH];
        for (int i = 0; i < BATCH; i++) {
            frames[i] = v6 ? v6Frame() : v4Frame();
        }
        long before = allocated();
        for (Packet p : frames) {
            rt.hostIn.transmit(p);
            rt.net.settle();
        }
        return allocated() - before;
    }

    @Test
    void forwardingAllocatesNoMorePerPacketThanIpv4Does() {
        // The leak detector (PARANOID in tests) records every buffer access: it would be all that is measured.
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try (TestNet net = new TestNet()) {
            Router rt = router(net);
            forwardBatch(rt, true);
            forwardBatch(rt, false);
            long v6 = forwardBatch(rt, true);
            long v4 = forwardBatch(rt, false);
            assertEquals(2L * BATCH, rt.r.mib().get(Mib.Ip6OutForwDatagrams), "every IPv6 frame forwarded");
            assertEquals(2L * BATCH, rt.r.mib().get(Mib.IpForwDatagrams), "every IPv4 frame forwarded");
            // Less than 8 bytes a packet is less than one object in every packet (the smallest is 16 bytes): what
            // remains is the scheduler's and the JVM's own, the same for IPv4.
            String msg = "IPv6 " + v6 + " bytes, IPv4 " + v4 + " bytes for " + BATCH + " packets";
            assertTrue(v6 < 8L * BATCH, msg);
            assertTrue(v6 <= v4 + 2L * BATCH, msg);
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }
}
