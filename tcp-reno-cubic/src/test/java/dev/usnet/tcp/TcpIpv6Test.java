package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * TCP over IPv6 end to end in virtual time: client 2001:db8:1::2 - router (2001:db8:1::1, 2001:db8:2::1) - server
 * 2001:db8:2::2, each link dual-stack (198.18.0.0/24 and 198.18.1.0/24 beside), the router forwarding both families.
 */
class TcpIpv6Test {
    static final Ipv6Addr CLIENT6 = Ipv6Addr.parse("2001:db8:1::2");
    static final Ipv6Addr SERVER6 = Ipv6Addr.parse("2001:db8:2::2");
    static final int CLIENT4 = Ipv4Addr.parse("198.18.0.1");
    static final int SERVER4 = Ipv4Addr.parse("198.18.1.2");

    /** An IPv6 TCP segment seen on a wire: its addresses, ports, flags, payload length, MSS option, checksum verdict. */
    record Seg(long srcLo, int sport, int dport, int flags, int payload, int mss, boolean checksumOk, int hopLimit) {}

    static final class Path implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack client = net.ns("client");
        final NetStack router = net.ns("router");
        final NetStack server = net.ns("server");
        final VethEnd[] left;
        final VethEnd[] right;
        final Tcp clientTcp;
        final Tcp serverTcp;
        /** IPv6 TCP segments the client's device sent and the server's device received. */
        final List<Seg> fromClient = new ArrayList<>();
        final List<Seg> atServer = new ArrayList<>();
        /** IPv6 TCP segments the client's device received. */
        final List<Seg> toClient = new ArrayList<>();

        Path() {
            for (NetStack s : List.of(client, router, server)) {
                s.knobs().set("net.ipv6.conf.all.disable_ipv6", "0");
                s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
                s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
                // lo came up before IPv6 was on: it gets ::1 now, as a topology's namespaces do.
                s.ipv6().linkChanged(s.loopback());
            }
            router.knobs().set("net.ipv6.conf.all.forwarding", "1");
            router.knobs().set("net.ipv4.ip_forward", "1");
            left = net.link(client, "eth0", "198.18.0.1/24", router, "r0", "198.18.0.254/24");
            right = net.link(router, "r1", "198.18.1.254/24", server, "eth0", "198.18.1.2/24");
            client.ipv6().addAddress(left[0], CLIENT6, 64, true);
            router.ipv6().addAddress(left[1], Ipv6Addr.parse("2001:db8:1::1"), 64, true);
            router.ipv6().addAddress(right[0], Ipv6Addr.parse("2001:db8:2::1"), 64, true);
            server.ipv6().addAddress(right[1], SERVER6, 64, true);
            client.ipv6().fib().add(new Route6(Ipv6Addr.ANY, 0, RouteType.UNICAST, Ipv6Addr.parse("2001:db8:1::1"),
                    left[0], Route6.METRIC_USER, false));
            server.ipv6().fib().add(new Route6(Ipv6Addr.ANY, 0, RouteType.UNICAST, Ipv6Addr.parse("2001:db8:2::1"),
                    right[1], Route6.METRIC_USER, false));
            client.routes().add(new Route(0, 0, RouteType.UNICAST, Ipv4Addr.parse("198.18.0.254"), left[0], 0, 0, false));
            server.routes().add(new Route(0, 0, RouteType.UNICAST, Ipv4Addr.parse("198.18.1.254"), right[1], 0, 0, false));
            left[0].addTap((dev, p, tx, now) -> {
                parse(p.buf(), p.start(), p.length(), tx ? fromClient : toClient);
            });
            right[1].addTap((dev, p, tx, now) -> {
                if (!tx) {
                    parse(p.buf(), p.start(), p.length(), atServer);
                }
            });
            clientTcp = Tcp.install(client);
            serverTcp = Tcp.install(server);
            net.run(10_000_000L);
        }

        long now() {
            return net.sched.nanoTime();
        }

        boolean until(BooleanSupplier done, long limitNanos) {
            long end = now() + limitNanos;
            while (!done.getAsBoolean() && now() < end) {
                long next = net.sched.nextEventTime();
                if (next < 0 || next > end) {
                    net.sched.runUntil(end);
                    break;
                }
                net.sched.runUntil(Math.max(next, now()));
            }
            return done.getAsBoolean();
        }

