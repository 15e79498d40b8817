package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.tools.topology.file.TopologyException;
import java.util.List;

/** What the topology tests ask of a file they expect to be refused: every error, or the one error. */
final class TopologyErrors {
    private TopologyErrors() {}

    /** The errors {@code usnet run --check} would print for {@code yaml} (as file t.yaml), none when it is good. */
    static List<String> errors(String yaml) {
        try {
            TopologyFile.check("t.yaml", yaml, List.of(), List.of());
            return List.of();
        } catch (TopologyException e) {
            return e.errors();
        }
    }

    /** The single error for {@code yaml}; fails the test when there are none or several. */
    static String onlyError(String yaml) {
        List<String> e = errors(yaml);
        assertEquals(1, e.size(), "expected exactly one error, got " + e);
        return e.get(0);
    }
}
