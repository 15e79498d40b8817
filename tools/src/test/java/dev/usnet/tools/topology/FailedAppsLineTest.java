package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.tools.run.RunCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The failed-apps line of the exit summary: one reason shared by many apps is said once. */
class FailedAppsLineTest {
    @Test
    void appsWithTheirOwnReasonsAreListedOneByOne() {
        assertEquals("a: no replies; b: reset by peer",
                RunCommand.failedByReason(List.of(Map.entry("a", "no replies"), Map.entry("b", "reset by peer"))));
    }

    @Test
    void aThousandAppsFailedTheSameWayMakeOneShortEntry() {
        List<Map.Entry<String, String>> failed = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            failed.add(Map.entry("c" + i, "connected but moved 0 bytes"));
        }
        failed.add(Map.entry("server", "no connection"));
        String line = RunCommand.failedByReason(failed);
        assertEquals("1000 apps: connected but moved 0 bytes (c0, c1, c2, c3, c4 and 995 more); server: no connection",
                line);
    }
}
