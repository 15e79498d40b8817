package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** UDP sockets over IPv6: bind, sendto from a selected source, delivery by port, the mandatory checksum. */
class Udp6SocketTest {
    private static final long MS = 1_000_000L;
    private static final Ipv6Addr A = Ipv6Addr.parse("2001:db8::1");
    private static final Ipv6Addr B = Ipv6Addr.parse("2001:db8::2");

    private record Got(Ipv6Addr from, int port, int len, byte first) {}

    private static void ipv6On(NetStack s) {
        s.knobs().set("net.ipv6.conf.all.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
    }

    private static List<Got> collect(Udp6Socket s) {
        List<Got> got = new ArrayList<>();
        s.setReceiver((sock, hi, lo, port, data, off, len) ->
                got.add(new Got(new Ipv6Addr(hi, lo), port, len, len > 0 ? data.getByte(off) : 0)));
        return got;
    }

    @Test
    void datagramsGoBothWaysAndAnUnboundPortIsUnreachable() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            ipv6On(a);
            ipv6On(b);
            VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
            p[0].setUp(true);
            p[1].setUp(true);
            a.ipv6().addAddress(p[0], A, 64, true);
            b.ipv6().addAddress(p[1], B, 64, true);
            Udp6Socket client = a.ipv6().udp().bind(Ipv6Addr.ANY, 0);
            Udp6Socket server = b.ipv6().udp().bind(B, 9000);
            List<Got> atServer = collect(server);
            List<Got> atClient = collect(client);
            ByteBuf data = Unpooled.buffer(100).writeZero(100).setByte(0, 0x42);
            for (int i = 0; i < 3; i++) {
                assertEquals(Udp6Socket.SENT, client.sendTo(B.hi(), B.lo(), null, 9000, data, 0, 100));
                net.run(10 * MS);
            }
            assertEquals(List.of(new Got(A, client.localPort(), 100, (byte) 0x42),
                    new Got(A, client.localPort(), 100, (byte) 0x42), new Got(A, client.localPort(), 100, (byte) 0x42)),
                    atServer);
            assertEquals(3, b.mib().get(Mib.Udp6InDatagrams));
            assertEquals(0, b.mib().get(Mib.Udp6InCsumErrors), "the sender's checksum holds");
            assertEquals(Udp6Socket.SENT, server.sendTo(A.hi(), A.lo(), null, client.localPort(), data, 0, 1));
            net.run(10 * MS);
            assertEquals(List.of(new Got(B, 9000, 1, (byte) 0x42)), atClient);
            assertEquals(Udp6Socket.SENT, client.sendTo(B.hi(), B.lo(), null, 9001, data, 0, 1));
            net.run(10 * MS);
            assertEquals(1, b.mib().get(Mib.Udp6NoPorts));
            assertEquals(1, a.mib().get(Mib.Icmp6InDestUnreachs), "port unreachable came back");
            server.close();
            assertEquals(Udp6Socket.SENT, client.sendTo(B.hi(), B.lo(), null, 9000, data, 0, 1));
            net.run(10 * MS);
            assertEquals(3, atServer.size(), "a closed socket hears nothing");
            assertEquals(2, b.mib().get(Mib.Udp6NoPorts));
            Ipv6Addr far = Ipv6Addr.parse("fd00::1");
            assertEquals(Udp6Socket.NO_ROUTE, client.sendTo(far.hi(), far.lo(), null, 9000, data, 0, 1));
            data.release();
        }
    }

    /** A UDP datagram from {@code src} to B port 9000 with checksum {@code csum}, or the right one when negative. */
    private static byte[] frame(long ethDst, Ipv6Addr src, int csum) {
        int ulen = 8 + 4;
        ByteBuf b = Unpooled.buffer(EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + ulen);
        b.writerIndex(EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + ulen);
        EthernetFrame.write(b, 0, ethDst, 0x02ee_0000_0099L, EthernetFrame.ETH_P_IPV6);
        int ip = EthernetFrame.HEADER_LEN;
        Ipv6Packet.writeHeader(b, ip, 0, 0, ulen, Ipv6Packet.NEXTHDR_UDP, 64, src.hi(), src.lo(), B.hi(), B.lo());
        int t = ip + Ipv6Packet.HEADER_LEN;
        b.setShort(t, 5555);
        b.setShort(t + 2, 9000);
        b.setShort(t + 4, ulen);
        b.setShort(t + 6, 0);
        b.setInt(t + 8, 0x01020304);
        int right = Checksum.finish(Checksum.add(b, t, ulen,
                Ipv6Packet.pseudoHeaderSum(b, ip, ulen, Ipv6Packet.NEXTHDR_UDP)));
        b.setShort(t + 6, csum >= 0 ? csum : right);
        byte[] out = new byte[b.writerIndex()];
        b.getBytes(0, out);
        b.release();
        return out;
    }

    @Test
    void aZeroOrWrongChecksumIsDroppedAndCounted() {
        try (TestNet net = new TestNet()) {
            NetStack b = net.ns("b");
            ipv6On(b);
            TestNet.Wire w = net.wire(b, "eth0", 0x0200_0000_0002L);
            b.ipv6().addAddress(w.dutEnd, B, 64, true);
            List<Got> got = collect(b.ipv6().udp().bind(Ipv6Addr.ANY, 9000));
            Ipv6Addr src = Ipv6Addr.parse("2001:db8::7");
            w.send(frame(0x0200_0000_0002L, src, -1));
            net.run(MS);
            assertEquals(List.of(new Got(src, 5555, 4, (byte) 1)), got);
            w.send(frame(0x0200_0000_0002L, src, 0));
            w.send(frame(0x0200_0000_0002L, src, 0x1234));
            net.run(MS);
            assertEquals(1, got.size(), "no checksum (zero) is an error over IPv6, and so is a wrong one");
            assertEquals(2, b.mib().get(Mib.Udp6InCsumErrors));
            assertEquals(2, b.mib().get(Mib.Udp6InErrors));
        }
    }
}
