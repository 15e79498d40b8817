package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpPair;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpState;
import dev.usnet.tcp.TcpTrace;
import java.util.List;
import org.junit.jupiter.api.Test;

/** StreamApp (TCP_STREAM) between two namespaces in virtual time. */
class StreamAppTest {
    private static final long LIMIT = 100_000_000_000L;

    private record Run(AppResult client, AppResult server) {}

    private static Run run(long seed, long rateBps, AppConfig cfg) {
        try (TcpPair pair = new TcpPair(seed)) {
            pair.link(rateBps, 50_000);
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            srv.start();
            cli.start();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT), cli + " / " + srv);
            assertEquals(cli.result(), cli.completion().join(), "the future holds the result");
            return new Run(cli.result(), srv.result());
        }
    }

    @Test
    void byteCountArrivesWholeAtTheBottleneckRate() {
        int bytes = 2 << 20;
        Run r = run(1, 100_000_000L, AppConfig.defaults().withCount(bytes));
        AppResult c = r.client();
        AppResult s = r.server();
        assertEquals(bytes, c.bytes(), c.format());
        assertEquals(bytes, c.bytesSent());
        assertEquals(bytes, s.bytesReceived(), s.format());
        assertEquals(bytes, s.bytes());
        assertEquals(TcpError.NONE, c.error());
        assertEquals(TcpError.NONE, s.error());
        assertEquals(0, c.retransmits(), c.info().format());
        // A 1514-byte frame carries 1448 bytes: the goodput ceiling of a 100 Mbit/s link is 95.64 Mbit/s;
        // slow start from 10 segments and the closing handshake cost a little.
        double ceiling = 100e6 * 1448 / 1514;
        assertTrue(c.throughputBps() <= ceiling && c.throughputBps() > 0.97 * ceiling, c.format());
        // The server's window opens when the first data segment (carrying the handshake's last ACK) is in,
        // so it misses that segment's serialisation time: one frame above the ceiling at most.
        double frame = 1514 * 8 * (s.bytes() / 1448.0) / (s.bytes() / 1448.0 - 1);
        assertTrue(s.throughputBps() <= ceiling * frame / (1514 * 8) && s.throughputBps() > 0.97 * ceiling,
                s.format());
        // At least the serialisation time of every frame.
        assertTrue(c.durationNanos() >= (long) (bytes / 1448.0 * 1514 * 8 * 10), c.format());
        assertEquals(0, c.operations());
        assertNull(c.latency());
        assertNull(c.histogram());
        assertTrue(c.cpuNanos() > 0 && s.cpuNanos() > 0, "CPU time measured");
        assertEquals("cubic", c.info().congestionControl());
        assertTrue(c.format().startsWith("stream client 198.18.0.1:"), c.format());
    }

    @Test
    void durationCountsWhatThePeerAcknowledgedWithinIt() {
        long duration = 10_000_000L;
        Run r = run(2, 1_000_000_000L, AppConfig.defaults().withDurationNanos(duration).withBuffers(256 << 10, 0));
        AppResult c = r.client();
        assertEquals(duration, c.durationNanos());
        assertEquals(TcpError.NONE, c.error());
        double ceiling = 1e9 * 1448 / 1514;
        assertTrue(c.throughputBps() <= ceiling && c.throughputBps() > 0.95 * ceiling, c.format());
        // Written bytes include what was still in the send buffer; the sink got all of it after the window.
        assertTrue(c.bytesSent() > c.bytes(), c.format());
        assertEquals(c.bytesSent(), r.server().bytesReceived(), r.server().format());
    }

    @Test
    void readingSinkAndRenoGiveTheSameBytes() {
        AppConfig cfg = AppConfig.defaults().withCount(1 << 20).withReadBytes(16 * 1024).withCongestionControl("reno")
                .withMeasureCpu(false);
        Run r = run(3, 0, cfg);
        assertEquals(1 << 20, r.server().bytesReceived());
        assertEquals(-1, r.client().cpuNanos(), "not measured");
        assertTrue(!r.client().format().contains("cpu"));
        assertEquals("reno", r.client().info().congestionControl());
        assertEquals("reno", r.server().info().congestionControl());
    }

    @Test
    void sameSeedSameResults() {
        AppConfig cfg = AppConfig.defaults().withCount(1 << 20);
        Run a = run(4, 200_000_000L, cfg);
        Run b = run(4, 200_000_000L, cfg);
        assertEquals(a.client().withCpuNanos(0), b.client().withCpuNanos(0));
        assertEquals(a.server().withCpuNanos(0), b.server().withCpuNanos(0));
    }

    @Test
    void lossIsRepairedAndCounted() {
        try (TcpPair pair = new TcpPair(5)) {
            pair.link(100_000_000L, 50_000);
            pair.toServer.loss = 0.01;
            AppConfig cfg = AppConfig.defaults().withCount(1 << 20);
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            srv.start();
            cli.start();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            assertEquals(1 << 20, srv.result().bytesReceived());
            assertTrue(cli.result().retransmits() >= pair.toServer.dropped - 1, cli.result().format());
            assertTrue(pair.toServer.dropped > 0);
        }
    }

    @Test
    void stopEndsTheRunAndTraceAndHookSeeTheSocket() {
        try (TcpPair pair = new TcpPair(6)) {
            pair.link(100_000_000L, 50_000);
            int[] hooked = new int[1];
            AppConfig cfg = AppConfig.defaults().withPort(6000).withBuffers(256 << 10, 0)
                    .withSocketHook(s -> hooked[0]++);
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            TcpTrace trace = new TcpTrace();
            cli.setTrace(trace);
            srv.start();
            cli.start();
            pair.net.run(20_000_000L);
            assertTrue(!cli.isDone() && !srv.isDone());
            cli.stop();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            AppResult c = cli.result();
            assertTrue(c.durationNanos() < 20_000_000L && c.durationNanos() > 19_000_000L, c.format());
            assertTrue(c.bytes() > 0 && srv.result().bytesReceived() >= c.bytes());
            assertEquals(2, hooked[0], "client and server socket");
            assertTrue(trace.rows() > 100, "cwnd trace recorded");
            assertEquals(TcpState.TIME_WAIT, cli.socket().state(), "client closed first and waits");
        }
    }

    @Test
    void serverStoppedBeforeAnyClientReleasesThePort() {
        try (TcpPair pair = new TcpPair(7)) {
            AppConfig cfg = AppConfig.defaults();
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            srv.start();
            assertThrows(IllegalStateException.class, () -> StreamApp.server(pair.server, cfg).start(),
                    "EADDRINUSE while listening");
            srv.stop();
            assertTrue(srv.isDone());
            assertEquals(0, srv.result().bytes());
            assertEquals(0, srv.result().durationNanos());
            // The port is free again; a client refused by nobody listening ends with ECONNREFUSED.
            StreamApp.Server again = StreamApp.server(pair.server, cfg);
            again.start();
            again.stop();
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg.withCount(1000));
            cli.start();
            assertTrue(pair.until(cli::isDone, LIMIT));
            assertEquals(TcpError.ECONNREFUSED, cli.result().error());
            assertEquals(-1, cli.result().startNanos());
            assertTrue(AppResult.table(List.of(cli.result(), srv.result())).contains("ECONNREFUSED"));
        }
    }

    @Test
    void abortResetsBothEnds() {
        try (TcpPair pair = new TcpPair(8)) {
            pair.link(100_000_000L, 50_000);
            AppConfig cfg = AppConfig.defaults();
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            srv.start();
            cli.start();
            pair.net.run(5_000_000L);
            cli.abort();
            assertTrue(cli.isDone());
            assertEquals(TcpError.ECONNABORTED, cli.result().error());
            assertTrue(pair.until(srv::isDone, LIMIT));
            assertEquals(TcpError.ECONNRESET, srv.result().error());
            assertTrue(srv.result().bytesReceived() > 0);
        }
    }
}
