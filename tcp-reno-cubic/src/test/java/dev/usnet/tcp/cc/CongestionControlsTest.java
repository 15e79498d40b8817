package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CongestionControlsTest {

    @Test
    void renoAndCubicWithCubicTheDefault() {
        assertEquals(List.of("reno", "cubic"), CongestionControls.available());
        assertEquals("cubic", CongestionControls.DEFAULT);
        assertTrue(CongestionControls.available().contains(CongestionControls.DEFAULT));
        for (String n : CongestionControls.available()) {
            assertEquals(n, CongestionControls.create(n).name());
        }
        assertInstanceOf(Cubic.class, CongestionControls.create("cubic"));
        assertInstanceOf(Reno.class, CongestionControls.create("reno"));
    }

    @Test
    void everyConnectionGetsItsOwnState() {
        assertNotSame(CongestionControls.create("cubic"), CongestionControls.create("cubic"));
    }

    @Test
    void unknownNamesListWhatIsAvailable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CongestionControls.create("bbr"));
        assertEquals("congestion control 'bbr' is not available; available: reno cubic", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CongestionControls.create(null));
    }
}
