package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.Where;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What depends on an entry with an error is not judged again: which entries count as having one. */
class ProblemsTest {
    private static Where at(String file, String path) {
        return new Where(file, 3, path);
    }

    @Test
    void anErrorCountsForItsEntryAndEveryEntryAboveItInItsFileOnly() {
        Problems p = new Problems();
        p.add(at("a.yaml", "namespaces.c1.devices[0].addresses[1]"), "bad address");
        p.warn(at("a.yaml", "namespaces.c2"), "only a warning");
        for (String path : List.of("namespaces.c1.devices[0].addresses[1]", "namespaces.c1.devices[0].addresses",
                "namespaces.c1.devices[0]", "namespaces.c1.devices", "namespaces.c1", "namespaces")) {
            assertTrue(p.hasErrorAt(at("a.yaml", path)), path);
        }
        for (String path : List.of("namespaces.c1.devices[0].addresses[1].x", "namespaces.c1.devices[1]",
                "namespaces.c1.dev", "namespaces.c", "namespaces.c2", "name", "")) {
            assertFalse(p.hasErrorAt(at("a.yaml", path)), path);
        }
        assertFalse(p.hasErrorAt(at("b.yaml", "namespaces.c1")), "another file");
        assertEquals(1, p.errorCount());
        assertEquals(1, p.warnings().size());
    }

    @Test
    void aCommandLineErrorWithNoPathCountsForTheWholeFileOnlyAtTheTop() {
        Problems p = new Problems();
        p.add(at("", ""), "--set: no such knob");
        assertTrue(p.hasErrorAt(at("", "")));
        assertFalse(p.hasErrorAt(at("", "namespaces")));
        p.add(at("", ".x"), "odd");
        assertTrue(p.hasErrorAt(at("", "")));
        assertEquals(2, p.errorCount());
    }

    @Test
    void aHundredThousandErrorsAreEachFoundByTheirEntry() {
        Problems p = new Problems();
        for (int i = 0; i < 100_000; i++) {
            p.add(at("big.yaml", "namespaces.c" + i + ".devices[0].addresses[0]"), "address " + i + " out of range");
        }
        int found = 0;
        for (int i = 0; i < 100_000; i++) {
            found += p.hasErrorAt(at("big.yaml", "namespaces.c" + i + ".devices[0]")) ? 1 : 0;
        }
        assertEquals(100_000, found);
        assertEquals(100_000, p.errorCount());
    }

    @Test
    void problemsThatDifferOnlyInTheirNumbersOnOneLineAreSaidOnceWithHowManyMore() {
        Problems p = new Problems();
        for (int i = 256; i < 100_000; i++) {
            p.add(new Where("big.yaml", 13, "namespaces.c" + i + ".devices[0].addresses[0]"),
                    "expected an IPv4 address, got \"198.18." + i + ".1/24\"");
        }
        p.add(new Where("big.yaml", 13, "namespaces.c7.devices[0].mtu"), "mtu must be at least 68");
        p.add(new Where("big.yaml", 14, "namespaces.c7.devices[0].addresses[0]"), "expected an IPv4 address, got \"x\"");
        p.warn(new Where("big.yaml", 13, "namespaces.c9.devices[0]"), "address 9 is odd");
        p.warn(new Where("big.yaml", 13, "namespaces.c10.devices[0]"), "address 10 is odd");
        assertEquals(List.of("big.yaml:13: namespaces.c256.devices[0].addresses[0]: expected an IPv4 address, got"
                        + " \"198.18.256.1/24\" (and 99743 more like it from line 13, the last at"
                        + " namespaces.c99999.devices[0].addresses[0])",
                "big.yaml:13: namespaces.c7.devices[0].mtu: mtu must be at least 68",
                "big.yaml:14: namespaces.c7.devices[0].addresses[0]: expected an IPv4 address, got \"x\""), p.errors());
        assertEquals(List.of("big.yaml:13: namespaces.c9.devices[0]: warning: address 9 is odd (and 1 more like it from"
                + " line 13, the last at namespaces.c10.devices[0])"), p.warnings());
        // Every one still counts, and each entry is still known to have its error.
        assertEquals(99_746, p.errorCount());
        assertTrue(p.hasErrorAt(new Where("big.yaml", 13, "namespaces.c99999.devices[0]")));
    }
}
