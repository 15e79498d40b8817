package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpPair;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpSock;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** RrApp (TCP_RR) between two namespaces in virtual time. */
class RrAppTest {
    private static final long LIMIT = 100_000_000_000L;

    private record Run(AppResult client, AppResult server) {}

    private static Run run(TcpPair pair, AppConfig cfg, RrApp.Params p) {
        RrApp.Server srv = RrApp.server(pair.server, cfg, p);
        RrApp.Client cli = RrApp.client(pair.client, TcpPair.SERVER, cfg, p);
        srv.start();
        cli.start();
        assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT), cli + " / " + srv);
        return new Run(cli.result(), srv.result());
    }

    private static Run run(long seed, long rateBps, AppConfig cfg, RrApp.Params p) {
        try (TcpPair pair = new TcpPair(seed)) {
            pair.link(rateBps, 50_000);
            return run(pair, cfg, p);
        }
    }

    @Test
    void oneByteTransactionsTakeOneRoundTrip() {
        List<TcpSock> socks = new ArrayList<>();
        Run r = run(1, 0, AppConfig.defaults().withCount(2000).withSocketHook(socks::add), RrApp.Params.defaults());
        AppResult c = r.client();
        assertEquals(2000, c.operations(), c.format());
        assertEquals(2000, r.server().operations());
        assertEquals(2000, c.bytesSent());
        assertEquals(2000, c.bytesReceived());
        assertEquals(4000, c.bytes());
        assertEquals(TcpError.NONE, c.error());
        assertEquals(TcpError.NONE, r.server().error());
        Percentiles l = c.latency();
        assertNotNull(l);
        assertEquals(2000, l.count());
        assertEquals(2000, c.histogram().getTotalCount());
        // Two 50 us hops and nothing else on an idle path (HdrHistogram's 3 digits report 100 us as 100.031).
        assertTrue(l.minUs() > 99.9 && l.p50Us() < 100.1 && l.p999Us() < 100.1 && l.maxUs() < 100.1, l.format());
        // Back to back: one transaction per round trip.
        assertEquals(2000 * 100_000L, c.durationNanos(), 1_000, c.format());
        assertEquals(10_000, c.operationsPerSecond(), 5, c.format());
        assertEquals(0, c.retransmits());
        assertEquals(2, socks.size());
        assertTrue(socks.get(0).noDelay() && socks.get(1).noDelay(), "TCP_NODELAY at both ends, as netperf TCP_RR");
        assertNotNull(r.server().info());
        assertEquals(null, r.server().latency());
        ByteArrayOutputStream hgrm = new ByteArrayOutputStream();
        c.writePercentiles(new PrintStream(hgrm, true, StandardCharsets.UTF_8));
        assertTrue(hgrm.toString(StandardCharsets.UTF_8).contains("Total count    =         2000"), hgrm::toString);
        assertTrue(AppResult.table(List.of(c, r.server())).lines().count() == 3);
    }

    @Test
    void largeResponsesAddTheirSerialisation() {
        RrApp.Params p = new RrApp.Params(100, 32 * 1024);
        Run r = run(2, 1_000_000_000L, AppConfig.defaults().withCount(100), p);
        AppResult c = r.client();
        assertEquals(100, c.operations());
        assertEquals(100L * (100 + 32 * 1024), c.bytes());
        // Request: one 166-byte frame; response: 22 full 1514-byte frames and one of 978 bytes, at 1 Gbit/s.
        double floorUs = 100 + (166 + 22 * 1514 + 978) * 8 / 1000.0;
        Percentiles l = c.latency();
        assertTrue(l.minUs() >= floorUs - 0.5, l.format() + " floor " + floorUs);
        assertTrue(l.p50Us() < floorUs + 5, l.format() + " floor " + floorUs);
    }

    @Test
    void durationEndsAtATransactionBoundary() {
        Run r = run(3, 0, AppConfig.defaults().withDurationNanos(10_000_000L), RrApp.Params.defaults());
        AppResult c = r.client();
        assertTrue(c.operations() >= 100 && c.operations() <= 101, c.format());
        assertEquals(c.operations(), c.latency().count(), "every counted transaction has its latency");
        assertEquals(c.operations() * 100_000L, c.durationNanos(), 1_000);
        assertEquals(c.operations(), r.server().operations());
    }

    @Test
    void lossShowsInTheTailAndRunsAreDeterministic() {
        AppResult[] c = new AppResult[2];
        AppResult[] s = new AppResult[2];
        for (int i = 0; i < 2; i++) {
            try (TcpPair pair = new TcpPair(4)) {
                pair.toServer.loss = 0.01;
                pair.toClient.loss = 0.01;
                Run r = run(pair, AppConfig.defaults().withCount(1000), RrApp.Params.defaults());
                c[i] = r.client();
                s[i] = r.server();
                assertTrue(pair.toServer.dropped > 0 && pair.toClient.dropped > 0);
            }
        }
        assertEquals(c[0].withCpuNanos(0), c[1].withCpuNanos(0));
        assertEquals(s[0].withCpuNanos(0), s[1].withCpuNanos(0));
        Percentiles l = c[0].latency();
        assertEquals(1000, c[0].operations());
        assertTrue(l.p50Us() < 100.1, l.format());
        // A lost request or response costs a loss probe or an RTO: milliseconds, not microseconds.
        assertTrue(l.maxUs() > 5_000, l.format());
        assertTrue(c[0].retransmits() + s[0].retransmits() > 0);
    }

    @Test
    void stopCountsOnlyCompletedTransactions() {
        try (TcpPair pair = new TcpPair(5)) {
            AppConfig cfg = AppConfig.defaults();
            RrApp.Server srv = RrApp.server(pair.server, cfg, RrApp.Params.defaults());
            RrApp.Client cli = RrApp.client(pair.client, TcpPair.SERVER, cfg, RrApp.Params.defaults());
            srv.start();
            cli.start();
            pair.net.run(5_030_000L);
            cli.stop();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            AppResult c = cli.result();
            assertEquals(c.operations(), c.latency().count());
            assertEquals(c.operations(), srv.result().operations());
            assertTrue(c.operations() >= 49 && c.operations() <= 50, c.format());
        }
    }
}
