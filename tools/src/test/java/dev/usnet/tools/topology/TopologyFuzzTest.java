package dev.usnet.tools.topology;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.usnet.core.testing.LeakGuard;
import dev.usnet.tools.topology.file.TopologyException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The topology file reader and its checks ({@code usnet run --check}: YAML, references, command-line captures and
 * knobs, a build in virtual time) on arbitrary text: a topology is accepted, or refused with a
 * {@link TopologyException} whose every error names the file and a line of it; nothing else escapes, and checking
 * leaves no buffer allocated.
 */
class TopologyFuzzTest {
    private static final String FILE = "fuzz.yaml";

    @FuzzTest(maxDuration = "5m")
    void topology(byte[] data) {
        String text = new String(data, StandardCharsets.UTF_8);
        long lines = text.lines().count();
        long live = LeakGuard.liveBuffers();
        try {
            TopologyFile.check(FILE, text, List.of(), List.of());
        } catch (TopologyException e) {
            if (e.errors().isEmpty()) {
                throw new AssertionError("a refused topology must say why");
            }
            for (String err : e.errors()) {
                if (!err.startsWith(FILE + ":")) {
                    throw new AssertionError("an error must name the file: " + err);
                }
                String rest = err.substring(FILE.length() + 1);
                int colon = rest.indexOf(':');
                if (colon > 0 && rest.substring(0, colon).chars().allMatch(Character::isDigit)) {
                    long line = Long.parseLong(rest.substring(0, colon));
                    if (line < 1 || line > lines + 1) {
                        throw new AssertionError("an error names line " + line + " of a " + lines + "-line file: " + err);
                    }
                }
            }
        }
        if (LeakGuard.liveBuffers() != live) {
            throw new AssertionError((LeakGuard.liveBuffers() - live) + " buffer(s) left allocated by a check");
        }
    }
}
