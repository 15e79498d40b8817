package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * ICMP errors end to end, from a usnet router on the path: client 198.18.0.1 - router (198.18.0.254,
 * 198.18.1.254) - server 198.18.1.2, in virtual time. The router knows no way to 198.19.0.0/16, cannot resolve
 * hosts on 198.18.1.0/24 other than the server, and (in one test) its link to the server carries 1000 bytes.
 */
class TcpIcmpPathTest {
    static final int SERVER = Ipv4Addr.parse("198.18.1.2");

    static final class Path implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack client = net.ns("client");
        final NetStack router = net.ns("router");
        final NetStack server = net.ns("server");
        final VethEnd[] left = net.link(client, "eth0", "198.18.0.1/24", router, "r0", "198.18.0.254/24");
        final VethEnd[] right = net.link(router, "r1", "198.18.1.254/24", server, "eth0", "198.18.1.2/24");
        final Tcp clientTcp = Tcp.install(client);
        final Tcp serverTcp = Tcp.install(server);

        Path() {
            router.knobs().set("net.ipv4.ip_forward", "1");
            client.routes().add(new Route(0, 0, RouteType.UNICAST, Ipv4Addr.parse("198.18.0.254"), left[0], 0, 0, false));
            server.routes().add(new Route(0, 0, RouteType.UNICAST, Ipv4Addr.parse("198.18.1.254"), right[1], 0, 0, false));
        }

        long now() {
            return net.sched.nanoTime();
        }

        /** Runs virtual time until {@code done} or {@code limitNanos} passed; returns whether it holds. */
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

    static final class Outcome implements TcpSock.Callbacks {
        TcpError closed;
        boolean connected;

        @Override
        public void connected(TcpSock s) {
            connected = true;
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closed = error;
        }
    }

    @Test
    void aConnectThroughARouterWithNoRouteFailsWithEnetunreachAtOnce() {
        try (Path p = new Path()) {
            Outcome o = new Outcome();
            long start = p.now();
            TcpSock s = p.clientTcp.connect(Ipv4Addr.parse("198.19.0.9"), 80, o);
            assertTrue(p.until(() -> o.closed != null, 200_000_000_000L), "the connect ended");
            long took = p.now() - start;
            assertEquals(TcpError.ENETUNREACH, o.closed);
            assertEquals(TcpError.ENETUNREACH, s.error());
            assertTrue(took < 100_000_000L, "failed after " + took / 1e6 + " ms, not after SYN retries");
            assertEquals(0, p.client.mib().get(Mib.TcpRetransSegs), "no SYN was sent again");
            assertEquals(1, p.client.mib().get(Mib.TcpAttemptFails));
            assertEquals(1, p.router.mib().get(Mib.IcmpOutDestUnreachs));
            assertEquals(1, p.client.mib().get(Mib.IcmpInDestUnreachs));
        }
    }

    @Test
    void aStreamClientBehindARouterWithNoRouteFailsWithTheReason() {
        try (Path p = new Path()) {
            var cfg = dev.usnet.tcp.app.AppConfig.defaults().withCount(1000);
            var cli = dev.usnet.tcp.app.StreamApp.client(p.client, Ipv4Addr.parse("198.19.0.9"), cfg);
            cli.start();
            assertTrue(p.until(cli::isDone, 10_000_000_000L));
            assertEquals(TcpError.ENETUNREACH, cli.result().error());
            assertEquals(dev.usnet.tcp.app.Outcome.failed(
                    "never connected: the path answered the SYN with an ICMP error, ENETUNREACH"), cli.result().outcome());
        }
    }

    @Test
    void aConnectToAHostTheRouterCannotResolveFailsWithEhostunreach() {
        try (Path p = new Path()) {
            Outcome o = new Outcome();
            long start = p.now();
            p.clientTcp.connect(Ipv4Addr.parse("198.18.1.77"), 80, o);
            assertTrue(p.until(() -> o.closed != null, 200_000_000_000L), "the connect ended");
            long took = p.now() - start;
            assertEquals(TcpError.EHOSTUNREACH, o.closed);
            // The router gives up on ARP after its solicitations (3 x 1 s); tcp_syn_retries would take over 2 min.
            assertTrue(took < 10_000_000_000L, "failed after " + took / 1e9 + " s");
        }
    }

    @Test
    void aConnectToAClosedPortIsStillRefusedByTheReset() {
        try (Path p = new Path()) {
            Outcome o = new Outcome();
            p.clientTcp.connect(SERVER, 81, o);
            assertTrue(p.until(() -> o.closed != null, 10_000_000_000L));
            assertEquals(TcpError.ECONNREFUSED, o.closed);
        }
    }

