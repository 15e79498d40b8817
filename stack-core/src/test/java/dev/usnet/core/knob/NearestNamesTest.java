package dev.usnet.core.knob;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Hints for a name that is not there: the near misses, and a list of what exists that stays short. */
class NearestNamesTest {
    @Test
    void aFewNamesAreListedAll() {
        assertEquals("host, pa, pb", NearestNames.listing("sa0", List.of("host", "pa", "pb")));
    }

    @Test
    void manyNamesAreCountedWithTheFirstAndTheNearest() {
        List<String> names = new ArrayList<>(List.of("host", "pa", "pb"));
        for (int i = 0; i < 10_000; i++) {
            names.add("c" + i);
        }
        assertEquals("host, pa, pb, c0, c1, c2, c3, c4, c5, c6, c7, c8, ... (10003 in all; nearest to 'c12345': c1234,"
                + " c1235, c1245)", NearestNames.listing("c12345", names));
        assertEquals("host, pa, pb, c0, c1, c2, c3, c4, c5, c6, c7, c8, ... (10003 in all)",
                NearestNames.listing("something-else-entirely", names));
    }

    @Test
    void theNearestAreWithinAThirdOfTheName() {
        assertEquals(List.of("delay"), NearestNames.nearest("dealy", List.of("delay", "rate", "loss"), 3));
        assertEquals(List.of(), NearestNames.nearest("xyz", List.of("delay", "rate"), 3));
    }
}
