package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.run.RunCommand;
import dev.usnet.tools.topology.RunCommandTest.Result;
import org.junit.jupiter.api.Test;

/** What usnet run says about itself agrees with what it does. */
class RunCommandWordsTest {
    @Test
    void theWarmUpSaysTheSameTotalBeforeAndAfter() {
        // --warm-up-frames 10000 sends 10000 through the bridge and 10000 through the router.
        assertEquals("usnet: warming up the data path (20000 frames: 10000 through a bridge, 10000 through a router;"
                + " SIGINT or SIGTERM stops it)", RunCommand.warmingUpLine(10_000));
        assertEquals("usnet: data path warmed up (20000 frames through a bridge and a router, 0 lost, 2100 ms)",
                RunCommand.warmedUpLine(20_000, 0, 2_100_000_000L));
    }

    @Test
    void theCaptureUsageSaysItsSuffixIsTheDirection() {
        Result r = RunCommandTest.run("run", "--help");
        assertTrue(r.out().contains("--capture=NS/DEV[:in|out|inout]=FILE") || r.out().contains("--capture NS/DEV[:in|out|inout]=FILE"),
                r.out());
        assertFalse(r.out().contains("[:DIR]"), r.out());
    }
}
