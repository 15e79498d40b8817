package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpPair;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpTrace;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** BurstApp (MPI-like bursts with compute phases) between two namespaces in virtual time. */
class BurstAppTest {
    private static final long LIMIT = 100_000_000_000L;
    private static final long GBIT = 1_000_000_000L;

    /** Everything a run shows: results, the bursts the observer saw, the client's cwnd trace as CSV. */
    private record Run(AppResult client, AppResult server, List<BurstApp.Burst> bursts, List<Long> starts,
            String trace, long dataDropped) {}

    private static Run run(long seed, double loss, AppConfig cfg, BurstApp.Params p) {
        try (TcpPair pair = new TcpPair(seed)) {
            pair.link(GBIT, 50_000);
            pair.toServer.loss = loss;
            List<BurstApp.Burst> bursts = new ArrayList<>();
            List<Long> starts = new ArrayList<>();
            TcpTrace trace = new TcpTrace();
            BurstApp.Server srv = BurstApp.server(pair.server, cfg, p);
            BurstApp.Client cli = BurstApp.client(pair.client, TcpPair.SERVER, cfg, p).observer(
                    new BurstApp.BurstObserver() {
                        @Override
                        public void started(int index, long startNanos, TcpInfo info) {
                            assertEquals(starts.size(), index);
                            starts.add(startNanos);
                        }

                        @Override
                        public void completed(BurstApp.Burst b) {
                            bursts.add(b);
                        }
                    });
            cli.setTrace(trace);
            srv.start();
            cli.start();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT), cli + " / " + srv);
            StringWriter w = new StringWriter();
            try {
                trace.writeCsv(w);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new Run(cli.result(), srv.result(), bursts, starts, w.toString(), pair.toServer.dropped);
        }
    }

    /** Time to serialise {@code bytes} of payload in 1448-byte segments (64 bytes of headers each) at 1 Gbit/s. */
    private static long wireNanos(long bytes) {
        long full = bytes / 1448;
        long rest = bytes % 1448;
        return (full * 1514 + (rest > 0 ? rest + 66 : 0)) * 8;
    }

    @Test
    void everyBurstCompletesNoFasterThanTheLinkAllows() {
        int n = 128 * 1024;
        long compute = 1_000_000L;
        Run r = run(1, 0, AppConfig.defaults().withCount(20), BurstApp.Params.of(n, compute));
        AppResult c = r.client();
        assertEquals(TcpError.NONE, c.error());
        assertEquals(20, c.operations(), c.format());
        assertEquals(20, c.histogram().getTotalCount());
        assertEquals(20, c.latency().count());
        assertEquals(20, r.server().operations());
        assertEquals(20L * n, c.bytesSent());
        assertEquals(20, c.bytesReceived(), "one 1-byte answer per burst");
        assertEquals(20L * n, r.server().bytesReceived());
        assertEquals(20, r.bursts().size());
        // The burst's frames one after another at 1 Gbit/s, then the answer's 50 us back, plus the first
        // frame's 50 us there.
        long floor = wireNanos(n) + 100_000;
        assertTrue(c.latency().minUs() * 1000 >= floor - 100, c.latency().format() + " floor " + floor);
        long prevEnd = -1;
        for (int i = 0; i < 20; i++) {
            BurstApp.Burst b = r.bursts().get(i);
            assertEquals(i, b.index());
            assertEquals(n, b.bytes());
            assertEquals(r.starts().get(i), b.startNanos());
            assertTrue(b.completionNanos() >= floor, b + " floor " + floor);
            if (prevEnd >= 0) {
                assertEquals(prevEnd + compute, b.startNanos(), "the next burst starts after the compute time");
            }
            prevEnd = b.endNanos();
            assertEquals(0, b.retransmits());
        }
        assertEquals(r.bursts().getLast().endNanos() - r.bursts().getFirst().startNanos(), c.durationNanos());
        assertTrue(c.durationNanos() >= 20 * floor + 19 * compute);
        assertTrue(r.trace().lines().count() > 20 * (n / 1448 / 2), "trace rows per ACK");
    }

    @Test
    void sameSeedSameBurstsResultsAndTrace() {
        AppConfig cfg = AppConfig.defaults().withCount(10);
        BurstApp.Params p = BurstApp.Params.of(64 * 1024, 300_000_000L);
        Run a = run(2, 0.02, cfg, p);
        Run b = run(2, 0.02, cfg, p);
        assertTrue(a.dataDropped() > 0, "some data lost");
        assertEquals(a.client().withCpuNanos(0), b.client().withCpuNanos(0));
        assertEquals(a.server().withCpuNanos(0), b.server().withCpuNanos(0));
        assertEquals(a.bursts(), b.bursts());
        assertEquals(a.trace(), b.trace());
        // The observer's per-burst retransmissions and RTOs add up to the connection's.
        assertEquals(a.client().retransmits(), a.bursts().stream().mapToLong(BurstApp.Burst::retransmits).sum());
        assertEquals(a.client().timeouts(), a.bursts().stream().mapToLong(BurstApp.Burst::timeouts).sum());
        assertTrue(a.client().retransmits() > 0, a.client().format());
    }

    @Test
    void durationStopsBurstingAndBackToBackBurstsNeedNoTimer() {
        Run r = run(3, 0, AppConfig.defaults().withDurationNanos(5_000_000L), BurstApp.Params.of(16 * 1024, 0));
        AppResult c = r.client();
        long each = wireNanos(16 * 1024) + 100_000;
        assertTrue(c.operations() >= 5_000_000L / (each + 50_000) && c.operations() <= 5_000_000L / each + 1,
                c.format());
        assertTrue(c.durationNanos() >= 5_000_000L, "the burst in flight at the deadline completed");
        assertEquals(c.operations(), r.server().operations());
        for (int i = 1; i < r.bursts().size(); i++) {
            assertEquals(r.bursts().get(i - 1).endNanos(), r.bursts().get(i).startNanos());
        }
    }

    @Test
    void stopWhileComputingEndsAtOnce() {
        try (TcpPair pair = new TcpPair(4)) {
            pair.link(GBIT, 50_000);
            AppConfig cfg = AppConfig.defaults();
            BurstApp.Params p = BurstApp.Params.of(8 * 1024, 10_000_000L);
            BurstApp.Server srv = BurstApp.server(pair.server, cfg, p);
            BurstApp.Client cli = BurstApp.client(pair.client, TcpPair.SERVER, cfg, p);
            srv.start();
            cli.start();
            pair.net.run(25_000_000L);
            assertEquals(3, cli.bursts(), "bursts at 0.1, 10.3 and 20.5 ms");
            long stopAt = pair.now();
            cli.stop();
            assertTrue(pair.until(() -> cli.isDone() && srv.isDone(), LIMIT));
            assertEquals(3, cli.result().operations());
            assertEquals(stopAt - cli.result().startNanos(), cli.result().durationNanos());
            assertEquals(3, srv.result().operations());
        }
    }
}
