package dev.usnet.tcp.app;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.TcpPair;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The MPI patterns' exchanges, and MPI jobs over TCP between two namespaces in virtual time. */
class MpiJobTest {
    private static final long LIMIT = 100_000_000_000L;

    @Test
    void cgOn128RanksIsNasClassBsEightBySixteenGridWithItsPartners() {
        MpiCgGrid g = new MpiCgGrid(128);
        assertEquals(8, g.nprows());
        assertEquals(16, g.npcols());
        assertEquals(4, g.l2npcols());
        assertEquals(8 * 4688, g.defaultVectorBytes(), "na / npcols = 75000 / 16 doubles, rounded up");
        // Rank 21 is row 1, column 5: its row partners differ in column by 8, 4, 2, 1.
        assertEquals(16 + 13, g.reducePartner(21, 1));
        assertEquals(16 + 1, g.reducePartner(21, 2));
        assertEquals(16 + 7, g.reducePartner(21, 3));
        assertEquals(16 + 4, g.reducePartner(21, 4));
        int diagonal = 0;
        for (int me = 0; me < 128; me++) {
            for (int i = 1; i <= 4; i++) {
                int p = g.reducePartner(me, i);
                assertEquals(me / 16, p / 16, "a row partner is in the same row");
                assertEquals(me, g.reducePartner(p, i), "row partners are mutual");
            }
            int t = g.transposePartner(me);
            assertEquals(me, g.transposePartner(t), "transpose partners are mutual");
            diagonal += t == me ? 1 : 0;
        }
        assertEquals(16, diagonal, "8 diagonal pairs of columns exchange nothing in the transpose");
    }

    @Test
    void cgIterationOnFourRanksExchangesWithTheRowPartnerTheTransposeAndTwoDotProducts() {
        // 2 x 2: rank 1 (row 0, column 1) reduces with rank 0 and transposes with rank 2 (row 1, column 0).
        MpiStep[] s = MpiPattern.CG.steps(1, 4, 1000);
        List<MpiStep> expected = List.of(MpiStep.COMPUTE, MpiStep.exchange(0, 1000), MpiStep.exchange(2, 1000),
                MpiStep.COMPUTE, MpiStep.exchange(0, 8), MpiStep.COMPUTE, MpiStep.exchange(0, 8));
        assertEquals(expected, List.of(s));
        // Rank 0 is on the diagonal: no transpose.
        assertEquals(List.of(MpiStep.COMPUTE, MpiStep.exchange(1, 1000), MpiStep.COMPUTE, MpiStep.exchange(1, 8),
                MpiStep.COMPUTE, MpiStep.exchange(1, 8)), List.of(MpiPattern.CG.steps(0, 4, 1000)));
        assertEquals(4 * 1000 + 2 * 1000 + 4 * 2 * 8, MpiPattern.CG.bytesPerIteration(4, 1000));
    }

    @Test
    void cgOn128RanksMovesAboutOneGigabyteIn43Iterations() {
        long perIteration = MpiPattern.CG.bytesPerIteration(128, MpiPattern.CG.defaultSize(128));
        // 128 ranks x 4 row steps + 112 transposes of 37504 bytes, 128 x 2 x 4 dot-product doubles.
        assertEquals((128L * 4 + 112) * 37504 + 128 * 2 * 4 * 8, perIteration);
        assertEquals(1_006_659_584L, 43 * perIteration);
    }

    @Test
    void alltoallAndRingSendToEveryoneAndToTheNextRank() {
        MpiStep[] a = MpiPattern.ALLTOALL.steps(1, 4, 10);
        assertEquals(List.of(MpiStep.COMPUTE, new MpiStep(2, 10, 0, 10), new MpiStep(3, 10, 3, 10),
                new MpiStep(0, 10, 2, 10)), List.of(a));
        assertEquals(List.of(MpiStep.COMPUTE, new MpiStep(0, 10, 2, 10)), List.of(MpiPattern.RING.steps(3, 4, 10)));
        assertEquals(4 * 3 * 10, MpiPattern.ALLTOALL.bytesPerIteration(4, 10));
        assertThrows(IllegalArgumentException.class, () -> MpiPattern.CG.check(6));
        assertThrows(IllegalArgumentException.class, () -> MpiPattern.RING.check(1));
    }

