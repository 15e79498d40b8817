package dev.usnet.core.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A namespace's MIB and drop counters, made by their first count: every count from every thread lands, what was
 * never counted reads 0, and the snapshots list only what is not.
 */
class CountersTest {
    @Test
    void nothingCountedReadsZero() {
        MibCounters mib = new MibCounters();
        DropCounters drops = new DropCounters();
        for (Mib m : Mib.values()) {
            assertEquals(0, mib.get(m));
        }
        assertEquals(0, drops.total());
        assertEquals(Map.of(), mib.snapshot());
        assertEquals(Map.of(), drops.snapshot());
    }

    @Test
    void countsFromManyThreadsAllLandAcrossGroupsMadeOnTheWay() throws InterruptedException {
        MibCounters mib = new MibCounters();
        DropCounters drops = new DropCounters();
        Mib[] all = Mib.values();
        DropReason[] reasons = DropReason.values();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                for (int i = 0; i < 20_000; i++) {
                    mib.inc(all[i % all.length]);
                    mib.add(Mib.ArpInRequests, 2);
                    drops.count(reasons[i % reasons.length]);
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        long total = 0;
        for (Mib m : all) {
            total += mib.get(m);
        }
        assertEquals(4 * 20_000 + 4 * 20_000 * 2, total);
        assertEquals(4L * (20_000 / all.length + (Mib.ArpInRequests.ordinal() < 20_000 % all.length ? 1 : 0))
                + 4 * 20_000 * 2, mib.get(Mib.ArpInRequests));
        assertEquals(4 * 20_000, drops.total());
        assertEquals(all.length, mib.snapshot().size());
        assertEquals(reasons.length, drops.snapshot().size());
    }
}
