package dev.usnet.core.neigh;

import static dev.usnet.core.util.SpreadKeys.spread;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import io.netty.util.collection.LongObjectHashMap;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The neighbour table's own hash keeps the iteration order the table had as a Netty LongObjectHashMap keyed by
 * {@code spread(ifindex << 32 | ipv4)} (flushes and teardown remove, and tell listeners, in that order), and keeps
 * 16-byte addresses apart that share their low 64 bits.
 */
class NeighHashTest {
    private static long v4Key(Neighbour n) {
        return spread(((long) n.ifindex << 32) | n.lo);
    }

    private static List<Neighbour> inMapOrder(LongObjectHashMap<Neighbour> m) {
        return new ArrayList<>(m.values());
    }

    @Test
    void iteratesIpv4EntriesInTheOrderOfTheMapItReplaces() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            Device[] devs = {net.wire(s, "a", 0x0200_0000_0001L).dutEnd, net.wire(s, "b", 0x0200_0000_0002L).dutEnd,
                net.wire(s, "c", 0x0200_0000_0003L).dutEnd};
            SplittableRandom rnd = new SplittableRandom(25);
            for (int round = 0; round < 20; round++) {
                NeighHash hash = new NeighHash();
                LongObjectHashMap<Neighbour> map = new LongObjectHashMap<>();
                List<Neighbour> live = new ArrayList<>();
                for (int op = 0; op < 3000; op++) {
                    if (live.isEmpty() || rnd.nextInt(100) < 55) {
                        Device d = devs[rnd.nextInt(devs.length)];
                        // Consecutive addresses of a few subnets, as a router sees them, and some anywhere.
                        int ip = rnd.nextBoolean() ? 0xc612_0000 + rnd.nextInt(512) : rnd.nextInt();
                        Neighbour n = new Neighbour(d, 4, 0, ip & 0xffff_ffffL);
                        if (map.containsKey(v4Key(n))) {
                            assertSame(map.get(v4Key(n)), hash.get(n.ifindex, 0, n.lo));
                            continue;
                        }
                        hash.add(n);
                        map.put(v4Key(n), n);
                        live.add(n);
                    } else {
                        Neighbour n = live.remove(rnd.nextInt(live.size()));
                        assertTrue(hash.remove(n));
                        assertSame(n, map.remove(v4Key(n)));
                        assertFalse(hash.remove(n), "a removed entry is not removed twice");
                    }
                    assertEquals(map.size(), hash.size());
                }
                assertEquals(inMapOrder(map), hash.entries(null), "round " + round);
                for (Neighbour n : live) {
                    assertSame(n, hash.get(n.ifindex, 0, n.lo));
                }
                // Emptied in the map's order, as close() and flush do.
                for (Neighbour n : hash.entries(null)) {
                    assertTrue(hash.remove(n));
                    map.remove(v4Key(n));
                    assertEquals(inMapOrder(map), hash.entries(null));
                }
                assertEquals(0, hash.size());
            }
        }
    }

    @Test
    void sixteenByteAddressesDifferingOnlyInTheirHighHalfStayApart() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            Device d = net.wire(s, "a", 0x0200_0000_0001L).dutEnd;
            NeighHash hash = new NeighHash();
            List<Neighbour> all = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                // 2001:db8:0:i::1, every one with the same low 64 bits.
                Neighbour n = new Neighbour(d, 16, 0x2001_0db8_0000_0000L | i, 1);
                hash.add(n);
                all.add(n);
            }
            assertEquals(200, hash.size());
            for (Neighbour n : all) {
                assertSame(n, hash.get(n.ifindex, n.hi, 1));
            }
            assertNull(hash.get(d.ifindex(), 0x2001_0db8_0000_0000L | 200, 1));
            assertNull(hash.get(d.ifindex(), 0, 1), "::1 is not one of them");
            for (int i = 0; i < 200; i += 2) {
                assertTrue(hash.remove(all.get(i)));
            }
            for (int i = 0; i < 200; i++) {
                Neighbour n = all.get(i);
                if (i % 2 == 0) {
                    assertNull(hash.get(n.ifindex, n.hi, n.lo));
                } else {
                    assertSame(n, hash.get(n.ifindex, n.hi, n.lo));
                }
            }
        }
    }
}
