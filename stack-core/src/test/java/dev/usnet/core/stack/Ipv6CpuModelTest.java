package dev.usnet.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.ipv6.Udp6Socket;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import org.junit.jupiter.api.Test;

/** The CPU model charges IPv6 forwarding and local delivery per datagram, through the same knobs as IPv4's. */
class Ipv6CpuModelTest {
    private static final long R1 = 0x0200_0000_0101L;
    private static final long R2 = 0x0200_0000_0102L;
    private static final long H1 = 0x0200_0000_aa01L;
    private static final long H2 = 0x0200_0000_bb02L;
    private static final Ipv6Addr R1_ADDR = Ipv6Addr.parse("2001:db8:1::1");
    private static final Ipv6Addr H1_ADDR = Ipv6Addr.parse("2001:db8:1::2");
    private static final Ipv6Addr H2_ADDR = Ipv6Addr.parse("2001:db8:2::2");

    /** A router r between wires r1 and r2, IPv6 forwarding on, the hosts behind them static ND entries. */
    private static final class Router6 implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack r = net.ns("r");
        final TestNet.Wire w1 = net.wire(r, "r1", R1);
        final TestNet.Wire w2 = net.wire(r, "r2", R2);

        Router6(String... knobs) {
            r.knobs().set("net.ipv6.conf.all.disable_ipv6", "0");
            r.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            r.knobs().set("net.ipv6.conf.default.accept_dad", "0");
            r.knobs().set("net.ipv6.conf.all.forwarding", "1");
            r.ipv6().addAddress(w1.dutEnd, R1_ADDR, 64, true);
            r.ipv6().addAddress(w2.dutEnd, Ipv6Addr.parse("2001:db8:2::1"), 64, true);
            r.ipv6().neigh().addPermanent(w1.dutEnd, H1_ADDR.hi(), H1_ADDR.lo(), H1);
            r.ipv6().neigh().addPermanent(w2.dutEnd, H2_ADDR.hi(), H2_ADDR.lo(), H2);
            for (int i = 0; i < knobs.length; i += 2) {
                r.knobs().set(knobs[i], knobs[i + 1]);
            }
            net.settle();
        }

        /** Sends {@code n} UDP datagrams from the host behind r1 to {@code dst} port 9000, then drains. */
        void offer(int n, Ipv6Addr dst) {
            byte[] f = Frames.udp6(H1, R1, H1_ADDR, dst, 5555, 9000, new byte[100]);
            for (int i = 0; i < n; i++) {
                w1.send(f);
                if (i % 500 == 499) {
                    net.settle();
                }
            }
            net.run(1_000_000_000L);
        }

        @Override
        public void close() {
            net.close();
        }
    }

    @Test
    void eachForwardedIpv6DatagramIsChargedIpFwdNs() {
        try (Router6 t = new Router6("usnet.cpu.model", "1", "usnet.cpu.l2_rx_ns", "70", "usnet.cpu.ip_fwd_ns", "330")) {
            t.offer(1000, H2_ADDR);
            assertEquals(1000, t.r.mib().get(Mib.Ip6OutForwDatagrams));
            assertEquals(1000, t.w2.received.stream().filter(s -> s.data().length > 60
                    && (s.data()[EthernetFrame.HEADER_LEN + Ipv6Packet.NEXT_HEADER] & 0xff) == Ipv6Packet.NEXTHDR_UDP).count());
            assertEquals(0, t.r.cow().copies());
            assertEquals(1000L * (70 + 330), t.r.cpu().modelNanos(), "frame received + datagram forwarded, each time");
        }
    }

    @Test
    void eachIpv6DatagramDeliveredLocallyIsChargedLocalDeliverNs() {
        try (Router6 t = new Router6("usnet.cpu.model", "1", "usnet.cpu.l2_rx_ns", "70", "usnet.cpu.local_deliver_ns",
                "210")) {
            Udp6Socket s = t.r.ipv6().udp().bind(Ipv6Addr.ANY, 9000);
            t.offer(400, R1_ADDR);
            assertEquals(400, s.rxDatagrams());
            assertEquals(400, t.r.mib().get(Mib.Ip6InDelivers));
            assertEquals(0, t.r.mib().get(Mib.Ip6OutForwDatagrams));
            assertEquals(400L * (70 + 210), t.r.cpu().modelNanos(), "frame received + datagram delivered, each time");
        }
    }

    @Test
    void withTheModelOffIpv6WorkIsNotCharged() {
        try (Router6 t = new Router6()) {
            t.offer(100, H2_ADDR);
            assertEquals(100, t.r.mib().get(Mib.Ip6OutForwDatagrams));
            assertEquals(0, t.r.cpu().modelNanos());
        }
    }
}
