package dev.usnet.tcp.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpPair;
import org.junit.jupiter.api.Test;

/** {@link AppResult#outcome()}: each way a TCP app can fail says why, in virtual time. */
class AppOutcomeTest {
    private static final long LIMIT = 600_000_000_000L;

    @Test
    void aCompleteStreamIsOkAtBothEnds() {
        try (TcpPair pair = new TcpPair(1)) {
            AppConfig cfg = AppConfig.defaults().withCount(100_000);
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            srv.start();
            cli.start();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            assertEquals(Outcome.OK, cli.result().outcome(), cli.result().format());
            assertEquals(Outcome.OK, srv.result().outcome(), srv.result().format());
        }
    }

    @Test
    void aClientNobodyListensForIsRefused() {
        try (TcpPair pair = new TcpPair(1)) {
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, AppConfig.defaults().withCount(1000));
            cli.start();
            assertTrue(pair.until(cli::isDone, LIMIT));
            AppResult r = cli.result();
            assertEquals(TcpError.ECONNREFUSED, r.error());
            Outcome o = r.outcome();
            assertFalse(o.ok());
            assertEquals("never connected: refused by a reset from 198.18.0.2:5001 (nothing listening), ECONNREFUSED",
                    o.reason());
            assertEquals("FAILED: " + o.reason(), o.format());
        }
    }

    @Test
    void unansweredSynsExhaustTheRetriesAndTheServerSeesNoConnection() {
        try (TcpPair pair = new TcpPair(1)) {
            pair.set("net.ipv4.tcp_syn_retries", "2");
            pair.toServer.blackout = true;
            AppConfig cfg = AppConfig.defaults().withCount(1000);
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            srv.start();
            cli.start();
            assertTrue(pair.until(cli::isDone, LIMIT));
            // SYN at 0, retransmitted at 1 s and 3 s, given up at 7 s.
            assertEquals(7_000_000_000L, pair.now(), 10_000_000L);
            assertEquals(TcpError.ETIMEDOUT, cli.result().error());
            assertEquals(Outcome.failed("never connected: SYN retries exhausted (net.ipv4.tcp_syn_retries), ETIMEDOUT"),
                    cli.result().outcome());
            srv.stop();
            assertTrue(pair.until(srv::isDone, LIMIT));
            assertEquals(Outcome.failed("no connection: the client never reached 0.0.0.0:5001"), srv.result().outcome());
        }
    }

    @Test
    void aClientStoppedWhileItsSynIsUnansweredNeverConnected() {
        try (TcpPair pair = new TcpPair(1)) {
            pair.toServer.blackout = true;
            RrApp.Client cli = RrApp.client(pair.client, TcpPair.SERVER, AppConfig.defaults(), RrApp.Params.defaults());
            cli.start();
            pair.until(() -> false, 500_000_000L);
            cli.stop();
            assertTrue(pair.until(cli::isDone, LIMIT));
            assertEquals(Outcome.failed("never connected: still connecting (SYN unanswered) when stopped"),
                    cli.result().outcome());
        }
    }

    @Test
    void anRrWhoseFirstAnswerNeverCameCompletedNoTransaction() {
        try (TcpPair pair = new TcpPair(1)) {
            AppConfig cfg = AppConfig.defaults();
            RrApp.Params p = new RrApp.Params(64, 1024);
            RrApp.Server srv = RrApp.server(pair.server, cfg, p);
            RrApp.Client cli = RrApp.client(pair.client, TcpPair.SERVER, cfg, p);
            srv.start();
            cli.start();
            // Connected and the first request out: then the answers stop coming.
            assertTrue(pair.until(() -> cli.socket() != null && cli.socket().state().name().equals("ESTABLISHED"), LIMIT));
            pair.toClient.blackout = true;
            pair.until(() -> false, 100_000_000L);
            cli.abort();
            srv.abort();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            AppResult r = cli.result();
            assertEquals(TcpError.ECONNABORTED, r.error());
            assertEquals(Outcome.failed("connected but completed 0 transactions (64 bytes sent, 0 received)"), r.outcome(),
                    r.format());
        }
    }

    @Test
    void aResetByThePeerSaysHowFarItGot() {
        try (TcpPair pair = new TcpPair(1)) {
            AppConfig cfg = AppConfig.defaults();
            StreamApp.Server srv = StreamApp.server(pair.server, cfg);
            StreamApp.Client cli = StreamApp.client(pair.client, TcpPair.SERVER, cfg);
            srv.start();
            cli.start();
            assertTrue(pair.until(() -> srv.socket() != null && pair.server.mib().get(dev.usnet.core.stats.Mib.TcpInSegs) > 50,
                    LIMIT));
            srv.abort();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            AppResult c = cli.result();
            assertEquals(TcpError.ECONNRESET, c.error(), c.format());
            assertEquals(Outcome.failed("reset by peer after " + c.bytesSent() + " bytes, ECONNRESET"), c.outcome());
            assertTrue(c.bytesSent() > 0, c.format());
            // The end that aborted measured what it received: its numbers stand.
            AppResult s = srv.result();
            assertEquals(TcpError.ECONNABORTED, s.error());
            assertTrue(s.bytesReceived() > 0, s.format());
            assertEquals(Outcome.OK, s.outcome());
        }
    }

    @Test
    void anOutcomeIsOkWithoutReasonOrFailedWithOne() {
        assertEquals("ok", Outcome.OK.format());
        assertTrue(Outcome.OK.ok());
        assertEquals("", Outcome.OK.reason());
        assertThrows(IllegalArgumentException.class, () -> Outcome.failed(""));
        assertThrows(IllegalArgumentException.class, () -> new Outcome(true, "but"));
    }
}
