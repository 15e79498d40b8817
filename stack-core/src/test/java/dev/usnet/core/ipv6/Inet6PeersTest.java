package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class Inet6PeersTest {
    private static final int HZ = 250;

    @Test
    void aPeerSpendsItsBurstThenOneTokenPerTimeout() {
        Inet6Peers p = new Inet6Peers();
        long timeout = HZ; // one message a second
        for (int i = 0; i < 6; i++) {
            assertTrue(p.allow(1, 2, 1000, HZ, timeout), "burst message " + i);
        }
        assertFalse(p.allow(1, 2, 1000, HZ, timeout), "the seventh at once is refused");
        assertTrue(p.allow(1, 2, 1000 + timeout, HZ, timeout), "a timeout later one more goes");
        assertTrue(p.allow(3, 4, 1000, HZ, timeout), "another peer has its own bucket");
    }

    @Test
    void errorsToEverNewPeersDoNotGrowTheTableWithoutEnd() {
        Inet6Peers p = new Inet6Peers();
        for (long i = 0; i < 3L * Inet6Peers.PEERS; i++) {
            assertTrue(p.allow(0x2001_0db8_0000_0000L, i, 1000, HZ, HZ), "a new peer starts with a full bucket");
        }
        assertEquals(Inet6Peers.PEERS, p.size());
    }

    @Test
    void theLeastRecentlyUsedPeerIsForgottenFirst() {
        Inet6Peers p = new Inet6Peers();
        long timeout = HZ;
        for (int i = 0; i < 6; i++) {
            p.allow(7, 7, 1000, HZ, timeout);
        }
        assertFalse(p.allow(7, 7, 1000, HZ, timeout), "peer 7 has spent its burst");
        for (long i = 0; i < Inet6Peers.PEERS - 1; i++) {
            p.allow(0, 100 + i, 1000, HZ, timeout);
        }
        assertFalse(p.allow(7, 7, 1000, HZ, timeout), "recently used: still remembered, still empty");
        for (long i = 0; i < Inet6Peers.PEERS; i++) {
            p.allow(0, 100_000 + i, 1000, HZ, timeout);
        }
        assertTrue(p.allow(7, 7, 1000, HZ, timeout), "forgotten, it starts again with a full bucket");
    }
}