    private static MpiResult run(long seed, MpiPattern p, int size, int iterations, boolean localTcp, double loss) {
        try (TcpPair pair = new TcpPair(seed)) {
            pair.link(1_000_000_000L, 50_000);
            pair.toServer.loss = loss;
            List<MpiJob.Placement> ranks = new ArrayList<>();
            for (int r = 0; r < 4; r++) {
                ranks.add(r < 2 ? new MpiJob.Placement(pair.client, TcpPair.CLIENT)
                        : new MpiJob.Placement(pair.server, TcpPair.SERVER));
            }
            MpiJob job = new MpiJob(ranks, new MpiJob.Config(p, size, iterations, 100_000, localTcp, 7000, "cubic", 0, 0));
            job.start();
            assertTrue(pair.until(job::isDone, LIMIT), job.where(0));
            pair.until(() -> false, pair.now() + 10_000_000L);
            MpiResult r = job.result();
            assertEquals(job.plannedBytes(), r.bytesSent(), r.format(null));
            return r;
        }
    }

    @Test
    void aCgJobOnTwoHostsCompletesWithEveryPlannedByteAndOnlyTheTransposeOnTcp() {
        MpiResult r = run(1, MpiPattern.CG, 20_000, 5, false, 0);
        assertTrue(r.completed(), r.failure());
        assertEquals("", r.failure());
        assertEquals(1, r.connections(), "only ranks 1 and 2 are on different hosts");
        assertEquals(5 * (6 * 20_000 + 64), r.bytesSent());
        assertEquals(5 * (4 * 20_000 + 64), r.shmBytes(), "row reductions and dot products stay on each host");
        assertEquals(20, r.histogram().getTotalCount(), "4 ranks x 5 iterations");
        // Each iteration has three 100 us compute phases and a 50 us one-way link: it cannot be faster.
        assertTrue(r.iteration().minUs() >= 300, r.iteration().format());
        assertTrue(r.completionNanos() >= 5 * 400_000L, r.format(null));
        assertTrue(r.mbPerSecond() > 0);
        assertEquals(1, r.perConnection().size());
        assertEquals(1, r.perConnection().getFirst().a());
        assertEquals(2, r.perConnection().getFirst().b());
    }

    @Test
    void withLocalTcpRanksOfOneHostConnectOverItsOwnAddress() {
        MpiResult r = run(1, MpiPattern.CG, 20_000, 3, true, 0);
        assertTrue(r.completed(), r.failure());
        assertEquals(3, r.connections(), "0-1 and 2-3 on their hosts, 1-2 across");
        assertEquals(0, r.shmBytes());
    }

    @Test
    void alltoallAndRingJobsComplete() {
        MpiResult a = run(1, MpiPattern.ALLTOALL, 50_000, 4, false, 0);
        assertTrue(a.completed(), a.failure());
        assertEquals(4, a.connections(), "every cross-host pair: 0-2 0-3 1-2 1-3");
        assertEquals(4 * 4 * 3 * 50_000L, a.bytesSent());
        MpiResult ring = run(1, MpiPattern.RING, 50_000, 4, false, 0);
        assertTrue(ring.completed(), ring.failure());
        assertEquals(2, ring.connections(), "1-2 and 3-0");
    }

    @Test
    void lossesAreCountedPerConnectionWithTheCwndAtEachAndTheSameSeedGivesTheSameResult() {
        MpiResult a = run(3, MpiPattern.ALLTOALL, 100_000, 3, false, 0.02);
        MpiResult b = run(3, MpiPattern.ALLTOALL, 100_000, 3, false, 0.02);
        assertTrue(a.completed(), a.failure());
        assertTrue(a.retransmits() > 0, a.format(null));
        long losses = 0;
        for (MpiResult.Connection c : a.perConnection()) {
            losses += c.recoveryCwnds().length + c.rtoCwnds().length;
            for (long w : c.recoveryCwnds()) {
                assertTrue(w >= 1, "a cwnd");
            }
        }
        assertTrue(losses > 0, "2% loss toward the server makes loss episodes");
        assertEquals(a.completionNanos(), b.completionNanos());
        assertEquals(a.retransmits(), b.retransmits());
        assertEquals(a.timeouts(), b.timeouts());
        assertEquals(a.iteration(), b.iteration());
        for (int i = 0; i < a.perConnection().size(); i++) {
            assertArrayEquals(a.perConnection().get(i).recoveryCwnds(), b.perConnection().get(i).recoveryCwnds());
            assertArrayEquals(a.perConnection().get(i).rtoCwnds(), b.perConnection().get(i).rtoCwnds());
        }
    }
}
