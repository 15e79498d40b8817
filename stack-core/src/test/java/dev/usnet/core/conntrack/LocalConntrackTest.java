package dev.usnet.core.conntrack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the router itself sends and receives: output tracking, loopback, and no allocation on the packet path. */
class LocalConntrackTest {
    record In(ConntrackEntry ct, int ctinfo, int proto) {}

    @Test
    void aLocalFlowIsTrackedAtOutputAndItsAnswerAtPreroutingAndLoopbackKeepsItsEntry() {
        try (CtRouter t = new CtRouter()) {
            List<In> input = new ArrayList<>();
            t.r.ipv4().netfilter().hooks().register(NfHook.LOCAL_IN, NfIpPriority.FILTER, (p, st) -> {
                Ipv4Packet ip = new Ipv4Packet().wrap(p.buf(), p.network());
                input.add(new In(p.nfct(), p.ctinfo(), ip.protocol()));
                return NfVerdict.ACCEPT;
            });
            int self = Ipv4Addr.parse("198.18.2.1");
            UdpSocket s = t.r.udp().bind(0, 0);
            ByteBuf data = Unpooled.buffer(10).writeZero(10);
            try {
                s.sendTo(CtRouter.A2, 53, data, 0, 10);
                t.net.settle();
                assertEquals(1, t.w2.received.size());
                assertEquals(1, t.table().count(), "confirmed at postrouting");
                ConntrackEntry ct = t.table().entries().getFirst();
                assertEquals(self, ct.tuple(ConntrackEntry.ORIGINAL).src());
                t.fromH2(t.ip(CtRouter.H2, CtRouter.R2, CtRouter.A2, self, Ipv4Packet.PROTO_UDP,
                        CtRouter.udpDatagram(CtRouter.A2, self, 53, s.localPort(), 4), 0));
                assertEquals(1, input.size());
                assertSame(ct, input.getFirst().ct());
                assertEquals(IpConntrackInfo.ESTABLISHED_REPLY, input.getFirst().ctinfo());

                // To itself through lo: tracked once at output; prerouting on lo leaves the entry alone. The port
                // unreachable it causes is related to it, the answer's way.
                input.clear();
                s.sendTo(self, 9999, data, 0, 10);
                t.net.settle();
                assertEquals(2, input.size(), input.toString());
                assertEquals(IpConntrackInfo.NEW, input.get(0).ctinfo());
                assertNotNull(input.get(0).ct());
                assertEquals(Ipv4Packet.PROTO_ICMP, input.get(1).proto());
                assertSame(input.get(0).ct(), input.get(1).ct());
                assertEquals(IpConntrackInfo.RELATED_REPLY, input.get(1).ctinfo());
                assertEquals(2, t.table().count());
                assertEquals(0, t.core.stats().invalid() + t.core.stats().error());
            } finally {
                data.release();
                s.close();
            }
        }
    }

    @Test
    void aPacketOfAnEstablishedConnectionAllocatesNothing() {
        try (CtRouter t = new CtRouter()) {
            ConntrackEntry ct = TcpConntrackTest.handshake(t);
            byte[] f = t.tcp12(40000, 80, 1001, 5001, TcpSegment.ACK_FLAG, 502, CtRouter.NO_OPTS, 0);
            // A plain heap buffer: the tests' leak detector (paranoid) records every access to pooled ones.
            Packet p = Packet.wrap(Unpooled.wrappedBuffer(f));
            p.setNetwork(p.start() + 14);
            p.setTransport(p.start() + 34);
            NfHooks hooks = t.r.ipv4().netfilter().hooks();
            var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().threadId();
            try {
                for (int round = 0; round < 3; round++) {
                    long before = bean.getThreadAllocatedBytes(tid);
                    for (int i = 0; i < 20_000; i++) {
                        p.setNfct(null, 0);
                        if (hooks.run(NfHook.PRE_ROUTING, p, t.w1.dutEnd, null) != p) {
                            throw new AssertionError("the packet did not pass");
                        }
                    }
                    long used = bean.getThreadAllocatedBytes(tid) - before;
                    assertSame(ct, p.nfct());
                    if (round == 2) {
                        assertTrue(used < 20_000, "bytes allocated for 20000 packets: " + used);
                    }
                }
            } finally {
                p.release();
            }
        }
    }
}
