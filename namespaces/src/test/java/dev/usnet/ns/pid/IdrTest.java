package dev.usnet.ns.pid;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.BitSet;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The id allocator under pid namespaces: cyclic allocation, reservation before publication, walks, against a reference. */
class IdrTest {
    @Test
    void idsComeCyclicallyFromTheCursorNotTheLowestFreed() {
        Idr<String> idr = new Idr<>();
        assertEquals(1, idr.allocCyclic(1, 100));
        assertEquals(2, idr.allocCyclic(1, 100));
        assertEquals(3, idr.allocCyclic(1, 100));
        idr.remove(2);
        assertEquals(4, idr.allocCyclic(1, 100), "a freed id is not handed out again before the cursor wraps");
        assertEquals(5, idr.cursor());
    }

    @Test
    void theCursorWrapsToStartWhenTheTopIsTaken() {
        Idr<String> idr = new Idr<>();
        for (int i = 1; i < 10; i++) {
            assertEquals(i, idr.allocCyclic(1, 10));
        }
        assertEquals(-1, idr.allocCyclic(1, 10), "1..9 are all taken: ENOSPC");
        idr.remove(4);
        idr.remove(7);
        assertEquals(4, idr.allocCyclic(1, 10), "wrapped: the lowest free from start");
        assertEquals(7, idr.allocCyclic(1, 10));
        assertEquals(-1, idr.allocCyclic(1, 10));
    }

    @Test
    void aReservedIdIsInvisibleUntilFilledIn() {
        Idr<String> idr = new Idr<>();
        int id = idr.allocCyclic(1, 1000);
        assertNull(idr.find(id));
        assertEquals(-1, idr.nextFilled(0));
        idr.replace(id, "pid");
        assertEquals("pid", idr.find(id));
        assertEquals(id, idr.nextFilled(0));
        assertEquals("pid", idr.remove(id));
        assertNull(idr.find(id));
    }

    @Test
    void findAndWalkCrossLeavesAndSkipFullOnes() {
        Idr<Integer> idr = new Idr<>();
        for (int i = 1; i < 5000; i++) {
            int id = idr.allocCyclic(1, 100_000);
            assertEquals(i, id);
            idr.replace(id, id);
        }
        for (int i = 1; i < 5000; i += 3) {
            idr.remove(i);
        }
        int seen = 0;
        for (int id = idr.nextFilled(1); id >= 0; id = idr.nextFilled(id + 1)) {
            assertEquals(1, id % 3 == 1 ? 0 : 1, "id " + id + " was removed");
            assertSame(idr.find(id), idr.find(id));
            assertEquals(id, idr.find(id));
            seen++;
        }
        assertEquals(4999 - 1667, seen);
        assertEquals(seen, idr.size());
    }

    /** The same allocate/free sequence through the Idr and through a plain BitSet search with the same rule. */
    @Test
    void randomAllocateAndFreeAgreesWithABitSetReference() {
        SplittableRandom rnd = new SplittableRandom(16);
        int start = 1;
        int end = 3000;
        Idr<Integer> idr = new Idr<>();
        BitSet ref = new BitSet();
        int refCursor = 0;
        for (int step = 0; step < 200_000; step++) {
            if (rnd.nextInt(100) < 55) {
                int from = Math.max(refCursor, start);
                int want = ref.nextClearBit(from);
                if (want >= end) {
                    want = from > start ? ref.nextClearBit(start) : end;
                }
                int expect = want < end ? want : -1;
                int got = idr.allocCyclic(start, end);
                assertEquals(expect, got, "step " + step);
                if (got >= 0) {
                    ref.set(got);
                    refCursor = got + 1;
                    idr.replace(got, got);
                }
            } else if (!ref.isEmpty()) {
                int victim = ref.nextSetBit(rnd.nextInt(end));
                if (victim < 0) {
                    victim = ref.nextSetBit(0);
                }
                ref.clear(victim);
                assertEquals(victim, idr.remove(victim));
            }
        }
        assertEquals(ref.cardinality(), idr.size());
        for (int i = 0; i < end; i++) {
            assertEquals(ref.get(i) ? Integer.valueOf(i) : null, idr.find(i));
        }
    }
}
