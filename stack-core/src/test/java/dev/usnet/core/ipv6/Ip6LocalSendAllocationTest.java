package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * A namespace's own IPv6 traffic allocates no more per packet than its IPv4 traffic: echo requests from a ping
 * socket and datagrams from a UDP socket, to a neighbour known in advance, against datagrams from an IPv4 UDP
 * socket (about 256 bytes a packet each when written: the packet's own objects, the same for both families).
 */
class Ip6LocalSendAllocationTest {
    private static final int BATCH = 2000;
    private static final long PEER = 0x02_00_00_00_00_0bL;
    private static final Ipv6Addr DST = Ipv6Addr.parse("2001:db8::2");
    private static final int DST4 = Ipv4Addr.parse("198.18.0.2");

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private enum Kind { ECHO6, UDP6, UDP4 }

    private static long batch(TestNet net, NetStack a, Udp6Socket s6, UdpSocket s4, ByteBuf data, Kind k) {
        long before = allocated();
        for (int i = 0; i < BATCH; i++) {
            switch (k) {
                case ECHO6 -> a.ipv6().icmp().sendEcho(DST.hi(), DST.lo(), null, 1, i & 0xffff, data, 0, 32, 0);
                case UDP6 -> s6.sendTo(DST.hi(), DST.lo(), null, 9, data, 0, 32);
                case UDP4 -> s4.sendTo(DST4, 9, data, 0, 32);
            }
            net.settle();
        }
        return allocated() - before;
    }

    @Test
    void echoesAndDatagramsOverIpv6AllocateNoMorePerPacketThanIpv4Datagrams() {
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack h = net.ns("h");
            a.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            a.knobs().set("net.ipv6.conf.default.accept_dad", "0");
            // A host sends router solicitations at link up; none among the frames looked at here.
            a.knobs().set("net.ipv6.conf.default.router_solicitations", "0");
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x02_00_00_00_00_0aL, h, "eth0", PEER);
            p[1].setRxHandler((dev, pkt) -> {
                pkt.release();
                return true;
            });
            p[0].setUp(true);
            p[1].setUp(true);
            a.ipv6().addAddress(p[0], Ipv6Addr.parse("2001:db8::1"), 64, true);
            a.ipv6().neigh().addPermanent(p[0], DST.hi(), DST.lo(), PEER);
            TestNet.addr(a, p[0], "198.18.0.1/24");
            a.neigh().addPermanent(p[0], DST4, PEER);
            Udp6Socket s6 = a.ipv6().udp().bind(Ipv6Addr.ANY, 0);
            UdpSocket s4 = a.udp().bind(0, 0);
            ByteBuf data = Unpooled.directBuffer(32).writeZero(32);
            for (Kind k : Kind.values()) {
                batch(net, a, s6, s4, data, k);
            }
            long echo6 = batch(net, a, s6, s4, data, Kind.ECHO6);
            long udp6 = batch(net, a, s6, s4, data, Kind.UDP6);
            long udp4 = batch(net, a, s6, s4, data, Kind.UDP4);
            data.release();
            assertEquals(2L * BATCH, a.mib().get(Mib.Icmp6OutEchos));
            assertEquals(2L * BATCH, a.mib().get(Mib.Udp6OutDatagrams));
            String msg = "echo6 " + echo6 + ", udp6 " + udp6 + ", udp4 " + udp4 + " bytes for " + BATCH + " packets each";
            // Less than 8 bytes more a packet is less than one object more in every packet.
            assertTrue(echo6 <= udp4 + 8L * BATCH, msg);
            assertTrue(udp6 <= udp4 + 8L * BATCH, msg);
        } finally {
            ResourceLeakDetector.setLevel(level);
        }
    }
}
