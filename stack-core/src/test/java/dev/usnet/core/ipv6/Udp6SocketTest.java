package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * UDP sockets over IPv6: bind, sendto from a selected source, delivery by port, the mandatory checksum, connect, and
 * the ICMPv6 errors a socket hears.
 */
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
            pair(a, b);
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
        byte[] f = Frames.udp6(0x02ee_0000_0099L, ethDst, src, B, 5555, 9000, new byte[] {1, 2, 3, 4});
        if (csum >= 0) {
            int at = EthernetFrame.HEADER_LEN + Ipv6Packet.HEADER_LEN + 6;
            f[at] = (byte) (csum >> 8);
            f[at + 1] = (byte) csum;
        }
        return f;
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

    /** a's eth0 (A) and b's eth0 (B), a veth pair, IPv6 on without DAD. */
    private static VethEnd[] pair(NetStack a, NetStack b) {
        ipv6On(a);
        ipv6On(b);
        VethEnd[] p = VethEnd.createPair(a, "eth0", 0x0200_0000_0001L, b, "eth0", 0x0200_0000_0002L);
        p[0].setUp(true);
        p[1].setUp(true);
        a.ipv6().addAddress(p[0], A, 64, true);
        b.ipv6().addAddress(p[1], B, 64, true);
        return p;
    }

    @Test
    void aConnectedSocketHearsPortUnreachableAsEconnrefusedAndAnUnconnectedOneDoesNot() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            pair(a, b);
            ByteBuf data = Unpooled.buffer(10).writeZero(10);
            Udp6Socket unconnected = a.ipv6().udp().bind(Ipv6Addr.ANY, 0);
            assertEquals(Udp6Socket.SENT, unconnected.sendTo(B.hi(), B.lo(), null, 9001, data, 0, 10));
            net.run(10 * MS);
            assertEquals(1, a.mib().get(Mib.Icmp6InDestUnreachs));
            assertEquals(0, unconnected.takeError(), "without IPV6_RECVERR an unconnected socket is told nothing");
            assertEquals(Udp6Socket.SENT, unconnected.sendTo(B.hi(), B.lo(), null, 9001, data, 0, 10));

            Udp6Socket connected = a.ipv6().udp().bind(Ipv6Addr.ANY, 0);
            List<Integer> heard = new ArrayList<>();
            connected.setErrorListener((sock, errno) -> heard.add(errno));
            connected.connect(B, 9001);
            assertEquals(Udp6Socket.SENT, connected.send(null, data, 0, 10));
            net.run(1000 * MS);
            assertEquals(List.of(Icmpv6ErrorConvert.ECONNREFUSED), heard, "sk_error_report at once");
            assertEquals(Udp6Socket.PENDING_ERROR, connected.send(null, data, 0, 10), "the next send reports it instead");
            assertEquals(Icmpv6ErrorConvert.ECONNREFUSED, connected.lastReportedError());
            assertEquals(0, connected.takeError(), "reported once, then cleared");
            long sent = a.mib().get(Mib.Udp6OutDatagrams);
            assertEquals(Udp6Socket.SENT, connected.send(null, data, 0, 10));
            assertEquals(sent + 1, a.mib().get(Mib.Udp6OutDatagrams));
            data.release();
        }
    }

    @Test
    void aConnectedSocketTakesDatagramsFromItsPeerOnly() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            pair(a, b);
            ByteBuf data = Unpooled.buffer(4).writeZero(4);
            Udp6Socket server = b.ipv6().udp().bind(Ipv6Addr.ANY, 9000);
            List<Got> got = collect(server);
            server.connect(A, 7000);
            Udp6Socket right = a.ipv6().udp().bind(Ipv6Addr.ANY, 7000);
            Udp6Socket wrong = a.ipv6().udp().bind(Ipv6Addr.ANY, 7001);
            assertEquals(Udp6Socket.SENT, wrong.sendTo(B.hi(), B.lo(), null, 9000, data, 0, 4));
            net.run(10 * MS);
            assertEquals(List.of(), got, "not from the connected peer: no socket takes it");
            assertEquals(1, b.mib().get(Mib.Udp6NoPorts));
            assertEquals(Udp6Socket.SENT, right.sendTo(B.hi(), B.lo(), null, 9000, data, 0, 4));
            net.run(10 * MS);
            assertEquals(List.of(new Got(A, 7000, 4, (byte) 0)), got);
            data.release();
        }
    }

    /**
     * An ICMPv6 error from a router {@code 2001:db8::99} to B quoting a UDP datagram B sent from {@code srcPort} to
     * {@code far} port 53.
     */
    private static byte[] errorAbout(int type, int code, int info, int srcPort, Ipv6Addr far) {
        int quotedLen = Ipv6Packet.HEADER_LEN + 8 + 4;
        ByteBuf q = Unpooled.buffer(Icmpv6Packet.HEADER_LEN + quotedLen).writerIndex(Icmpv6Packet.HEADER_LEN + quotedLen);
        q.setByte(0, type);
        q.setByte(1, code);
        q.setInt(4, info);
        int ip = Icmpv6Packet.HEADER_LEN;
        Ipv6Packet.writeHeader(q, ip, 0, 0, 12, Ipv6Packet.NEXTHDR_UDP, 63, B.hi(), B.lo(), far.hi(), far.lo());
        q.setShort(ip + Ipv6Packet.HEADER_LEN, srcPort);
        q.setShort(ip + Ipv6Packet.HEADER_LEN + 2, 53);
        q.setShort(ip + Ipv6Packet.HEADER_LEN + 4, 12);
        byte[] body = new byte[q.writerIndex()];
        q.getBytes(0, body);
        q.release();
        return Ip6Frames.icmp(0x0200_0000_0002L, 0x02ee_0000_0099L, Ipv6Addr.parse("2001:db8::99"), B, 64, body);
    }

    @Test
    void packetTooBigIsKeptAsThePathMtuAndIsAHardErrorWhileSoftErrorsPass() {
        try (TestNet net = new TestNet()) {
            NetStack b = net.ns("b");
            ipv6On(b);
            TestNet.Wire w = net.wire(b, "eth0", 0x0200_0000_0002L);
            b.ipv6().addAddress(w.dutEnd, B, 64, true);
            Ipv6Addr far = Ipv6Addr.parse("2001:db8::7");
            Udp6Socket s = b.ipv6().udp().bind(Ipv6Addr.ANY, 4000);
            s.connect(far, 53);
            List<Integer> heard = new ArrayList<>();
            s.setErrorListener((sock, errno) -> heard.add(errno));

            w.send(errorAbout(Icmpv6Packet.TIME_EXCEED, Icmpv6Packet.CODE_EXC_HOPLIMIT, 0, 4000, far));
            w.send(errorAbout(Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_ADDR_UNREACH, 0, 4000, far));
            net.run(MS);
            assertEquals(List.of(), heard, "hop limit exceeded and address unreachable are soft");
            assertEquals(0, s.reportedPathMtu());

            w.send(errorAbout(Icmpv6Packet.PKT_TOOBIG, 0, 1400, 4000, far));
            net.run(MS);
            assertEquals(1400, s.reportedPathMtu());
            assertEquals(List.of(Icmpv6ErrorConvert.EMSGSIZE), heard, "with path MTU discovery the datagram is lost: hard");
            w.send(errorAbout(Icmpv6Packet.PKT_TOOBIG, 0, 1500, 4000, far));
            w.send(errorAbout(Icmpv6Packet.PKT_TOOBIG, 0, 600, 4000, far));
            net.run(MS);
            assertEquals(1280, s.reportedPathMtu(), "never raised, and never below IPv6's minimum MTU");

            w.send(errorAbout(Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_ADM_PROHIBITED, 0, 4000, far));
            net.run(MS);
            assertEquals(Icmpv6ErrorConvert.EACCES, heard.getLast());
            assertEquals(Icmpv6ErrorConvert.EACCES, s.takeError(), "the last error is the pending one");

            long inErrors = b.mib().get(Mib.Icmp6InErrors);
            w.send(errorAbout(Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_PORT_UNREACH, 0, 4001, far));
            w.send(errorAbout(Icmpv6Packet.DEST_UNREACH, Icmpv6Packet.CODE_PORT_UNREACH, 0, 4000,
                    Ipv6Addr.parse("2001:db8::8")));
            net.run(MS);
            assertEquals(inErrors + 2, b.mib().get(Mib.Icmp6InErrors), "no socket sent those: counted as Linux does");
            assertEquals(0, s.takeError(), "an error about another peer's datagram is not this connected socket's");
        }
    }
}