    @Test
    void aNarrowLinkOnThePathLowersTheMssAndTheTransferCompletesIntact() {
        try (Path p = new Path()) {
            // Only the router's side: the server still announces MSS 1460, so only the router's error can tell.
            p.right[0].setMtu(1000);
            byte[] data = TcpPair.randomBytes(300_000, 7);
            TcpPair.HashingSink sink = new TcpPair.HashingSink();
            p.serverTcp.listen(0, 5001, 16, c -> c.setCallbacks(sink));
            TcpPair.BulkSender sender = new TcpPair.BulkSender(data, 16_384);
            TcpSock s = p.clientTcp.connect(SERVER, 5001, sender);
            assertTrue(p.until(() -> sink.eof, 60_000_000_000L), "the transfer completed");
            assertEquals(data.length, sink.bytes);
            assertEquals(TcpPair.sha256(data), sink.hash());
            TcpInfo info = s.info();
            assertEquals(1000, info.pmtu());
            assertEquals(1000 - 52, info.sndMss());
            // One error per segment of the first flight (10); the first lowers the MSS, the others change nothing.
            assertEquals(10, p.router.mib().get(Mib.IcmpOutDestUnreachs), "the router reported fragmentation needed");
            assertEquals(10, p.client.mib().get(Mib.IcmpInDestUnreachs));
            assertEquals(20, info.totalRetrans(), "the first flight's 10 segments resent as 20 of the new MSS");
            assertEquals(0, p.router.mib().get(Mib.IpFragCreates), "nothing was fragmented");
            long rto = p.client.mib().get(Mib.TcpExtTCPTimeouts);
            assertEquals(0, rto, "the first flight was resent at once, not after a timeout");
        }
    }

    @Test
    void aLearnedPathMtuServesNewConnectionsAndReachesOlderOnesThroughALocalError() {
        try (Path p = new Path()) {
            p.right[0].setMtu(1000);
            TcpPair.HashingSink idleSink = new TcpPair.HashingSink();
            p.serverTcp.listen(0, 5002, 16, c -> c.setCallbacks(idleSink));
            // An older connection, established before anything was learned, holds its data back for now.
            byte[] later = TcpPair.randomBytes(50_000, 9);
            TcpPair.BulkSender olderSender = new TcpPair.BulkSender(later, 16_384) {
                @Override
                public void connected(TcpSock s) {
                    connected = true;
                }
            };
            TcpSock older = p.clientTcp.connect(SERVER, 5002, olderSender);
            assertTrue(p.until(() -> olderSender.connected, 1_000_000_000L));
            assertEquals(1448, older.info().sndMss());

            // The first transfer learns the path MTU from the router.
            byte[] data = TcpPair.randomBytes(100_000, 8);
            TcpPair.HashingSink sink = new TcpPair.HashingSink();
            p.serverTcp.listen(0, 5001, 16, c -> c.setCallbacks(sink));
            p.clientTcp.connect(SERVER, 5001, new TcpPair.BulkSender(data, 16_384));
            assertTrue(p.until(() -> sink.eof, 60_000_000_000L));
            long routerErrors = p.router.mib().get(Mib.IcmpOutDestUnreachs);

            // A new connection starts at the learned path MTU: nothing to resend, no error from the router.
            byte[] third = TcpPair.randomBytes(100_000, 10);
            TcpPair.HashingSink thirdSink = new TcpPair.HashingSink();
            p.serverTcp.listen(0, 5003, 16, c -> c.setCallbacks(thirdSink));
            long retransBefore = p.client.mib().get(Mib.TcpRetransSegs);
            TcpSock fresh = p.clientTcp.connect(SERVER, 5003, new TcpPair.BulkSender(third, 16_384));
            assertTrue(p.until(() -> thirdSink.eof, 60_000_000_000L));
            assertEquals(TcpPair.sha256(third), thirdSink.hash());
            assertEquals(1000 - 52, fresh.info().sndMss());
            assertEquals(retransBefore, p.client.mib().get(Mib.TcpRetransSegs));
            assertEquals(routerErrors, p.router.mib().get(Mib.IcmpOutDestUnreachs));

            // The older connection's first oversized segment is refused by its own IP layer (fragmentation needed
            // to itself), which lowers its MSS; the router never sees it.
            long localErrors = p.client.mib().get(Mib.IcmpOutDestUnreachs);
            olderSender.pump(older);
            assertTrue(p.until(() -> idleSink.eof, 60_000_000_000L));
            assertEquals(TcpPair.sha256(later), idleSink.hash());
            assertEquals(1000 - 52, older.info().sndMss());
            assertTrue(p.client.mib().get(Mib.IcmpOutDestUnreachs) > localErrors, "reported to itself");
            assertEquals(routerErrors, p.router.mib().get(Mib.IcmpOutDestUnreachs));
        }
    }
}
