package dev.usnet.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

class SpreadKeysTest {
    /**
     * The longest run of occupied slots after inserting {@code keys} into a table of {@code 1 << bits} slots where,
     * as in Netty's LongObjectHashMap, a key's home slot is {@code (int) (k ^ k >>> 32) & mask} and collisions probe
     * linearly: a lookup landing in a run may walk all of it.
     */
    private static int longestRun(long first, int count, int bits, LongUnaryOperator key) {
        int mask = (1 << bits) - 1;
        boolean[] used = new boolean[1 << bits];
        for (int i = 0; i < count; i++) {
            long k = key.applyAsLong(first + i);
            int slot = (int) (k ^ (k >>> 32)) & mask;
            while (used[slot]) {
                slot = (slot + 1) & mask;
            }
            used[slot] = true;
        }
        int longest = 0;
        int run = 0;
        for (int i = 0; i < 2 << bits; i++) {
            run = used[i & mask] ? run + 1 : 0;
            longest = Math.max(longest, Math.min(run, count));
        }
        return longest;
    }

    @Test
    void consecutiveMacsNoLongerFillOneRunOfSlots() {
        long firstMac = 0x02_00_00_10_00_00L;
        int unspread = longestRun(firstMac, 10_000, 15, k -> k);
        assertTrue(unspread > 9_000, "unspread: nearly every key in one run, " + unspread);
        int spread = longestRun(firstMac, 10_000, 15, SpreadKeys::spread);
        assertTrue(spread < 64, "longest run " + spread);
    }

    @Test
    void consecutiveAddressesAndPortsSpreadToo() {
        // A neighbour key: ifindex in the high half, consecutive IPv4 addresses in the low one.
        long first = (7L << 32) | 0xc612_0000L;
        assertTrue(longestRun(first, 1024, 11, SpreadKeys::spread) < 64);
        int mask = (1 << 15) - 1;
        boolean[] used = new boolean[mask + 1];
        int longestProbe = 0;
        for (int port = 32768; port < 32768 + 10_000; port++) {
            int slot = SpreadKeys.spread(port) & mask;
            int probe = 0;
            while (used[slot]) {
                slot = (slot + 1) & mask;
                probe++;
            }
            used[slot] = true;
            longestProbe = Math.max(longestProbe, probe);
        }
        assertTrue(longestProbe < 64, "longest probe " + longestProbe);
    }

    @Test
    void isABijectionSoNoTwoKeysCollide() {
        Set<Long> longs = new HashSet<>();
        Set<Integer> ints = new HashSet<>();
        for (long k = -50_000; k < 50_000; k++) {
            longs.add(SpreadKeys.spread(k));
            ints.add(SpreadKeys.spread((int) k));
        }
        assertEquals(100_000, longs.size());
        assertEquals(100_000, ints.size());
    }
}