        @Override
        public void close() {
            net.run(200_000_000_000L);
            clientTcp.close();
            serverTcp.close();
            net.close();
        }
    }

    /** Parses an Ethernet frame; an IPv6 TCP segment in it is added to {@code out}, its checksum recomputed. */
    static void parse(ByteBuf b, int start, int len, List<Seg> out) {
        if (len < 14 + 40 + 20 || b.getUnsignedShort(start + 12) != 0x86dd) {
            return;
        }
        int ip = start + 14;
        if (b.getUnsignedByte(ip + Ipv6Packet.NEXT_HEADER) != 6) {
            return;
        }
        int plen = b.getUnsignedShort(ip + Ipv6Packet.PAYLOAD_LEN);
        int t = ip + 40;
        boolean ok = Checksum.finish(Checksum.add(b, t, plen, Ipv6Packet.pseudoHeaderSum(b, ip, plen, 6))) == 0;
        int hl = (b.getUnsignedByte(t + 12) >>> 4) * 4;
        int flags = b.getUnsignedByte(t + 13);
        int mss = -1;
        for (int o = t + 20; o < t + hl; ) {
            int kind = b.getUnsignedByte(o);
            if (kind == 0) {
                break;
            }
            if (kind == 1) {
                o++;
                continue;
            }
            if (kind == 2) {
                mss = b.getUnsignedShort(o + 2);
            }
            o += b.getUnsignedByte(o + 1);
        }
        out.add(new Seg(b.getLong(ip + Ipv6Packet.SRC + 8), b.getUnsignedShort(t), b.getUnsignedShort(t + 2), flags,
                plen - hl, mss, ok, b.getUnsignedByte(ip + Ipv6Packet.HOP_LIMIT)));
    }

    /** A server that reads everything and remembers its children. */
    static final class Sink implements TcpListener.Acceptor, TcpSock.Callbacks {
        final List<TcpSock> children = new ArrayList<>();
        long received;
        boolean eof;
        int eofs;

        @Override
        public void accepted(TcpSock child) {
            children.add(child);
            child.setCallbacks(this);
            readable(child);
        }

        @Override
        public void readable(TcpSock s) {
            while (true) {
                int n = s.skip(1 << 20);
                if (n > 0) {
                    received += n;
                } else {
                    if (n < 0 && s.state() == TcpState.CLOSE_WAIT) {
                        eof = true;
                        eofs++;
                        s.close();
                    }
                    return;
                }
            }
        }
    }

    /** A client writing {@code total} bytes, then closing. */
    static final class Writer implements TcpSock.Callbacks {
        final ByteBuf zeros = Unpooled.wrappedBuffer(new byte[65536]);
        final long total;
        long written;
        boolean connected;
        TcpError closed;

        Writer(long total) {
            this.total = total;
        }

        @Override
        public void connected(TcpSock s) {
            connected = true;
            writable(s);
        }

        @Override
        public void writable(TcpSock s) {
            while (written < total) {
                int n = s.write(zeros, 0, (int) Math.min(65536, total - written));
                if (n <= 0) {
                    return;
                }
                written += n;
            }
            s.close();
        }

        @Override
        public void readable(TcpSock s) {
            s.skip(1 << 20);
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closed = error;
        }
    }

    @Test
    void aBulkTransferOverIpv6ThroughARouterArrivesWithValidChecksumsAndMss1440() {
        try (Path p = new Path()) {
            Sink sink = new Sink();
            TcpListener l = p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            Writer w = new Writer(2_000_000);
            TcpSock c = p.clientTcp.connect(SERVER6, 5001, w);
            assertTrue(c.ipv6());
            assertEquals(CLIENT6, c.localAddr6(), "the source is the address selection's");
            assertTrue(p.until(() -> sink.eof, 60_000_000_000L), "the stream ended");
            assertEquals(2_000_000, sink.received);
            assertEquals(1, sink.children.size());
            TcpSock child = sink.children.get(0);
            assertTrue(child.ipv6());
            assertEquals(CLIENT6, child.remoteAddr6());
            assertEquals(c.localPort(), child.remotePort());
            assertEquals("[2001:db8:2::2]:5001", child.info().local());
            Seg syn = p.fromClient.get(0);
            assertEquals(TcpSegmentFlags.SYN, syn.flags() & 0x3f);
            assertEquals(1440, syn.mss(), "MSS = MTU 1500 - 40 - 20");
            assertEquals(64, syn.hopLimit(), "net.ipv6.conf.eth0.hop_limit");
            for (Seg s : p.atServer) {
                assertTrue(s.checksumOk(), "checksum of " + s);
            }
            for (Seg s : p.fromClient) {
                assertTrue(s.checksumOk(), "checksum of " + s);
            }
            long dataSegs = p.atServer.stream().filter(s -> s.payload() > 0).count();
            assertTrue(dataSegs >= 2_000_000 / 1428, "data segments seen: " + dataSegs);
            assertEquals(1428, p.atServer.stream().mapToInt(Seg::payload).max().orElse(0),
                    "full segments carry 1440 less 12 bytes of timestamps");
            assertEquals(0, p.server.mib().get(Mib.TcpInCsumErrors));
            l.close();
        }
    }

    /** TCP flag bits, for readability. */
    static final class TcpSegmentFlags {
        static final int SYN = 0x02;
        static final int RST = 0x04;
    }

    @Test
    void aPacketTooBigLowersTheMssAndTheTransferCompletes() {
        try (Path p = new Path()) {
            // The router's link to the server carries 1400 bytes: it answers bigger packets with packet too big.
            p.right[0].setMtu(1400);
            Sink sink = new Sink();
            p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            Writer w = new Writer(500_000);
            TcpSock c = p.clientTcp.connect(SERVER6, 5001, w);
            assertTrue(p.until(() -> sink.eof, 60_000_000_000L), "the stream ended");
            assertEquals(500_000, sink.received);
            assertTrue(p.client.mib().get(Mib.Icmp6InPktTooBigs) > 0, "packet too big came back");
            assertEquals(1400 - 60 - 12, p.atServer.stream().mapToInt(Seg::payload).max().orElse(0),
                    "segments fit the 1400-byte link after the error");
            assertEquals(1400, c.stack().ipv6().output().pathMtu(
                    c.stack().ipv6().output().routeOutput(SERVER6.hi(), SERVER6.lo(), null), SERVER6.hi(), SERVER6.lo()));
        }
    }

    @Test
    void aPacketTooBigBelow1280IsIgnored() {
        try (Path p = new Path()) {
            Sink sink = new Sink();
            p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            // An idle connection: the links have no delay, so a writer would finish within the same instant.
            boolean[] up = new boolean[1];
            TcpSock c = p.clientTcp.connect(SERVER6, 5001, new TcpSock.Callbacks() {
                @Override
                public void connected(TcpSock s) {
                    up[0] = true;
                }
            });
            assertTrue(p.until(() -> up[0], 1_000_000_000L));
            assertEquals(TcpState.ESTABLISHED, c.state());
            int mss = c.info().sndMss();
            // A forged-looking report of 1000 bytes quoting the connection's own segment.
            ByteBuf q = Unpooled.buffer(60).writeZero(60);
            q.setInt(0, 0x6000_0000);
            q.setByte(Ipv6Packet.NEXT_HEADER, 6);
            q.setLong(Ipv6Packet.SRC, CLIENT6.hi());
            q.setLong(Ipv6Packet.SRC + 8, CLIENT6.lo());
            q.setLong(Ipv6Packet.DST, SERVER6.hi());
            q.setLong(Ipv6Packet.DST + 8, SERVER6.lo());
            q.setShort(40, c.localPort());
            q.setShort(42, 5001);
            q.setInt(44, (int) c.sndUna);
            p.clientTcp.err6(2, 0, 1000, q, 0, 40, 60);
            assertEquals(mss, c.info().sndMss(), "1000 < 1280: ignored");
            p.clientTcp.err6(2, 0, 1300, q, 0, 40, 60);
            assertEquals(1300 - 60 - 12, c.info().sndMss(), "1300 lowers it");
            q.setInt(44, (int) (c.sndUna - 100_000));
            p.clientTcp.err6(2, 0, 1290, q, 0, 40, 60);
            assertEquals(1300 - 60 - 12, c.info().sndMss(), "a sequence number outside the window is ignored");
            assertEquals(1, p.client.mib().get(Mib.TcpExtOutOfWindowIcmps));
            q.release();
            c.abort();
        }
    }

    @Test
    void aSynToAClosedPortOverIpv6IsRefusedByAReset() {
        try (Path p = new Path()) {
            Writer w = new Writer(1);
            TcpSock c = p.clientTcp.connect(SERVER6, 81, w);
            assertTrue(p.until(() -> w.closed != null, 10_000_000_000L));
            assertEquals(TcpError.ECONNREFUSED, w.closed);
            assertEquals(TcpError.ECONNREFUSED, c.error());
            assertEquals(1, p.server.mib().get(Mib.TcpOutRsts));

        }
    }

    @Test
    void aDualStackListenerAcceptsBothFamiliesAndTheIpv4OneReadsV4Mapped() {
        try (Path p = new Path()) {
            Sink sink = new Sink();
            TcpListener l = p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            assertThrows(IllegalStateException.class, () -> p.serverTcp.listen(0, 5001, 16, c -> { }),
                    "an IPv4 listener on the port of a dual-stack one: EADDRINUSE");
            Writer w6 = new Writer(10_000);
            Writer w4 = new Writer(20_000);
            p.clientTcp.connect(SERVER6, 5001, w6);
            TcpSock c4 = p.clientTcp.connect(SERVER4, 5001, w4);
            assertFalse(c4.ipv6());
            assertTrue(p.until(() -> sink.eofs == 2, 30_000_000_000L), "both streams ended");
            assertEquals(30_000, sink.received);
            assertEquals(2, sink.children.size());
            TcpSock a6 = sink.children.stream().filter(TcpSock::ipv6).findFirst().orElseThrow();
            TcpSock a4 = sink.children.stream().filter(s -> !s.ipv6()).findFirst().orElseThrow();
            assertTrue(a4.v4Mapped());
            assertEquals(CLIENT4, a4.remoteAddr());
            assertEquals(Ipv6Addr.parse("::ffff:198.18.0.1"), a4.remoteAddr6());
            assertEquals("[::ffff:198.18.1.2]:5001", a4.info().local());
            assertEquals("[::ffff:198.18.0.1]:" + c4.localPort(), a4.info().peer());
            assertEquals(CLIENT6, a6.remoteAddr6());
            l.close();
            // With bindv6only, IPv4 and IPv6 listeners share a port; the IPv6 one no longer takes IPv4.
            TcpListener only6 = p.serverTcp.listen(Ipv6Addr.ANY, 5002, 16, true, sink);
            TcpListener v4 = p.serverTcp.listen(0, 5002, 16, sink);
            assertFalse(only6.acceptsIpv4());
            only6.close();
            v4.close();
        }
    }

    @Test
    void anIpv4AndAnIpv6ConnectionWithTheSamePortsDoNotCollide() {
        try (Path p = new Path()) {
            Sink sink = new Sink();
            p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            Writer w6 = new Writer(30_000);
            Writer w4 = new Writer(50_000);
            TcpSock c6 = p.clientTcp.connect(Ipv6Addr.ANY, 40000, SERVER6, 5001, w6, null);
            TcpSock c4 = p.clientTcp.connect(0, 40000, SERVER4, 5001, w4, null);
            assertEquals(2, p.clientTcp.sockets().size());
            assertTrue(p.until(() -> w6.connected && w4.connected, 5_000_000_000L));
            assertNotEquals(c4, c6);
            assertTrue(p.until(() -> sink.eofs == 2, 30_000_000_000L), "both transfers complete: " + sink.received);
            assertEquals(80_000, sink.received);
            long[] got = sink.children.stream().mapToLong(s -> s.stats.bytesReceived).sorted().toArray();
            assertEquals(2, got.length);
            assertEquals(30_000, got[0], "the IPv6 connection got its own bytes");
            assertEquals(50_000, got[1], "the IPv4 connection got its own bytes");
            assertEquals(TcpState.TIME_WAIT, c6.state());
            assertEquals(TcpState.TIME_WAIT, c4.state());
        }
    }

    @Test
    void synCookiesWorkOverIpv6() {
        try (Path p = new Path()) {
            // 2: every SYN is answered with a cookie, and the final ACK alone makes the connection.
            p.server.knobs().set("net.ipv4.tcp_syncookies", "2");
            Sink sink = new Sink();
            p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            Writer w = new Writer(100_000);
            p.clientTcp.connect(SERVER6, 5001, w);
            assertTrue(p.until(() -> sink.eof, 30_000_000_000L), "the stream ended");
            assertEquals(100_000, sink.received);
            assertEquals(1, p.server.mib().get(Mib.TcpExtSyncookiesSent));
            assertEquals(1, p.server.mib().get(Mib.TcpExtSyncookiesRecv));
            assertEquals(0, p.server.mib().get(Mib.TcpExtSyncookiesFailed));
            assertEquals(CLIENT6, sink.children.get(0).remoteAddr6());
            // The cookie SYN-ACK went out over IPv6 with a valid checksum and MSS 1440.
            Seg synAck = p.toClient.stream().filter(s -> s.flags() == 0x12).findFirst().orElseThrow();
            assertTrue(synAck.checksumOk());
            assertEquals(1440, synAck.mss());
        }
    }

    @Test
    void theBindv6onlyKnobKeepsAnIpv6ListenerToIpv6() {
        try (Path p = new Path()) {
            p.server.knobs().set("net.ipv6.bindv6only", "1");
            Sink sink = new Sink();
            TcpListener l6 = p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            assertEquals("[::]:5001", l6.localText());
            assertFalse(l6.acceptsIpv4());
            Writer w4 = new Writer(1000);
            p.clientTcp.connect(SERVER4, 5001, w4);
            assertTrue(p.until(() -> w4.closed != null, 10_000_000_000L));
            assertEquals(TcpError.ECONNREFUSED, w4.closed, "no IPv4 listener: the SYN is reset");
            assertTrue(sink.children.isEmpty());
            TcpListener l4 = p.serverTcp.listen(0, 5001, 16, sink);
            assertEquals("0.0.0.0:5001", l4.localText());
            Writer again = new Writer(1000);
            p.clientTcp.connect(SERVER4, 5001, again);
            assertTrue(p.until(() -> sink.eofs == 1, 10_000_000_000L));
            assertFalse(sink.children.get(0).v4Mapped(), "the IPv4 listener's child is plain IPv4");
            assertEquals("198.18.1.2:5001", sink.children.get(0).info().local());
        }
    }

    @Test
    void aConnectionToTheNamespacesOwnAddressesGoesThroughTheLoopback() {
        try (Path p = new Path()) {
            Sink sink = new Sink();
            p.serverTcp.listen(Ipv6Addr.ANY, 5001, 16, sink);
            Writer w = new Writer(300_000);
            TcpSock c = p.serverTcp.connect(Ipv6Addr.LOOPBACK, 5001, w);
            Writer w2 = new Writer(300_000);
            TcpSock c2 = p.serverTcp.connect(SERVER6, 5001, w2);
            assertEquals(Ipv6Addr.LOOPBACK, c.localAddr6(), "::1 talks from ::1");
            assertEquals(SERVER6, c2.localAddr6(), "an own address is its own source");
            assertTrue(p.until(() -> sink.eofs == 2, 30_000_000_000L));
            assertEquals(600_000, sink.received);
            assertEquals(p.server.loopback().mtu() - 60, c.info().advMss(), "the loopback's MTU less both headers");
        }
    }

    @Test
    void ipv6KeysChainWhenTheyMeet() {
        try (Path p = new Path()) {
            Tcp t = p.clientTcp;
            TcpSock a = t.newSock(t.ipv6());
            TcpSock b = t.newSock(t.ipv6());
            a.setAddresses6(1, 2, 10, 3, 4, 20);
            b.setAddresses6(1, 5, 10, 3, 4, 20);
            t.hash(a);
            t.hash(b);
            // The same remote address and ports from two local addresses: one key, so one chain.
            assertNotNull(t.lookup6(3, 4, 20, 10, 1, 2));
            assertNotNull(t.lookup6(3, 4, 20, 10, 1, 5));
            assertNull(t.lookup6(3, 4, 20, 10, 1, 6));
            t.unhash(a);
            assertNull(t.lookup6(3, 4, 20, 10, 1, 2));
            assertNotNull(t.lookup6(3, 4, 20, 10, 1, 5));
            t.unhash(b);
            assertNull(t.lookup6(3, 4, 20, 10, 1, 5));
        }
    }
}
